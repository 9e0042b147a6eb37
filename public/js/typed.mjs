// What a page holds typed that its room never got: said as lines, asked of the browser's
// other tabs, forgotten (pure but for the channel and storage they are given; tested by node).
import { escapeHTML } from "./format.mjs";

/** Typing a room never got (`typingToKeep`), a line for each field: `“…” (Title)`; typed at
 * `place`, if not here. */
export function typedHere(typing, place = null) {
  if (!typing) return [];
  return [...typing.unsent.map(({ name, value }) => line(value, name, place)),
    ...(typing.note ? [line(typing.note, "your note", place)] : []),
    ...[typing.late, ...(typing.late?.waiting ?? [])].filter((late) => late?.text)
      .map((late) => line(late.text, "your note for a meeting that ended", place))];
}

/**
 * What closing the tab would lose, as lines: what only this tab keeps (`keptInTab`) and the
 * room's `typing`, its form's typing the room has not answered too (it is sent as the page
 * goes, but not all of it can be: a field over its limit, a row the room has not made yet).
 * `place`: where each was typed, as another tab says it ("in another tab").
 */
export function lostWithTheTab(typing, storage, place = null) {
  const places = place ? { rooms: place, lobby: place } : {};
  return [...typedHere(typing, place), ...keptInTab(storage, typing?.room, places)];
}

/** Where the new-standup form's typing is kept in the tab until it is added (`lobby.mjs`). */
export const newStandupKey = "standups.newStandup";

/** Where a tab's typing for a room it is not showing was typed, as a line says it. */
export const IN_A_ROOM_YOU_LEFT = "in a room you left";

/** A line: the text, what it is, and where it was typed if not here (`“…” (Title, in …)`). */
const line = (text, what, place) => `“${text}” (${what}${place ? `, ${place}` : ""})`;

/** Everything this tab keeps typed that no room got, as lines: the new-standup form's, the
 * edit forms' typing kept when the tab left their rooms (`keepLeftTyping`), and the notes kept
 * for rooms (a meeting's, late ones, a discarded meeting's) but `shown`'s, the room on screen,
 * whose typing `typedHere` names from its fields. Each line says where it was typed: `rooms`,
 * for a room's (by default "in a room you left"), and `lobby`, for the new standup's (none). */
export function keptInTab(storage, shown = null, { rooms = IN_A_ROOM_YOU_LEFT, lobby = null } = {}) {
  return [...newStandupTyped(storage, lobby), ...leftTyped(storage, rooms), ...notesTyped(storage, shown, rooms)];
}

/** The notes kept in `storage` for rooms other than `shown`, a line a note, typed at `place`. */
export function notesTyped(storage, shown = null, place = IN_A_ROOM_YOU_LEFT) {
  const room = (key) => key.slice(key.lastIndexOf(".") + 1);
  return Object.keys(storage).filter((key) => /^standups\.(note|lateNote|discarded)\./.test(key) && room(key) !== shown)
    .flatMap((key) => {
      const value = storage.getItem(key) ?? "";
      if (!key.startsWith("standups.lateNote.")) {
        return value.trim() ? [line(value.trim(), key.startsWith("standups.note.") ? "your note" : "your note from a discarded meeting", place)] : [];
      }
      try {
        const late = JSON.parse(value);
        return [late, ...(Array.isArray(late?.waiting) ? late.waiting : [])].map((note) => String(note?.text ?? "").trim())
          .filter(Boolean).map((text) => line(text, "your note for a meeting that ended", place));
      } catch {
        return []; // not a record this page wrote
      }
    });
}

/** The edit forms' typing kept in `storage` when the tab left their rooms, a line a field,
 * typed at `place`. */
export function leftTyped(storage, place = IN_A_ROOM_YOU_LEFT) {
  return Object.keys(storage).filter((key) => key.startsWith("standups.left.")).flatMap((key) => {
    try {
      const unsent = JSON.parse(storage.getItem(key) ?? "[]");
      return (Array.isArray(unsent) ? unsent : []).filter((typing) => String(typing?.value ?? "").trim())
        .map(({ name, value }) => line(value, name, place));
    } catch {
      return []; // not a record this page wrote
    }
  });
}

/** The new-standup form's typing kept in `storage`, as a line (none when it holds nothing),
 * typed at `place` if not here. */
export function newStandupTyped(storage, place = null) {
  let kept = null;
  try {
    kept = JSON.parse(storage.getItem(newStandupKey) ?? "null");
  } catch {
    return []; // not a record this page wrote
  }
  const title = String(kept?.title ?? "").trim();
  const names = (Array.isArray(kept?.attendees) ? kept.attendees : [])
    .map((name) => String(name).trim()).filter(Boolean);
  if (title) return [line(title, "a new standup not added yet", place)];
  return names.length ? [line(names.join(", "), "attendees of a new standup not added yet", place)] : [];
}

/** Lines as a list, escaped. */
export function typedList(lines, className) {
  return `<ul class="${className}">${lines.map((line) => `<li>${escapeHTML(line)}</li>`).join("")}</ul>`;
}

/** Forgets a tab's copies of what was typed (`standups.` keys: a note's, for a reload). */
export function forgetTyping(storage) {
  for (const key of Object.keys(storage)) {
    if (key.startsWith("standups.")) storage.removeItem(key);
  }
}

let channel = null;
function tabs() {
  if (!channel && typeof BroadcastChannel === "function") channel = new BroadcastChannel("standups.tabs");
  return channel;
}

/** Answers the other tabs' `typingInOtherTabs` with `lines()`, this tab's (when it has any). */
export function answerOtherTabs(lines) {
  tabs()?.addEventListener("message", ({ data }) => {
    if (data?.ask !== "typing") return;
    const answer = lines();
    if (answer.length) tabs().postMessage({ answerTo: data.id, lines: answer });
  });
}

/** What the other tabs of this browser hold typed that their rooms never got, as lines: the
 * answers that come within a moment (a frozen tab has left its room and answers none). */
export function typingInOtherTabs(wait = 300) {
  const channel = tabs();
  if (!channel) return Promise.resolve([]);
  const id = `${Date.now()}-${Math.random()}`;
  const lines = [];
  const heard = ({ data }) => {
    if (data?.answerTo === id) lines.push(...data.lines);
  };
  channel.addEventListener("message", heard);
  channel.postMessage({ ask: "typing", id });
  return new Promise((resolve) => setTimeout(() => {
    channel.removeEventListener("message", heard);
    resolve(lines);
  }, wait));
}
