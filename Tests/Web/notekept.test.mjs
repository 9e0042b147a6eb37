import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

const items = new Map();
globalThis.sessionStorage = {
  getItem: (key) => items.get(key) ?? null,
  setItem: (key, value) => items.set(key, String(value)),
  removeItem: (key) => items.delete(key),
};
const { keepNoteFor, keptForRoom, lateNoteKey, noteDraftKey, noteFromAway, notesAheadKey } = await import("../../public/js/notekept.mjs");
const { typedHere } = await import("../../public/js/typed.mjs");

const room = "9DC560BB-B249-46DE-9F06-F13A87678816";
const attendees = [{ id: "1", name: "Blob" }, { id: "2", name: "Blob Jr" }];
const running = { standup: { attendees, meetings: [] }, meeting: { speakerIndex: 1, transcript: "" } };

beforeEach(() => {
  items.clear();
  sessionStorage.setItem(noteDraftKey(room), "shipped it");
  keepNoteFor(room, 0, running);
});

test("a note kept for a meeting that still runs stays for its field", () => {
  assert.equal(noteFromAway(room, running, 0), null);
  assert.equal(sessionStorage.getItem(noteDraftKey(room)), "shipped it");
});

test("a note whose meeting was saved while the page was away is offered for that meeting", () => {
  const saved = { standup: { attendees, meetings: [{ id: "M1", transcript: "Ben: done" }] }, meeting: null };
  assert.deepEqual(noteFromAway(room, saved, 1),
    { late: { meeting: "M1", speaker: "Blob Jr", text: "shipped it", typing: null } });
  // Taken once: it is not left for the next meeting's field.
  assert.equal(sessionStorage.getItem(noteDraftKey(room)), null);
  assert.equal(noteFromAway(room, saved, 1), null);
});

test("notes ahead of the typing that reached the saved meeting are not offered again", () => {
  sessionStorage.setItem(noteDraftKey(room), "first second");
  sessionStorage.setItem(notesAheadKey(room), JSON.stringify([
    { text: "first ", before: "", line: "Ana: first", state: "sent" },
  ]));
  const saved = { standup: { attendees, meetings: [{ id: "M1", transcript: "Ana: first" }] }, meeting: null };
  assert.equal(noteFromAway(room, saved, 1).late.text, "second");
});

test("a note sent about one speaker and not taken goes late under that speaker, not whose turn it was", () => {
  sessionStorage.setItem(noteDraftKey(room), "Blob's PR merged more");
  sessionStorage.setItem(notesAheadKey(room), JSON.stringify([
    { text: "Blob's PR merged ", before: "", line: "Ana: Blob's PR merged", state: "kept", speaker: "Blob" },
  ]));
  const saved = { standup: { attendees, meetings: [{ id: "M1", transcript: "Ben: done" }] }, meeting: null };
  assert.deepEqual(noteFromAway(room, saved, 1).late,
    { meeting: "M1", speaker: "Blob", text: "Blob's PR merged more", typing: null });
});

test("a note whose meeting was discarded, or ended among others, is said, not offered", () => {
  const discarded = { standup: { attendees, meetings: [] }, meeting: null };
  assert.deepEqual(noteFromAway(room, discarded, 0), { lost: "shipped it", discarded: true });
  sessionStorage.setItem(noteDraftKey(room), "shipped it");
  keepNoteFor(room, 0, running);
  // Two saved since, and another meeting running: which one it was for is not known.
  const later = { standup: { attendees, meetings: [{ id: "M2" }, { id: "M1" }] }, meeting: { speakerIndex: 0 } };
  assert.deepEqual(noteFromAway(room, later, 2), { lost: "shipped it", discarded: false });
});

test("the meeting a note was for is known by its id: one discarded is not the next one", () => {
  const first = { ...running, meeting: { ...running.meeting, id: "M1" } };
  keepNoteFor(room, 0, first);
  assert.equal(noteFromAway(room, first, 0), null);
  // Discarded, and another started since: as many meetings saved as before, another running.
  const next = { ...running, meeting: { ...running.meeting, id: "M2" } };
  assert.deepEqual(noteFromAway(room, next, 0), { lost: "shipped it", discarded: true });
  assert.equal(sessionStorage.getItem(noteDraftKey(room)), null);
  // Saved, and another saved and running since: still offered for its own.
  sessionStorage.setItem(noteDraftKey(room), "shipped it");
  keepNoteFor(room, 0, first);
  const later = {
    standup: { attendees, meetings: [{ id: "M2", transcript: "" }, { id: "M1", transcript: "" }] },
    meeting: { speakerIndex: 0, id: "M3" },
  };
  assert.deepEqual(noteFromAway(room, later, 2),
    { late: { meeting: "M1", speaker: "Blob Jr", text: "shipped it", typing: null } });
  // Discarded, and one saved since (the count one more): not offered for that one.
  sessionStorage.setItem(noteDraftKey(room), "shipped it");
  keepNoteFor(room, 0, first);
  const another = { standup: { attendees, meetings: [{ id: "M2", transcript: "" }] }, meeting: null };
  assert.deepEqual(noteFromAway(room, another, 1), { lost: "shipped it", discarded: true });
});

test("a note from away whose meeting was discarded goes into its box, or the next meeting's field", async () => {
  const { discardedNoteKey, keepNoteFromDiscarded } = await import("../../public/js/notekept.mjs");
  items.clear();
  assert.equal(keepNoteFromDiscarded(room, "detail", "shipped it", running, 0), "box");
  assert.equal(sessionStorage.getItem(discardedNoteKey(room)), "shipped it");
  // A box holding another: only said.
  assert.equal(keepNoteFromDiscarded(room, "detail", "another", running, 0), null);
  const next = { ...running, meeting: { ...running.meeting, id: "M2" } };
  assert.equal(keepNoteFromDiscarded(room, "meeting", "shipped it", next, 0), "field");
  assert.equal(sessionStorage.getItem(noteDraftKey(room)), "shipped it");
  // Kept for the meeting it is in now: still there after a reload.
  assert.equal(noteFromAway(room, next, 0), null);
  assert.equal(keepNoteFromDiscarded(room, "meeting", "another", next, 0), null);
  assert.equal(keepNoteFromDiscarded(room, "edit", "another", running, 0), null);
});

test("nothing kept, or a note not known to be for a meeting, is left as it is", () => {
  items.clear();
  assert.equal(noteFromAway(room, running, 0), null);
  sessionStorage.setItem(noteDraftKey(room), "from before signing in again");
  assert.equal(noteFromAway(room, { ...running, meeting: null }, 0), null);
});

test("what a tab keeps typed for a room is all there for a page that finds the room gone", () => {
  sessionStorage.setItem(`standups.left.${room}`, JSON.stringify([
    { path: "/title", name: "Title", value: "Design review", base: "Design" },
    { path: "/attendees/new/name", name: "New attendee", value: "  " },
  ]));
  sessionStorage.setItem(lateNoteKey(room), JSON.stringify(
    { meeting: "M1", text: "one more thing", waiting: [{ meeting: "M0", text: "and another" }] }));
  assert.deepEqual(typedHere(keptForRoom(room)), [
    "“Design review” (Title)", "“shipped it” (your note)",
    "“one more thing” (your note for a meeting that ended)", "“and another” (your note for a meeting that ended)",
  ]);
  // Nothing kept, or records this page did not write: nothing to show.
  items.clear();
  sessionStorage.setItem(lateNoteKey(room), "{not json");
  assert.deepEqual(typedHere(keptForRoom(room)), []);
});
