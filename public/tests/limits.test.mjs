import { test } from "node:test";
import assert from "node:assert/strict";
import { overflowAfter, limitMessage } from "../js/limits.mjs";

test("an insertion that fits is let through", () => {
  assert.equal(overflowAfter({ length: 995, selectionStart: 995, selectionEnd: 995, inserted: 5, max: 1000 }), null);
  // Replacing a selection frees its length first.
  assert.equal(overflowAfter({ length: 1000, selectionStart: 0, selectionEnd: 40, inserted: 40, max: 1000 }), null);
});

test("an insertion that would go over the limit says how long it would make the field", () => {
  assert.equal(overflowAfter({ length: 1000, selectionStart: 1000, selectionEnd: 1000, inserted: 1, max: 1000 }), 1001);
  assert.equal(overflowAfter({ length: 10, selectionStart: 2, selectionEnd: 5, inserted: 40, max: 40 }), 47);
  // A selection made from the end backwards counts the same.
  assert.equal(overflowAfter({ length: 10, selectionStart: 5, selectionEnd: 2, inserted: 40, max: 40 }), 47);
});

test("no limit, no overflow", () => {
  assert.equal(overflowAfter({ length: 10, selectionStart: 10, selectionEnd: 10, inserted: 5000, max: -1 }), null);
});

test("a field named by its label says which it is (the message may show away from it)", () => {
  assert.equal(limitMessage(100, 101, "Title"), "“Title” holds 100 characters at most.");
  assert.equal(
    limitMessage(40, 308, "Attendee name"),
    "That would make 308 characters; “Attendee name” holds 40 at most. Nothing was added.");
});

test("what the field says: a key at the limit, or a paste that would not fit", () => {
  assert.equal(limitMessage(40, 41), "This field holds 40 characters at most.");
  assert.equal(
    limitMessage(1000, 1200),
    "That would make 1200 characters; this field holds 1000 at most. Nothing was added.");
});
