// What a page holds typed that its room never got: said as lines, asked of the browser's
// other tabs, forgotten (pure but for the channel and storage they are given; tested by node).
import { escapeHTML } from "./format.mjs";

/** Typing a room never got (`typingToKeep`), a line for each field: `“…” (Title)`. */
export function typedHere(typing) {
  if (!typing) return [];
  return [...typing.unsent.map(({ name, value }) => `“${value}” (${name})`),
    ...(typing.note ? [`“${typing.note}” (your note)`] : []),
    ...[typing.late, ...(typing.late?.waiting ?? [])].filter((late) => late?.text)
      .map((late) => `“${late.text}” (your note for a meeting that ended)`)];
}

/**
 * What closing the tab would lose, as lines: what only this tab keeps (`keptInTab`) and the
 * room's `typing`, its form's typing the room has not answered too (it is sent as the page
 * goes, but not all of it can be: a field over its limit, a row the room has not made yet).
 */
export function lostWithTheTab(typing, storage) {
  return [...typedHere(typing), ...keptInTab(storage, typing?.room)];
}

/** Where the new-standup form's typing is kept in the tab until it is added (`lobby.mjs`). */
export const newStandupKey = "standups.newStandup";

/** Everything this tab keeps typed that no room got, as lines: the new-standup form's, the
 * edit forms' typing kept when the tab left their rooms (`keepLeftTyping`), and the notes kept
 * for rooms (a meeting's, late ones, a discarded meeting's) but `shown`'s, the room on screen,
 * whose typing `typedHere` names from its fields. */
export function keptInTab(storage, shown = null) {
  return [...newStandupTyped(storage), ...leftTyped(storage), ...notesTyped(storage, shown)];
}

/** The notes kept in `storage` for rooms other than `shown`, a line a note. */
export function notesTyped(storage, shown = null) {
  const room = (key) => key.slice(key.lastIndexOf(".") + 1);
  return Object.keys(storage).filter((key) => /^standups\.(note|lateNote|discarded)\./.test(key) && room(key) !== shown)
    .flatMap((key) => {
      const value = storage.getItem(key) ?? "";
      if (!key.startsWith("standups.lateNote.")) {
        return value.trim() ? [`“${value.trim()}” (your ${key.startsWith("standups.note.") ? "note" : "note from a discarded meeting"}, in a room you left)`] : [];
      }
      try {
        const late = JSON.parse(value);
        return [late, ...(Array.isArray(late?.waiting) ? late.waiting : [])].map((note) => String(note?.text ?? "").trim())
          .filter(Boolean).map((text) => `“${text}” (your note for a meeting that ended, in a room you left)`);
      } catch {
        return []; // not a record this page wrote
      }
    });
}

/** The edit forms' typing kept in `storage` when the tab left their rooms, a line a field. */
export function leftTyped(storage) {
  return Object.keys(storage).filter((key) => key.startsWith("standups.left.")).flatMap((key) => {
    try {
      const unsent = JSON.parse(storage.getItem(key) ?? "[]");
      return (Array.isArray(unsent) ? unsent : []).filter((typing) => String(typing?.value ?? "").trim())
        .map(({ name, value }) => `“${value}” (${name}, in a room you left)`);
    } catch {
      return []; // not a record this page wrote
    }
  });
}

/** The new-standup form's typing kept in `storage`, as a line (none when it holds nothing). */
export function newStandupTyped(storage) {
  let kept = null;
  try {
    kept = JSON.parse(storage.getItem(newStandupKey) ?? "null");
  } catch {
    return []; // not a record this page wrote
  }
  const title = String(kept?.title ?? "").trim();
  const names = (Array.isArray(kept?.attendees) ? kept.attendees : [])
    .map((name) => String(name).trim()).filter(Boolean);
  if (title) return [`“${title}” (a new standup not added yet)`];
  return names.length ? [`“${names.join(", ")}” (attendees of a new standup not added yet)`] : [];
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
