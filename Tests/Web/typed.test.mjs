import assert from "node:assert/strict";
import { test } from "node:test";
import {
  forgetTyping, keptInTab, lostWithTheTab, newStandupKey, newStandupTyped, typedHere, typedList,
} from "../../public/js/typed.mjs";

test("typing a room never got reads as a line per field, note and late note", () => {
  assert.deepEqual(typedHere(null), []);
  assert.deepEqual(typedHere({ unsent: [], note: "", late: null }), []);
  assert.deepEqual(typedHere({
    unsent: [{ name: "Title", value: "Design weekly" }],
    note: "Half a thought",
    late: { text: "Shipped", waiting: [{ text: "Earlier" }, { text: "" }] },
  }), [
    "“Design weekly” (Title)",
    "“Half a thought” (your note)",
    "“Shipped” (your note for a meeting that ended)",
    "“Earlier” (your note for a meeting that ended)",
  ]);
});

test("the lines are listed escaped", () => {
  assert.equal(typedList(["“<b>” (Title)"], "kept-typing"),
    `<ul class="kept-typing"><li>“&lt;b&gt;” (Title)</li></ul>`);
});

test("forgetting a tab's typing takes the app's keys only", () => {
  // NB: `Object.keys` lists a Storage's items; a plain object stands in for one.
  const storage = { "standups.note.R": "x", "standups.discarded.R": "y", other: "z" };
  const removed = [];
  Object.defineProperty(storage, "removeItem", { value: (key) => removed.push(key) && delete storage[key] });
  forgetTyping(storage);
  assert.deepEqual(removed, ["standups.note.R", "standups.discarded.R"]);
  assert.deepEqual(Object.keys(storage), ["other"]);
});

test("the new-standup form's typing kept in the tab is named by its title, else its attendees", () => {
  const items = new Map();
  const storage = { getItem: (key) => items.get(key) ?? null };
  assert.deepEqual(newStandupTyped(storage), []);
  items.set(newStandupKey, JSON.stringify({ title: " Planning ", attendees: ["Zoe", ""] }));
  assert.deepEqual(newStandupTyped(storage), ["“Planning” (a new standup not added yet)"]);
  items.set(newStandupKey, JSON.stringify({ title: "", attendees: ["Zoe", " ", "Yan"] }));
  assert.deepEqual(newStandupTyped(storage), ["“Zoe, Yan” (attendees of a new standup not added yet)"]);
  items.set(newStandupKey, JSON.stringify({ title: " ", attendees: [] }));
  assert.deepEqual(newStandupTyped(storage), []);
  items.set(newStandupKey, "{not json");
  assert.deepEqual(newStandupTyped(storage), []);
});

test("what the tab keeps typed reads as lines: the new standup's, and the rooms' it left", () => {
  const storage = {
    "standups.newStandup": JSON.stringify({ title: "Planning", attendees: [] }),
    "standups.left.ROOM-1": JSON.stringify([{ path: "/title", name: "Title", value: "Design weekly" },
      { path: "/attendees/new/name", name: "a new attendee", value: " " }]),
    "standups.left.ROOM-2": "{not json",
    "standups.note.ROOM-1": "Half a thought ",
    "standups.noteFor.ROOM-1": JSON.stringify({ count: 0 }),
    "standups.notesAhead.ROOM-1": JSON.stringify([]),
    "standups.note.ROOM-3": " ",
    "standups.discarded.ROOM-2": "From the discarded one",
    "standups.lateNote.ROOM-2": JSON.stringify({ text: "Shipped", waiting: [{ text: "Earlier" }, { text: " " }] }),
    "standups.lateNote.ROOM-3": "{not json",
    getItem(key) { return this[key] ?? null; },
  };
  assert.deepEqual(keptInTab(storage), [
    "“Planning” (a new standup not added yet)",
    "“Design weekly” (Title, in a room you left)",
    "“Half a thought” (your note, in a room you left)",
    "“From the discarded one” (your note from a discarded meeting, in a room you left)",
    "“Shipped” (your note for a meeting that ended, in a room you left)",
    "“Earlier” (your note for a meeting that ended, in a room you left)",
  ]);
  // The room on screen names its own notes from its fields (`typedHere`).
  assert.deepEqual(keptInTab(storage, "ROOM-2"), [
    "“Planning” (a new standup not added yet)",
    "“Design weekly” (Title, in a room you left)",
    "“Half a thought” (your note, in a room you left)",
  ]);
  // Said of another place (a tab closed), every line says it; of none, none does.
  assert.deepEqual(keptInTab(storage, "ROOM-2", { rooms: "in a tab you closed", lobby: "in a tab you closed" }), [
    "“Planning” (a new standup not added yet, in a tab you closed)",
    "“Design weekly” (Title, in a tab you closed)",
    "“Half a thought” (your note, in a tab you closed)",
  ]);
  assert.deepEqual(keptInTab(storage, "ROOM-2", { rooms: null }), [
    "“Planning” (a new standup not added yet)",
    "“Design weekly” (Title)",
    "“Half a thought” (your note)",
  ]);
});

test("closing the tab loses what only the tab keeps, and the form's typing not answered", () => {
  const storage = {
    "standups.left.r2": JSON.stringify([{ name: "Title", value: "Kept" }]),
    getItem(key) { return this[key] ?? null; },
  };
  const empty = { getItem: () => null };
  const typing = { room: "r1", unsent: [{ name: "Title", value: "Daily" }], note: "", late: null, by: "Ana" };
  assert.deepEqual(lostWithTheTab(typing, empty), ["“Daily” (Title)"]);
  // Said by another tab, every line says so.
  assert.deepEqual(lostWithTheTab({ ...typing, note: "Half" }, storage, "in another tab"),
    ["“Daily” (Title, in another tab)", "“Half” (your note, in another tab)", "“Kept” (Title, in another tab)"]);
  assert.deepEqual(lostWithTheTab({ ...typing, unsent: [] }, empty), []);
  assert.deepEqual(lostWithTheTab({ ...typing, unsent: [], note: "Half a thought" }, empty), ["“Half a thought” (your note)"]);
  assert.deepEqual(lostWithTheTab(null, storage), ["“Kept” (Title, in a room you left)"]);
  assert.deepEqual(lostWithTheTab(null, empty), []);
  // A note the tab keeps for the room on screen is its field's, named once.
  const noted = { "standups.note.r1": "Half a thought", getItem(key) { return this[key] ?? null; } };
  assert.deepEqual(lostWithTheTab({ ...typing, unsent: [], note: "Half a thought" }, noted), ["“Half a thought” (your note)"]);
  assert.deepEqual(lostWithTheTab(null, noted), ["“Half a thought” (your note, in a room you left)"]);
});
