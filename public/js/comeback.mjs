// Where a page was when its session ended (the invite rotated, the session expired, or it
// was never signed in), and what was typed there that the room never got: kept in this
// browser until the person is signed in again — from this tab or another, such as the
// invite link's page — for a day at most, then taken back to.
import { holds } from "./textmerge.mjs";
import { keptInTab } from "./typed.mjs";

const KEY = "standups.afterSignIn";
/** Set by whichever tab signs in: the others showing the sign-in page go back too. */
export const SIGNED_IN_KEY = "standups.signedInAt";
/** Set by a sign-out, until the next sign-in: nothing is kept for whoever comes next. */
const SIGNED_OUT_KEY = "standups.signedOut";
const KEPT_FOR = 24 * 60 * 60 * 1000;

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

/** This page, as told apart from the others (two tabs may be in one room). Per page load,
 * not kept in `sessionStorage`: a duplicated tab has a copy of that. (A page reloaded since
 * takes another tab's typing for its room, if it kept none of its own.) */
const THIS_TAB = Math.random().toString(36).slice(2);
const thisTab = () => THIS_TAB;

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

/** Where a sign-out on its way keeps what it takes away (`forgetKept`) until it is done. */
const SET_ASIDE_KEY = "standups.signingOut";

function setAside(storage) {
  try {
    const aside = JSON.parse(storage.getItem(SET_ASIDE_KEY) ?? "{}");
    return aside && typeof aside === "object" ? aside : {};
  } catch {
    return {}; // not a record this page wrote
  }
}

/** The server ended the session: what the sign-out set aside goes for good, and the count of
 * sign-outs goes up (`forgetIfSignedOutSince`). Only then: a sign-out that fails counts none. */
export function signOutDone(storage = localStorage) {
  storage.removeItem(SET_ASIDE_KEY);
  storage.setItem(SIGN_OUTS_KEY, String(signOuts(storage) + 1));
}

/** How many sign-outs this browser has seen: a tab away during one (another page, the
 * back/forward cache) heard nothing of it, and learns of it from the count. */
const SIGN_OUTS_KEY = "standups.signOuts";
/** The count a tab last saw (`sessionStorage`). */
const SIGN_OUTS_SEEN_KEY = "standups.signOutsSeen";
const signOuts = (storage) => Number.parseInt(storage.getItem(SIGN_OUTS_KEY) ?? "0", 10) || 0;

/**
 * A screen begins: if the browser was signed out since this tab last looked (it was away, and
 * heard nothing), what the tab keeps typed goes, as every other tab's did — it is not shown to
 * whoever signed in next. Returns whether it held any.
 */
export function forgetIfSignedOutSince(tab = sessionStorage, kept = localStorage) {
  const count = String(signOuts(kept));
  const seen = tab.getItem(SIGN_OUTS_SEEN_KEY);
  tab.setItem(SIGN_OUTS_SEEN_KEY, count);
  if (seen === null || seen === count) return false;
  const held = keyGroups(tab).size > 0;
  for (const key of Object.keys(tab)) {
    if (isTypingKey(key)) tab.removeItem(key);
  }
  return held;
}

/** Where the typing of tabs closed (or put away) is kept for the next tab (`keepTabTyping`),
 * and which of it another tab took (for the tab it was kept from, should it come back). */
const CLOSED_TABS_KEY = "standups.closedTabs";

/** The name this browser signed in under (`join.mjs`): whose a closed tab's typing is. */
const NAME_KEY = "standups.name";

/** Where a tab keeps its name among the browser's tabs: a reload, or a page it goes back to, is
 * the same tab. */
const TAB_KEY = "standups.tab";

/** The keys a tab keeps its typing under (`sessionStorage`), in groups that go together: a
 * room's meeting note (its text, the notes ahead of it, the meeting it is for), its late notes,
 * its edit form's typing left behind, a discarded meeting's note; the new-standup form's. */
const TYPING_GROUPS = {
  note: /^standups\.(?:note|notesAhead|noteFor)\.(.+)$/, late: /^standups\.lateNote\.(.+)$/,
  left: /^standups\.left\.(.+)$/, discarded: /^standups\.discarded\.(.+)$/, newStandup: /^standups\.newStandup()$/,
};
const isTypingKey = (key) => Object.values(TYPING_GROUPS).some((pattern) => pattern.test(key));

/** Groups as `takeClosedTabs` names them: a room's meeting note's, any of a room's, the lobby's. */
export const noteGroup = (room) => `note:${room}`;
export const isRoomGroup = (id, room) => id.endsWith(`:${room}`) && id !== NEW_STANDUP_GROUP;
export const NEW_STANDUP_GROUP = "newStandup:";

/** Whether a group holds typing. A meeting note's holds it only with its text: which meeting it
 * is for, and the notes sent ahead of it, stay in a tab after a note is sent or erased. */
const holdsTyping = (id, entries) => Object.entries(entries ?? {}).some(([key, value]) =>
  typeof value === "string" && value.trim() && (!id.startsWith("note:") || key.startsWith("standups.note.")));

/** `storage`'s keys of typing, by group (`"note:<room>"`: a room's meeting note): their values. */
function keyGroups(storage) {
  const groups = new Map();
  for (const key of Object.keys(storage)) {
    const group = Object.entries(TYPING_GROUPS).find(([, pattern]) => pattern.test(key));
    if (!group) continue;
    const id = `${group[0]}:${group[1].exec(key)[1]}`;
    groups.set(id, { ...groups.get(id), [key]: storage.getItem(key) });
  }
  return groups;
}

/** `storage`'s typing, by group: those of `keyGroups` that hold some. */
function typingGroups(storage) {
  return new Map([...keyGroups(storage)].filter(([id, entries]) => holdsTyping(id, entries)));
}

/** A group's typing as a short fingerprint (FNV-1a of its keys and values): what another tab
 * took is known again by it, without the browser keeping a copy of the text. */
function digest(entries) {
  const text = JSON.stringify(Object.entries(entries ?? {}).sort());
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  }
  return `${(hash >>> 0).toString(16)}:${text.length}`;
}

function tabName(tab) {
  let name = tab.getItem(TAB_KEY);
  if (!name) {
    name = Math.random().toString(36).slice(2);
    tab.setItem(TAB_KEY, name);
  }
  return name;
}

/** What tabs closed kept (`tabs`: `{ tab, load, by, at, groups }`), and what other tabs took of it
 * (`taken`: `{ from, at, id, digest }`), for a day at most. */
function closedTabs(storage, now) {
  let kept = null;
  try {
    kept = JSON.parse(storage.getItem(CLOSED_TABS_KEY) ?? "null");
  } catch {
    // not a record this page wrote
  }
  const fresh = (list) => (Array.isArray(list) ? list : []).filter((item) => now - item?.at < KEPT_FOR);
  return {
    tabs: fresh(kept?.tabs).filter(({ groups }) => groups && typeof groups === "object"),
    taken: fresh(kept?.taken).filter(({ id, digest }) => typeof id === "string" && typeof digest === "string"),
  };
}

function keepClosedTabs(storage, { tabs, taken }) {
  if (tabs.length || taken.length) storage.setItem(CLOSED_TABS_KEY, JSON.stringify({ tabs, taken }));
  else storage.removeItem(CLOSED_TABS_KEY);
}

/**
 * The page goes (its tab closed, reloaded, or put away): what its tab keeps typed (`tab`,
 * `sessionStorage`: a note half typed, a late note, a form's typing no room got) is copied
 * into the browser's storage (`kept`), for the next screen of any tab (`takeClosedTabs`) — a
 * tab's own storage goes with it. Not after a sign-out: nothing is kept for the next person.
 */
export function keepTabTyping(tab = sessionStorage, kept = localStorage, now = Date.now(), load = thisTab()) {
  if (kept.getItem(SIGNED_OUT_KEY)) return;
  const name = tabName(tab);
  const groups = Object.fromEntries(typingGroups(tab));
  const closed = closedTabs(kept, now);
  // NB: one record a page, by the tab's name and the page's load: a copy of a tab ("Duplicate")
  // has the tab's name too, and takes nothing else's place.
  closed.tabs = closed.tabs.filter((other) => other.tab !== name || other.load !== load);
  if (Object.keys(groups).length) closed.tabs.push({ tab: name, load, by: kept.getItem(NAME_KEY), at: now, groups });
  keepClosedTabs(kept, closed);
}

/**
 * A screen begins: what tabs that went kept (`keepTabTyping`) for the screen (`wanted`, by
 * group: its room's, or the lobby's new standup) comes into this tab, a group at a time, where
 * the tab has none of its own; the page then offers it as after a reload. A group the tab holds
 * the same is its own (kept as it went, and back): it goes, whatever the screen. One the tab
 * holds otherwise (two tabs typed in one room) waits for another tab, as does what is for
 * another screen. And typing of this tab's that another took while this page was away (gone to
 * another page, and back) goes on there: it leaves this tab, so that it is in one tab only.
 * Returns the groups taken (`taken`, as `"note:<room>"` for a room's meeting note), and those gone
 * (`gone`: `{ id, entries }`, their keys and values).
 */
export function takeClosedTabs(tab = sessionStorage, kept = localStorage, now = Date.now(), wanted = () => true, load = thisTab()) {
  const name = tabName(tab);
  const mine = typingGroups(tab);
  const closed = closedTabs(kept, now);
  const gone = [];
  for (const { from, id, digest: taken } of closed.taken) {
    const here = mine.get(id);
    if (from !== name || !here || digest(here) !== taken) continue;
    for (const key of Object.keys(here)) tab.removeItem(key);
    mine.delete(id);
    gone.push({ id, entries: here });
  }
  const taken = [];
  const tabs = [];
  const keys = keyGroups(tab);
  for (const other of closed.tabs) {
    // NB: this page's own, kept as it was put away and shown again: the page has it all.
    if (other.tab === name && other.load === load) continue;
    const left = {};
    for (const [id, entries] of Object.entries(other.groups)) {
      if (!holdsTyping(id, entries)) continue;
      const here = mine.get(id);
      if (here && digest(here) === digest(entries)) continue;
      if (here || !wanted(id)) {
        left[id] = entries;
        continue;
      }
      // NB: what the tab kept of the group without typing in it (which meeting its last note
      // was for) goes with the rest; and only keys of typing come, whatever the record holds.
      for (const key of Object.keys(keys.get(id) ?? {})) tab.removeItem(key);
      for (const [key, value] of Object.entries(entries)) {
        if (typeof value === "string" && isTypingKey(key)) tab.setItem(key, value);
      }
      mine.set(id, entries);
      taken.push(id);
      if (other.tab !== name) closed.taken.push({ from: other.tab, at: now, id, digest: digest(entries) });
    }
    if (Object.keys(left).length) tabs.push({ ...other, groups: left });
  }
  keepClosedTabs(kept, { tabs, taken: closed.taken.filter(({ from }) => from !== name) });
  return { taken, gone };
}

/** What tabs closed kept and no tab has taken yet, as lines (`keptInTab`'s). */
export function typedInClosedTabs(kept = localStorage, now = Date.now()) {
  return closedTabs(kept, now).tabs.flatMap(({ groups }) => Object.values(groups).flatMap(typedIn));
}

/** A group's typing (`entries`, keys and values), as lines (`keptInTab`'s). */
export function typedIn(entries) {
  const storage = { ...entries };
  Object.defineProperty(storage, "getItem", { value: (key) => (Object.hasOwn(entries, key) ? String(entries[key]) : null) });
  return keptInTab(storage);
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

/** Signed in (the invite link's page): the tabs asking to sign in go back to where they were. */
export function signedIn(storage = localStorage, now = Date.now(), name = storage.getItem(NAME_KEY)) {
  // NB: a sign-out whose answer was never heard (its page closed as it went) is counted now.
  if (storage.getItem(SIGNED_OUT_KEY) && storage.getItem(SET_ASIDE_KEY)) {
    storage.setItem(SIGN_OUTS_KEY, String(signOuts(storage) + 1));
  }
  storage.removeItem(SIGNED_OUT_KEY);
  storage.removeItem(SET_ASIDE_KEY);
  // Closed tabs' typing is for whoever typed it: not for another person signing in here (a
  // session that ended with no sign-out, the invite link opened by someone else).
  const closed = closedTabs(storage, now);
  keepClosedTabs(storage, { ...closed, tabs: closed.tabs.filter(({ by }) => by === name) });
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
