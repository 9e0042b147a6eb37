import { test } from "node:test";
import assert from "node:assert/strict";
import { characterCount, overflowAfter, limitMessage, overLimitMessage } from "../../public/js/limits.mjs";

const x = (count) => "x".repeat(count);

test("an insertion that fits is let through", () => {
  assert.equal(overflowAfter({ value: x(995), selectionStart: 995, selectionEnd: 995, inserted: "abcde", max: 1000 }), null);
  // Replacing a selection frees its length first.
  assert.equal(overflowAfter({ value: x(1000), selectionStart: 0, selectionEnd: 40, inserted: x(40), max: 1000 }), null);
});

test("an insertion that would go over the limit says how long it would make the field", () => {
  assert.equal(overflowAfter({ value: x(1000), selectionStart: 1000, selectionEnd: 1000, inserted: "a", max: 1000 }), 1001);
  assert.equal(overflowAfter({ value: x(10), selectionStart: 2, selectionEnd: 5, inserted: x(40), max: 40 }), 47);
  // A selection made from the end backwards counts the same.
  assert.equal(overflowAfter({ value: x(10), selectionStart: 5, selectionEnd: 2, inserted: x(40), max: 40 }), 47);
});

test("no limit, no overflow", () => {
  assert.equal(overflowAfter({ value: x(10), selectionStart: 10, selectionEnd: 10, inserted: x(5000), max: -1 }), null);
});

test("characters count as people see them, as the server counts them", () => {
  const family = "👨‍👩‍👧"; // three people joined: eight UTF-16 units, one character
  assert.equal(family.length, 8);
  assert.equal(characterCount(family), 1);
  assert.equal(characterCount("e\u0301"), 1); // e and a combining acute accent
  assert.equal(characterCount("🇳🇴 Standup"), 9); // a flag is two regional indicators
  // A title of 99 characters takes a family emoji as its hundredth…
  assert.equal(overflowAfter({ value: x(99), selectionStart: 99, selectionEnd: 99, inserted: family, max: 100 }), null);
  // …and not a second one. (A selection is in UTF-16 units, as the field gives it.)
  const full = x(99) + family;
  assert.equal(overflowAfter({ value: full, selectionStart: full.length, selectionEnd: full.length, inserted: family, max: 100 }), 101);
  // An accent typed after a letter joins it: it adds no character.
  assert.equal(overflowAfter({ value: x(40), selectionStart: 40, selectionEnd: 40, inserted: "\u0301", max: 40 }), null);
});

test("a field named by its label says which it is (the message may show away from it)", () => {
  assert.equal(limitMessage(100, 101, "Title", { typed: true }), "“Title” holds 100 characters at most.");
  assert.equal(
    limitMessage(40, 308, "Attendee name"),
    "That would make 308 characters; “Attendee name” holds 40 at most. Nothing was added.");
});

test("what the field says: a key at the limit, or a paste that would not fit (even by one)", () => {
  assert.equal(limitMessage(40, 41, null, { typed: true }), "This field holds 40 characters at most.");
  assert.equal(
    limitMessage(1000, 1200),
    "That would make 1200 characters; this field holds 1000 at most. Nothing was added.");
  assert.equal(
    limitMessage(1000, 1001),
    "That would make 1001 characters; this field holds 1000 at most. Nothing was added.");
});

test("a field that went over (a composition, autofill) says how many it has, and keeps them", () => {
  assert.equal(overLimitMessage(100, 104, "Title"), "“Title” has 104 characters; it holds 100 at most.");
  assert.equal(overLimitMessage(40, 41), "This field has 41 characters; it holds 40 at most.");
});
