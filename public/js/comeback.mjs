// Where a page was when its session ended (the invite rotated, the session expired, or it
// was never signed in), and what was typed there that the room never got: kept in this
// browser until the person is signed in again — from this tab or another, such as the
// invite link's page — for a day at most, then taken back to.
import { SET_ASIDE_KEY, SIGNED_IN_KEY, SIGNED_OUT_KEY, countSignIn, countSignOut, setAside } from "./session.mjs";
import { CLOSED_TABS_KEY, KEPT_FOR, renameClosedTabs, thisTab } from "./tabtyping.mjs";
import { holds } from "./textmerge.mjs";

const KEY = "standups.afterSignIn";

function read(storage) {
  try {
    const kept = JSON.parse(storage.getItem(KEY) ?? "null");
    return kept && Date.now() - kept.at < KEPT_FOR ? kept : null;
  } catch {
    return null;
  }
}

/** The typing kept, of every tab (`typing`: one, as kept before there could be several). */
function typingsOf(kept) {
  const typings = kept?.typings ?? (kept?.typing ? [{ ...kept.typing, at: kept.at }] : []);
  return typings.filter((typing) => Date.now() - (typing.at ?? 0) < KEPT_FOR);
}

const sameRoom = (a, b) => a.room === b.room && a.by === b.by && (a.tab ?? "") === (b.tab ?? "");

/**
 * Keeps the page's address (`hash`) and `typing`, `{ room, unsent, note, by }` (an edit
 * form's fields as `sayUnsentTyping` takes them, a note, the name it was typed under), if
 * any, beside what other tabs kept: a renewed invite ends every tab's session at once, and
 * each keeps its own (one for the same room and person takes the place of the one before).
 * Typing kept before and not yet taken stays when there is none now: a page asked to sign
 * in twice keeps it. Returns what is kept for this page (`typing`: its room's). After a
 * sign-out in this browser (another tab's session ends with it), nothing is kept: null.
 */
export function keepForSignIn(hash, typing = null, storage = localStorage, now = Date.now(), tab = thisTab()) {
  if (storage.getItem(SIGNED_OUT_KEY)) return null;
  const typed = typing && (typing.unsent.length > 0 || typing.note || typing.late) ? { ...typing, at: now, tab } : null;
  const before = typingsOf(read(storage));
  const typings = typed ? [...before.filter((other) => !sameRoom(other, typed)), typed] : before;
  storage.setItem(KEY, JSON.stringify({ hash, at: now, typings }));
  const room = typing?.room ?? hash.match(/^#\/rooms\/([^/?#]+)/)?.[1].toUpperCase();
  const mine = typed ?? typings.find((other) => other.room === room && other.tab === tab && (!typing || other.by === typing.by))
    ?? typings.find((other) => other.room === room && (!typing || other.by === typing.by));
  return { hash, at: now, typing: mine ? withoutTime(mine) : null };
}

function withoutTime({ at, tab, ...typing }) {
  return typing;
}

/** Where the invite link's page goes once signed in: the page that asked, else the lobby. */
export function addressAfterSignIn(storage = localStorage) {
  const hash = read(storage)?.hash ?? "";
  return hash.startsWith("#/") ? `/${hash}` : "/";
}

/** Someone renamed themselves (`from` → `to`): what the browser keeps of their typing, for
 * after a sign-in and from closed tabs, is theirs under the new name (it is taken by name). */
export function renamed(from, to, storage = localStorage) {
  const kept = read(storage);
  if (kept?.typings) {
    const typings = kept.typings.map((typing) => (typing.by === from ? { ...typing, by: to } : typing));
    storage.setItem(KEY, JSON.stringify({ ...kept, typings }));
  }
  renameClosedTabs(from, to, storage);
}

/** The typing kept for `room`, once (the next to ask gets null), if it was typed under the
 * name now signed in (`name`): another person signing in at this browser does not get it. */
export function takeTyping(room, name, storage = localStorage, tab = thisTab()) {
  const kept = read(storage);
  const typings = typingsOf(kept);
  // NB: this tab's own first; another tab's (one closed since) if this tab kept none.
  const taken = typings.find((typing) => sameRoom(typing, { room, by: name, tab }))
    ?? typings.find((typing) => typing.room === room && typing.by === name);
  if (!taken) return null;
  const { typing: _, ...rest } = kept;
  storage.setItem(KEY, JSON.stringify({ ...rest, typings: typings.filter((typing) => typing !== taken) }));
  return withoutTime(taken);
}

/** Signed out on purpose: nothing typed stays behind in this browser for the next person,
 * nor is kept by another tab whose session ends with it. */
export function forgetKept(storage = localStorage) {
  // NB: set aside, not dropped, until the server has answered (`signOutDone`): a sign-out
  // that fails (`signOutFailed`) puts it back.
  const aside = setAside(storage);
  for (const key of [KEY, CLOSED_TABS_KEY]) {
    aside[key] = storage.getItem(key) ?? aside[key] ?? null;
    storage.removeItem(key);
  }
  storage.setItem(SET_ASIDE_KEY, JSON.stringify(aside));
  storage.setItem(SIGNED_OUT_KEY, "1");
  return null;
}


/** The server ended the session: what the sign-out set aside goes for good, and the count of
 * sign-outs goes up (`forgetIfAnotherSince`). Only then: a sign-out that fails counts none. */
export function signOutDone(storage = localStorage) {
  storage.removeItem(SET_ASIDE_KEY);
  countSignOut(storage);
}

/** A sign-out failed (the server could not be reached): what it marked is taken back. */
export function signOutFailed(storage = localStorage) {
  const aside = setAside(storage);
  for (const key of [KEY, CLOSED_TABS_KEY]) {
    // NB: what was kept since (a tab whose session ended meanwhile) stays.
    if (typeof aside[key] === "string" && storage.getItem(key) === null) storage.setItem(key, aside[key]);
  }
  storage.removeItem(SET_ASIDE_KEY);
  storage.removeItem(SIGNED_OUT_KEY);
}

/** Signed in under `name` (the invite link's page): counted, with the name (a tab whose typing
 * was another person's lets it go, `forgetIfAnotherSince`); then the tabs asking to sign in go
 * back to where they were. */
export function signedIn(name, storage = localStorage, now = Date.now()) {
  // NB: a sign-out whose answer was never heard (its page closed as it went) is counted now.
  if (storage.getItem(SIGNED_OUT_KEY) && storage.getItem(SET_ASIDE_KEY)) countSignOut(storage);
  storage.removeItem(SIGNED_OUT_KEY);
  storage.removeItem(SET_ASIDE_KEY);
  countSignIn(storage, name);
  storage.setItem(SIGNED_IN_KEY, String(now));
}

/** Where a tab keeps the edit form's typing of a room it left (or was put away from) that the
 * room had not answered — never sent (offline, over a limit), or sent and its answer not
 * heard (a connection may look open and be gone): until that room is open in the tab again. */
export const leftKey = (room) => `standups.left.${room}`;

/** Keeps the edit form's typing in `typing` (`typingToKeep`) that its room had not answered,
 * for the next time the room is open in this tab; none, and none kept before, if there is none. */
export function keepLeftTyping(typing, storage = sessionStorage) {
  if (!typing?.room) return;
  // NB: left with everything answered: what an earlier leaving kept is over too.
  if (!typing.unsent?.length) storage.removeItem(leftKey(typing.room));
  else storage.setItem(leftKey(typing.room), JSON.stringify(typing.unsent));
}

/**
 * Of the edit form's typing kept when this tab left a room (`unsent`, its fields as
 * `sayUnsentTyping` takes them), what the room does not hold now (`state`, as the page finds
 * it on its return): typing that reached the draft, or the standup once saved, is not offered
 * again. An attendee's name counts as held by that attendee; a new attendee's, by anyone's.
 */
export function whatTheRoomLacks(unsent, state) {
  const holders = [state?.destination?.edit?.draft, state?.standup].filter(Boolean);
  const has = (standup, { path, base, value }) => {
    if (path === "/attendees/new/name") return standup.attendees.some(({ name }) => name === value);
    const text = textAt(standup, path);
    // NB: held too when others typed on since: the room's text has the change in it.
    return text !== undefined && holds(base ?? "", value, text);
  };
  return (unsent ?? []).filter((typing) => !holders.some((standup) => has(standup, typing)));
}

/** The text `typing` goes onto `draft` from: the draft's text it was typed on (`shadow`) when
 * the draft holds that (a Cancel undone brought it back, with part of the typing in it), else
 * the text it names as its base (the saved one): its change is then not made twice. */
export function builtOn(typing, draft) {
  const { path, base, shadow } = typing;
  if (shadow === undefined) return base;
  const text = textAt(draft, path);
  return text !== undefined && holds(base ?? "", shadow, text) ? shadow : base;
}

/** A text field's text in `standup` (a draft, or the saved one) by its path (`/title`,
 * `/attendees/{id}/name`); undefined for an attendee it has not. */
export function textAt(standup, path) {
  const attendee = /^\/attendees\/([^/]+)\/name$/.exec(path)?.[1];
  return attendee ? standup.attendees.find(({ id }) => id === attendee)?.name
    : path === "/title" ? standup.title : undefined;
}

/** The typing kept when this tab left `room`, once (the next to ask gets null). */
export function takeLeftTyping(room, storage = sessionStorage) {
  const key = leftKey(room);
  try {
    const unsent = JSON.parse(storage.getItem(key) ?? "null");
    return Array.isArray(unsent) && unsent.length ? unsent : null;
  } catch {
    return null;
  } finally {
    storage.removeItem(key);
  }
}
