// What a tab keeps typed (`sessionStorage`: a note half typed, a late note, a form's typing no
// room got), beyond its page: kept in the browser as the page goes, for the next screen of any
// tab, since a tab's own storage goes with it (`keepTabTyping`, `takeClosedTabs`); and never
// shown to whoever signs in next (`forgetIfAnotherSince`).
import { NAME_KEY, SET_ASIDE_KEY, SIGNED_OUT_KEY, setAside, signIns, signOuts } from "./session.mjs";
import { keptInTab } from "./typed.mjs";

/** How long typing is kept in the browser for a page to come: a day. */
export const KEPT_FOR = 24 * 60 * 60 * 1000;

/** This page, as told apart from the others (two tabs may be in one room). Per page load,
 * not kept in `sessionStorage`: a duplicated tab has a copy of that. (A page reloaded since
 * takes another tab's typing for its room, if it kept none of its own.) */
const THIS_TAB = Math.random().toString(36).slice(2);
export const thisTab = () => THIS_TAB;

/** Where the typing of tabs closed (or put away) is kept for the next tab (`keepTabTyping`),
 * and which of it another tab took (for the tab it was kept from, should it come back). */
export const CLOSED_TABS_KEY = "standups.closedTabs";

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

/** A record of values by key (a sign-out's set-aside), as `localStorage`'s calls see it. */
const asStorage = (record) => ({
  getItem: (key) => (typeof record[key] === "string" ? record[key] : null),
  setItem: (key, value) => { record[key] = String(value); },
  removeItem: (key) => { record[key] = null; },
});

function keepClosedTabs(storage, { tabs, taken }) {
  if (tabs.length || taken.length) storage.setItem(CLOSED_TABS_KEY, JSON.stringify({ tabs, taken }));
  else storage.removeItem(CLOSED_TABS_KEY);
}

/**
 * The page goes (its tab closed, reloaded, or put away): what its tab keeps typed (`tab`,
 * `sessionStorage`: a note half typed, a late note, a form's typing no room got) is copied
 * into the browser's storage (`kept`), for the next screen of any tab (`takeClosedTabs`) — a
 * tab's own storage goes with it. Not after a sign-out: nothing is kept for the next person.
 * While one is on its way, it is kept with what that sign-out set aside: a sign-out that fails
 * gives it back with the rest. `closed`: the page will not come back (its tab closed or
 * reloaded, not put away in the back/forward cache or frozen).
 */
export function keepTabTyping(tab = sessionStorage, kept = localStorage, now = Date.now(), load = thisTab(), { closed = false } = {}) {
  const name = tabName(tab);
  const groups = Object.fromEntries(typingGroups(tab));
  keepInClosedTabs(kept, (closedTabs) => {
    // NB: one record a page, by the tab's name and the page's load: a copy of a tab ("Duplicate")
    // has the tab's name too, and takes nothing else's place.
    closedTabs.tabs = closedTabs.tabs.filter((other) => other.tab !== name || other.load !== load);
    if (Object.keys(groups).length) closedTabs.tabs.push({ tab: name, load, by: kept.getItem(NAME_KEY), at: now, closed, groups });
  }, now);
}

/**
 * Changes the closed tabs' record (`change`, given it as `closedTabs` reads it) where it goes:
 * the browser's storage; while a sign-out is on its way, what that sign-out set aside (a
 * sign-out that fails gives it back with the rest); after a sign-out, nowhere — nothing is
 * kept for the next person. Returns whether it was kept.
 */
function keepInClosedTabs(kept, change, now) {
  const into = (storage) => {
    const closed = closedTabs(storage, now);
    change(closed);
    keepClosedTabs(storage, closed);
  };
  if (!kept.getItem(SIGNED_OUT_KEY)) {
    into(kept);
    return true;
  }
  if (kept.getItem(SET_ASIDE_KEY) === null) return false;
  const aside = setAside(kept);
  into(asStorage(aside));
  kept.setItem(SET_ASIDE_KEY, JSON.stringify(aside));
  return true;
}

/** Someone renamed themselves (`from` → `to`): what closed tabs kept under their name is theirs
 * under the new one. */
export function renameClosedTabs(from, to, kept = localStorage, now = Date.now()) {
  keepInClosedTabs(kept, (closed) => {
    for (const record of closed.tabs) {
      if (typedBy(record, from)) record.by = to;
    }
  }, now);
}

/** Whether a record was typed under `by`, the name signed in now: only theirs is theirs. */
const typedBy = (record, by) => (record.by ?? null) === by;

/**
 * A screen begins: what tabs that went kept (`keepTabTyping`) for the screen (`wanted`, by
 * group: its room's, or the lobby's new standup) comes into this tab, a group at a time, where
 * the tab has none of its own; the page then offers it as after a reload. A group the tab holds
 * the same is its own (kept as it went, and back): it goes, whatever the screen. One the tab
 * holds otherwise (two tabs typed in one room) waits for another tab, as does what is for
 * another screen. And typing of this tab's that another took while this page was away (gone to
 * another page, and back) goes on there: it leaves this tab, so that it is in one tab only.
 * Returns the groups taken (`taken`, as `"note:<room>"` for a room's meeting note), where each
 * was kept (`from`: by id, `keptBy`'s), and those gone (`gone`: `{ id, entries }`, their keys
 * and values).
 */
export function takeClosedTabs(tab = sessionStorage, kept = localStorage, now = Date.now(), wanted = () => true, load = thisTab()) {
  const name = tabName(tab);
  const mine = typingGroups(tab);
  const closed = closedTabs(kept, now);
  // NB: for whoever typed it: another person signed in here since gets none of it.
  const by = kept.getItem(NAME_KEY);
  const gone = [];
  for (const { from, id, digest: taken } of closed.taken) {
    const here = mine.get(id);
    if (from !== name || !here || digest(here) !== taken) continue;
    for (const key of Object.keys(here)) tab.removeItem(key);
    mine.delete(id);
    gone.push({ id, entries: here });
  }
  const taken = [];
  const from = {};
  const tabs = [];
  const keys = keyGroups(tab);
  for (const other of closed.tabs) {
    // NB: this page's own, kept as it was put away and shown again: the page has it all.
    if (other.tab === name && other.load === load) continue;
    if (!typedBy(other, by)) {
      tabs.push(other);
      continue;
    }
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
      from[id] = keptBy(other);
      if (other.tab !== name) closed.taken.push({ from: other.tab, at: now, id, digest: digest(entries) });
    }
    if (Object.keys(left).length) tabs.push({ ...other, groups: left });
  }
  keepClosedTabs(kept, { tabs, taken: closed.taken.filter(({ from }) => from !== name) });
  return { taken, gone, from };
}

/**
 * What kept a record of typing: `"closed"`, a page that will not come back (its tab closed, or
 * gone on to a page the back/forward cache does not keep: a page cannot tell them apart);
 * `"away"`, a page put away (kept in that cache, or frozen), its tab still open; `"signedInOver"`,
 * a tab that heard of another person's sign-in and kept its person's typing for them.
 */
function keptBy(record) {
  if (record.load === SIGNED_IN_OVER) return "signedInOver";
  return record.closed === true ? "closed" : "away";
}

/** Where typing taken from a record came from, by `keptBy`, as a notice says it ("Your note
 * from a tab you closed is back…"), and where it was typed, as a line says it (`typedIn`'s). */
export const KEPT_FROM = {
  closed: "from a tab you closed", away: "from another tab", signedInOver: "from before you signed in again",
};
const TYPED_IN = { closed: "in a tab you closed", away: "in another tab", signedInOver: "before you signed in again" };

/**
 * A meeting note for `meeting` (its id) in `room` that a tab closed (not one put away: it may
 * come back) kept under the name signed in now, and that waits because this tab holds one of
 * its own (`takeClosedTabs`): the first, as `{ text, ahead, take }` — the field's text, the
 * notes sent ahead in it (`NotesAhead`'s, to tell those that arrived), and `take()`, which lets
 * the browser forget it (this tab has it now) and says whether it was still there (another tab
 * may have taken it meanwhile); else null.
 */
export function waitingNoteOfClosedTab(room, meeting, tab = sessionStorage, kept = localStorage, now = Date.now()) {
  const id = noteGroup(room);
  const by = kept.getItem(NAME_KEY);
  const name = tabName(tab);
  const read = (entries, key) => {
    try {
      return JSON.parse(entries[key] ?? "null");
    } catch {
      return null; // not a record this page wrote
    }
  };
  const record = closedTabs(kept, now).tabs.find((other) => other.closed === true && typedBy(other, by)
    && holdsTyping(id, other.groups[id]) && read(other.groups[id], `standups.noteFor.${room}`)?.meeting === meeting);
  if (!record) return null;
  const entries = record.groups[id];
  const take = () => {
    let taken = false;
    keepInClosedTabs(kept, (closed) => {
      const same = closed.tabs.find((other) => other.tab === record.tab && other.load === record.load);
      if (!same?.groups[id] || digest(same.groups[id]) !== digest(entries)) return;
      delete same.groups[id];
      closed.tabs = closed.tabs.filter((other) => Object.keys(other.groups).length);
      // NB: the tab it was kept from, should it come back (Back), lets it go (`takeClosedTabs`).
      if (record.tab !== name) closed.taken.push({ from: record.tab, at: Date.now(), id, digest: digest(entries) });
      taken = true;
    }, Date.now());
    return taken;
  };
  return { text: String(entries[`standups.note.${room}`]), ahead: read(entries, `standups.notesAhead.${room}`), take };
}

/** What tabs closed, pages put away, or tabs another person signed in over kept under the name
 * signed in now and no tab has taken yet, as lines (`keptInTab`'s: "…, in a tab you closed",
 * "…, in another tab", "…, before you signed in again"). */
export function typedInClosedTabs(kept = localStorage, now = Date.now()) {
  const by = kept.getItem(NAME_KEY);
  return closedTabs(kept, now).tabs.filter((other) => typedBy(other, by))
    .flatMap((other) => Object.values(other.groups).flatMap((entries) => typedIn(entries, TYPED_IN[keptBy(other)])));
}

/** A group's typing (`entries`, keys and values), as lines (`keptInTab`'s), typed at `place`
 * (none: here). */
export function typedIn(entries, place = null) {
  const storage = { ...entries };
  Object.defineProperty(storage, "getItem", { value: (key) => (Object.hasOwn(entries, key) ? String(entries[key]) : null) });
  return keptInTab(storage, null, { rooms: place, lobby: place });
}

/** A record's `load` when it is a tab's typing kept for its person as another signed in. */
const SIGNED_IN_OVER = "signed in over";

/** What a tab last saw of the browser's sessions (`sessionStorage`): `{ signOuts, signIns, name }`. */
const SEEN_KEY = "standups.sessionsSeen";

/**
 * A screen begins: what the tab keeps typed is not for whoever came to this browser since it
 * last looked (it was away, or showing the sign-in page, and heard nothing). After a sign-out
 * (`"signedOut"`) it goes, as every other tab's did. After a sign-in under another name than
 * the tab's (`"someoneElse"`: a session that ended with no sign-out, then another person opening
 * the invite link here) it is kept for the person who typed it, as a closed tab's is, and taken
 * back only under their name. A rename signs nobody in: the typing stays. Returns why the tab's
 * typing left it, if it held any; else null.
 */
export function forgetIfAnotherSince(tab = sessionStorage, kept = localStorage, now = Date.now()) {
  const latest = signIns(kept);
  const looking = { signOuts: signOuts(kept), signIns: latest.count, name: kept.getItem(NAME_KEY) };
  let seen = null;
  try {
    seen = JSON.parse(tab.getItem(SEEN_KEY) ?? "null");
  } catch {
    // not a record this page wrote: a first look
  }
  tab.setItem(SEEN_KEY, JSON.stringify(looking));
  if (!seen || typeof seen !== "object") return null;
  const why = seen.signOuts !== looking.signOuts ? "signedOut"
    : seen.signIns !== looking.signIns && latest.name !== seen.name ? "someoneElse" : null;
  if (!why) return null;
  const groups = typingGroups(tab);
  for (const key of Object.keys(tab)) {
    if (isTypingKey(key)) tab.removeItem(key);
  }
  if (!groups.size) return null;
  if (why === "signedOut") return why;
  const record = { tab: tabName(tab), load: SIGNED_IN_OVER, by: seen.name ?? null, at: now, groups: Object.fromEntries(groups) };
  // NB: a sign-out on its way sets it aside with the rest; one done keeps nothing.
  return keepInClosedTabs(kept, (closed) => closed.tabs.push(record), now) ? why : "signedOut";
}
