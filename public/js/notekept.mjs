// The meeting's note as this tab keeps it (`sessionStorage`), so that a reload, a visit to the
// lobby or a meeting that ends while the page is away loses nothing typed: the text, the notes
// ahead of it (`NotesAhead`) and which meeting it is for.
import { leftKey } from "./comeback.mjs";
import { NotesAhead } from "./notesahead.mjs";

/** Where the note being typed in a room's meeting is kept, so that a reload does not lose it. */
export const noteDraftKey = (roomID) => `standups.note.${roomID}`;

/** Where a late note is kept while it is typed (`latenote.mjs`), with the meeting it is for. */
export const lateNoteKey = (roomID) => `standups.lateNote.${roomID}`;

/** Where the note a discarded meeting left is kept (its box, `detail.mjs`), for a reload. */
export const discardedNoteKey = (roomID) => `standups.discarded.${roomID}`;

/** Where the notes the field holds ahead of the typing are kept (`NotesAhead`), for a reload. */
export const notesAheadKey = (roomID) => `standups.notesAhead.${roomID}`;

/** Where the page keeps which meeting the kept note is for: how many meetings the standup
 * had saved when it began (`count`), and whose turn it was (`speaker`). */
const noteForKey = (roomID) => `standups.noteFor.${roomID}`;

/** The rooms whose meeting note this page took from a tab closed since (`takeClosedTabs`),
 * until its field shows it (and says so): where it was, by room ("from a tab you closed"). */
export const notesFromClosedTabs = new Map();

/** Keeps which meeting the note being typed is for: its id, the standup's saved meetings
 * (`count`) when it began, and the speaker whose turn it is in `state`. */
export function keepNoteFor(roomID, count, state) {
  const speaker = state.standup.attendees[state.meeting.speakerIndex]?.name ?? null;
  sessionStorage.setItem(noteForKey(roomID), JSON.stringify({ meeting: state.meeting.id ?? null, count, speaker }));
}

/** The meeting's note is done with (the meeting ended): its kept copies go. */
export function forgetNote(roomID) {
  sessionStorage.removeItem(noteDraftKey(roomID));
  sessionStorage.removeItem(notesAheadKey(roomID));
  sessionStorage.removeItem(noteForKey(roomID));
}

/**
 * A page opened afresh in a room (back from the lobby, a reload) whose kept note was typed in
 * a meeting that ended while the page was away: the note is not left for the next meeting's
 * field. With the meeting saved since (among the standup's, by its id; else the standup has one
 * meeting more, `count`), it is offered for that meeting (`late`, as `lateNote.offer` takes it), less the notes ahead of it
 * that reached it; else (`lost`, `discarded` when no meeting was saved) it is said. Null when
 * the meeting it was typed in still runs, or nothing is kept.
 */
export function noteFromAway(roomID, state, count) {
  let kept = null;
  let ahead = null;
  try {
    kept = JSON.parse(sessionStorage.getItem(noteForKey(roomID)) ?? "null");
    ahead = JSON.parse(sessionStorage.getItem(notesAheadKey(roomID)) ?? "null");
  } catch {
    // not a record this page wrote
  }
  const draft = sessionStorage.getItem(noteDraftKey(roomID)) ?? "";
  if (!draft.trim() || !Number.isInteger(kept?.count)) return null;
  // NB: told apart by id (a meeting discarded, and another started since: the count is the
  // same); by the count when kept without one.
  const { meetings } = state.standup;
  const id = typeof kept.meeting === "string" ? kept.meeting : null;
  if (state.meeting && (id ? state.meeting.id === id : count === kept.count)) return null;
  forgetNote(roomID);
  const saved = id ? meetings.find((meeting) => meeting.id === id)
    : count === kept.count + 1 ? meetings[0] : null;
  if (saved?.id) {
    const notes = NotesAhead.restore(ahead, draft);
    const text = notes.unsentIn(draft, saved.transcript ?? "");
    // NB: under the speaker a note sent and not taken was about, else whose turn it was.
    const speaker = notes.unsentSpeaker(draft, saved.transcript ?? "") ?? kept.speaker ?? null;
    return text.trim() ? { late: { meeting: saved.id, speaker, text, typing: null } } : null;
  }
  // NB: a meeting saved since would be among those listed (the newest), unless more were.
  const listed = id && count - kept.count <= meetings.length;
  return { lost: draft.trim(), discarded: listed ? true : count === kept.count };
}

/** Everything this tab keeps typed for a room, as `typedHere` takes it: the meeting's note,
 * a late note and the ones waiting behind it, the edit form's typing it left behind. What a
 * page finds the room gone with (deleted while it was away) still shows it. */
export function keptForRoom(roomID, storage = sessionStorage) {
  const read = (key) => {
    try {
      return JSON.parse(storage.getItem(key) ?? "null");
    } catch {
      return null; // not a record this page wrote
    }
  };
  const unsent = read(leftKey(roomID));
  const late = read(lateNoteKey(roomID));
  return {
    room: roomID,
    unsent: (Array.isArray(unsent) ? unsent : []).filter((typing) => String(typing?.value ?? "").trim()),
    note: (storage.getItem(noteDraftKey(roomID)) ?? "").trim(),
    late: late && typeof late === "object" ? late : null,
  };
}

/**
 * A note from away (`noteFromAway`) whose meeting was discarded is kept as the note of a meeting
 * discarded under an open page: in the room's box for it (between meetings, `mode` detail), or
 * in the next meeting's field (`count`: its saved meetings as it began), when that is free.
 * Returns where (`box`, `field`), or null: then it is only said.
 */
export function keepNoteFromDiscarded(roomID, mode, text, state, count) {
  if (mode === "detail" && !sessionStorage.getItem(discardedNoteKey(roomID))) {
    sessionStorage.setItem(discardedNoteKey(roomID), text);
    return "box";
  }
  if (mode === "meeting" && !(sessionStorage.getItem(noteDraftKey(roomID)) ?? "").trim()) {
    sessionStorage.setItem(noteDraftKey(roomID), text);
    keepNoteFor(roomID, count, state);
    return "field";
  }
  return null;
}
