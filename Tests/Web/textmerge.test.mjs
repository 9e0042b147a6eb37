import { test } from "node:test";
import assert from "node:assert/strict";
import { holds, mergeText } from "../../public/js/textmerge.mjs";

// The same table as the server's (Tests/StandupsFeaturesTests/TypingTogetherTests.swift): the
// page shows what the room will hold.
const merges = [
  // Nothing else changed, or only one side did.
  ["Daily", "Daily sync", "Daily", "Daily sync"],
  ["Daily", "Daily", "Team daily", "Team daily"],
  ["Daily", "Daily sync", "Daily sync", "Daily sync"],
  // Different places: both.
  ["Daily", "Daily sync", "Team Daily", "Team Daily sync"],
  ["Daily", "Team Daily", "Daily sync", "Team Daily sync"],
  ["Design review", "Design sync review", "Design review (weekly)", "Design sync review (weekly)"],
  ["Design review", "Design", "Big Design review", "Big Design"],
  // Several changes on a side (typed while one was on its way): each where it was.
  ["abcdef", "XabcdefY", "abcZdef", "XabcZdefY"],
  ["one two three", "One two three!", "one 2 three", "One 2 three!"],
  ["ab", "aXbY", "aXb", "aXbY"],
  // Both added at the same place: theirs came first.
  ["Daily", "Daily sync", "Daily standup", "Daily standup sync"],
  ["", "Ana", "Ben", "BenAna"],
  // The same change sent twice: made once.
  ["Daily", "Daily!", "Daily!", "Daily!"],
  ["ab", "aXb", "aXb", "aXb"],
  // The same characters changed on both sides: what either took out is out, what each put in stays.
  ["Daily", "Weekly", "Monthly", "MonthWeekly"],
  // One deleted a word while the other typed inside it: the word goes, the typing stays.
  ["Design review", "review", "DesZZZign review", "ZZZreview"],
  ["abcdef", "aXef", "abcYf", "aXYf"],
  ["Daily", "", "Dally", "l"],
  // A word taken out beside a word put in: each whole, never one inside the other.
  ["one two three", "one three", "one two 2 three", "one 2 three"],
  ["one two three", "one two 2 three", "one three", "one 2 three"],
  // Characters, never halves of one.
  ["👨‍👩‍👧", "👨‍👩‍👧 team", "Our 👨‍👩‍👧", "Our 👨‍👩‍👧 team"],
  ["e", "e\u0301", "ex", "e\u0301x"],
  // é typed as one scalar or as e and an accent is the same character.
  ["cafe\u0301", "caf\u00e9", "cafe\u0301!", "cafe\u0301!"],
  ["cafe\u0301", "cafe\u0301", "caf\u00e9!", "caf\u00e9!"],
  // A cluster of scripts other than Latin is one character too (Devanagari "kṣa").
  ["क्ष", "क्ष!", "¡क्ष", "¡क्ष!"],
];

for (const [base, mine, theirs, merged] of merges) {
  test(`${JSON.stringify(base)} + mine ${JSON.stringify(mine)} + theirs ${JSON.stringify(theirs)}`, () => {
    assert.equal(mergeText(base, mine, theirs).value, merged);
  });
}

test("the caret stays where this person was typing", () => {
  // Typing at the end while someone adds at the start: the caret moves with the text.
  assert.deepEqual(mergeText("Daily", "Daily sync", "Team Daily", 10), { value: "Team Daily sync", caret: 15 });
  // Typing at the start while someone adds at the end: the caret stays.
  assert.deepEqual(mergeText("Daily", "Team Daily", "Daily sync", 5), { value: "Team Daily sync", caret: 5 });
  // Both at the end: theirs first, the caret after what was typed here.
  assert.deepEqual(mergeText("Daily", "Daily sync", "Daily standup", 10), { value: "Daily standup sync", caret: 18 });
  // Nothing typed here since: the caret keeps its distance from the end after their change.
  assert.deepEqual(mergeText("Daily", "Daily", "Team Daily", 5), { value: "Team Daily", caret: 10 });
  assert.deepEqual(mergeText("Daily", "Daily", "Daily sync", 2), { value: "Daily sync", caret: 2 });
  // Changes in two places while theirs came between them: the caret after the last.
  assert.deepEqual(mergeText("abcdef", "XabcdefY", "abcZdef", 8), { value: "XabcZdefY", caret: 9 });
  assert.deepEqual(mergeText("abcdef", "XabcdefY", "abcZdef", 1), { value: "XabcZdefY", caret: 1 });
  // Inside text someone else replaced: after their text.
  assert.deepEqual(mergeText("Daily", "Daily", "Weekly", 2), { value: "Weekly", caret: 4 });
  // In UTF-16 units, as an input counts them: an emoji before the caret is eight.
  assert.deepEqual(mergeText("👨‍👩‍👧", "👨‍👩‍👧!", "Our 👨‍👩‍👧", 9), { value: "Our 👨‍👩‍👧!", caret: 13 });
});

test("a change whose answer was lost is told apart by whether the room holds it", () => {
  // It arrived, and others typed since, even right after it.
  assert.equal(holds("Design", "Design review", "Design review"), true);
  assert.equal(holds("Design", "Design review", "Design review!"), true);
  assert.equal(holds("Design", "Design review", "Weekly Design review"), true);
  assert.equal(holds("abc", "ac", "ac!"), true);
  // It did not: sending it again is what keeps it.
  assert.equal(holds("Design", "Design review", "Design"), false);
  assert.equal(holds("Design", "Design review", "Design!"), false);
  assert.equal(holds("abc", "ac", "abc!"), false);
});
