import { test } from "node:test";
import assert from "node:assert/strict";
import { NotesAhead, reached } from "../../public/js/notesahead.mjs";

test("Enter sends what follows the notes on their way, and nothing twice", () => {
  const ahead = new NotesAhead();
  const [first] = ahead.send("first note", "", "Ana");
  assert.equal(first.text, "first note");
  assert.match(first.id, /^[0-9a-f]{32}$/);
  assert.equal(first.line, "Ana: first note");
  assert.deepEqual(ahead.send("first note", "", "Ana"), []);
  assert.deepEqual(ahead.send("first note ", "", "Ana"), []);
  const [second, ...more] = ahead.send("first note second", "", "Ana");
  assert.equal(second.text, " second");
  assert.notEqual(second.id, first.id);
  assert.equal(second.line, "Ana: second");
  assert.deepEqual(more, []);
});

test("an answer takes its note alone from the field, whatever order they come in", () => {
  const ahead = new NotesAhead();
  const [first] = ahead.send("first", "", "Ana");
  const [second] = ahead.send("first second", "", "Ana");
  // Typed on after both: the first's answer keeps the second where it is, spaces and all.
  assert.equal(ahead.arrived("first secondthi", first), " secondthi");
  assert.equal(ahead.arrived(" secondthi", second), "thi");
  assert.deepEqual(ahead.notes, []);
  // Refused ahead of one that arrives: the refused one stays, the other goes.
  const [a] = ahead.send("A", "", "Ana");
  const [b] = ahead.send("A B", "", "Ana");
  ahead.refused(a);
  assert.equal(ahead.arrived("A B typed", b), "A typed");
  // …a note of its own still: Enter sends it again, and what was typed after it apart.
  const [again, typed, ...more] = ahead.send("A typed", "Ben: hi", "Ana");
  assert.equal(again, a);
  assert.deepEqual([again.text, again.state, again.before], ["A", "sent", "Ben: hi"]);
  assert.equal(typed.line, "Ana: typed");
  assert.deepEqual(more, []);
});

test("a field changed inside the notes ahead is left as it is", () => {
  const ahead = new NotesAhead();
  const [note] = ahead.send("first", "", "Ana");
  assert.equal(ahead.arrived("firs", note), null);
  assert.deepEqual(ahead.notes, []);
  // …and Enter then sends it whole.
  assert.deepEqual(ahead.send("firs!", "", "Ana").map(({ text }) => text), ["firs!"]);
  // So does Enter after a kept note was changed: the person made it one with the rest.
  ahead.refused(ahead.notes[0]);
  assert.deepEqual(ahead.send("first!", "", "Ana").map(({ text }) => text), ["first!"]);
});

test("back from a drop, the notes the transcript has go; the others stay to send again", () => {
  const ahead = new NotesAhead();
  const [one] = ahead.send("one", "Ben: hi", "Ana");
  const [two] = ahead.send("one two", "Ben: hi", "Ana");
  ahead.unsure(one);
  ahead.unsure(two);
  assert.deepEqual(ahead.send("one two", "", "Ana"), [], "nothing new to send meanwhile");
  const { field, found, arrived, missing, unknown } = ahead.lookFor("one two three", "Ben: hi\nAna: one");
  assert.equal(found, 1);
  // Sent again all the same, with its id (the room takes it once): "Ana: one" could be
  // someone else's line, of the same name.
  assert.deepEqual(arrived, [one]);
  assert.equal(field, " two three");
  assert.deepEqual(ahead.notes, [two]);
  assert.equal(two.state, "kept");
  // The transcript has every line it had when "two" was sent, and not "two": it never
  // arrived, and the page sends it again.
  assert.deepEqual(missing, [two]);
  assert.equal(unknown, 0);
  // Enter: the note that did not arrive goes again on its own, and what was typed after it
  // as another — never the two run into one.
  const sent = ahead.send(field, "Ben: hi\nAna: one", "Ana");
  assert.deepEqual(sent.map(({ line }) => line), ["Ana: two", "Ana: three"]);
});

test("two notes sent during a silent drop and not found after it stay two", () => {
  const ahead = new NotesAhead();
  // The page puts a space after each note it sends: what is typed next starts there.
  const [first] = ahead.send("first note", "", "Cat");
  const [second] = ahead.send("first note second note", "", "Cat");
  ahead.unsure(first);
  ahead.unsure(second);
  const { field, found } = ahead.lookFor("first note second note ", "");
  assert.equal(found, 0);
  assert.equal(field, "first note second note ");
  assert.deepEqual(ahead.send(field, "", "Cat").map(({ line }) => line), ["Cat: first note", "Cat: second note"]);
  // A meeting that ended under them did not get them: both offered, apart (without the space
  // Enter left after the second, for a next note: a late note is all there is).
  assert.equal(ahead.unsentIn(field, ""), "first note second note");
  // A blank the person typed inside what they type on is theirs.
  assert.equal(ahead.unsentIn(`${field}half `, ""), "first note second note half ");
  assert.equal(ahead.unsentIn(`${field}half `, "Cat: first note\nCat: second note"), "half ");
});

test("a transcript says a note arrived only after the lines it had when the note was sent", () => {
  const note = { before: "Ana: same", line: "Ana: same" };
  assert.equal(reached("Ana: same", note), false);
  assert.equal(reached("Ana: same\nAna: same", note), true);
  assert.equal(reached("something else", note), false);
});

test("a meeting that ended under notes on their way did not get those it does not hold", () => {
  const ahead = new NotesAhead();
  ahead.send("in", "", "Ana");
  ahead.send("in out", "", "Ana");
  assert.equal(ahead.unsentIn("in out more", "Ana: in"), "out more");
  assert.equal(ahead.notes.length, 2, "the notes themselves are unchanged");
});

test("the speaker of notes a meeting ended under is the first untaken note's, none for typing never sent", () => {
  const ahead = new NotesAhead();
  ahead.send("in", "", "Ana", "Blob");
  ahead.send("in out", "", "Ana", "Cat");
  assert.equal(ahead.unsentSpeaker("in out more", ""), "Blob");
  assert.equal(ahead.unsentSpeaker("in out more", "Ana: in"), "Cat");
  assert.equal(ahead.unsentSpeaker("in out more", "Ana: in\nAna: out"), null);
  // A field changed inside the notes ahead is typing of its own.
  assert.equal(ahead.unsentSpeaker("changed", ""), null);
});

test("a kept note about someone who attends no more goes again under who speaks now", () => {
  const ahead = new NotesAhead();
  const [about] = ahead.send("about Blob", "", "Ana", "Blob");
  ahead.refused(about);
  // Another meeting, of a standup Blob was taken out of: the room would refuse Blob each time.
  const [again] = ahead.send("about Blob ", "", "Ana", "Cat", ["Cat", "Dan"]);
  assert.equal(again.speaker, "Cat");
  // One about someone still attending stays theirs.
  const kept = new NotesAhead();
  const [first] = kept.send("about Blob", "", "Ana", "Blob");
  kept.refused(first);
  assert.equal(kept.send("about Blob ", "", "Ana", "Cat", ["Blob", "Cat"])[0].speaker, "Blob");
});

test("a reload keeps the notes ahead as unsure, if the field still starts with them", () => {
  const saved = JSON.parse(JSON.stringify(new NotesAhead([
    { text: "a", before: "", line: "Ana: a", state: "sent" },
  ]).notes));
  assert.deepEqual(NotesAhead.restore(saved, "ab").notes.map(({ state }) => state), ["unsure"]);
  // One kept to send again stays kept, a note of its own.
  const kept = [{ ...saved[0], state: "kept" }];
  assert.deepEqual(NotesAhead.restore(kept, "a b").notes.map(({ state }) => state), ["kept"]);
  assert.deepEqual(NotesAhead.restore(saved, "b").notes, []);
  assert.deepEqual(NotesAhead.restore("garbage", "b").notes, []);
});

test("a note the transcript surely lacks goes again; one it cannot tell of is kept for Enter", () => {
  const ahead = new NotesAhead();
  const [one] = ahead.send("one", "Ben: hi", "Ana");
  const [two] = ahead.send("one two", "Ben: hi\nCat: taken back", "Ana");
  ahead.unsure(one);
  ahead.unsure(two);
  // Cat's note was taken back (its save failed) while the answers were lost: the transcript
  // lacks a line it had when "two" was sent, so whether "two" came cannot be told.
  const { field, found, missing, unknown } = ahead.lookFor("one two", "Ben: hi");
  assert.deepEqual([field, found, missing, unknown], ["one two", 0, [one], 1]);
  assert.deepEqual([one.state, two.state], ["kept", "kept"]);
  ahead.again(missing, "Ben: hi\nDan: meanwhile");
  assert.deepEqual([one.state, one.before], ["sent", "Ben: hi\nDan: meanwhile"]);
  // Its answer: it goes from the field; "two" stays, for Enter.
  assert.equal(ahead.arrived("one two", one), " two");
  assert.deepEqual(ahead.send(" two", "Ben: hi\nDan: meanwhile\nAna: one", "Ana").map(({ line }) => line), ["Ana: two"]);
});

test("a note keeps the speaker it was sent under, when it goes again after Next too", () => {
  const ahead = new NotesAhead();
  const [first] = ahead.send("about Blob", "", "Ana", "Blob");
  assert.equal(first.speaker, "Blob");
  ahead.refused(first);
  // Next came meanwhile: Enter sends it again, still Blob's, and what follows is Blob Jr's.
  const [again, next] = ahead.send("about Blob and Jr", "", "Ana", "Blob Jr");
  assert.equal(again.id, first.id);
  assert.equal(again.speaker, "Blob");
  assert.equal(next.text, " and Jr");
  assert.equal(next.speaker, "Blob Jr");
  // Kept in the tab across a reload, it keeps it too.
  assert.equal(NotesAhead.restore(ahead.notes, "about Blob and Jr").notes[0].speaker, "Blob");
});
