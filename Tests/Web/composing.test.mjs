import assert from "node:assert/strict";
import { test } from "node:test";
import { compositionGuard } from "../../public/js/composing.mjs";

test("a step runs at once when no input method composes", () => {
  const guard = compositionGuard(new EventTarget());
  const ran = [];
  guard.after(() => ran.push("now"));
  assert.deepEqual(ran, ["now"]);
  assert.equal(guard.composing, false);
});

test("steps wait for the composition to end, then run once each, in order", () => {
  const input = new EventTarget();
  const guard = compositionGuard(input);
  const ran = [];
  input.dispatchEvent(new Event("compositionstart"));
  assert.equal(guard.composing, true);
  guard.after(() => ran.push("first"));
  guard.after(() => ran.push("second"));
  assert.deepEqual(ran, []);
  input.dispatchEvent(new Event("compositionend"));
  assert.deepEqual(ran, ["first", "second"]);
  assert.equal(guard.composing, false);
  // A second composition's end runs nothing again.
  input.dispatchEvent(new Event("compositionstart"));
  input.dispatchEvent(new Event("compositionend"));
  assert.deepEqual(ran, ["first", "second"]);
});

test("a composition that starts again while steps run holds the rest until it ends", () => {
  const input = new EventTarget();
  const guard = compositionGuard(input);
  const ran = [];
  input.dispatchEvent(new Event("compositionstart"));
  guard.after(() => {
    ran.push("first");
    input.dispatchEvent(new Event("compositionstart"));
    guard.after(() => ran.push("third"));
  });
  guard.after(() => ran.push("second"));
  input.dispatchEvent(new Event("compositionend"));
  assert.deepEqual(ran, ["first"]);
  input.dispatchEvent(new Event("compositionend"));
  assert.deepEqual(ran, ["first", "second", "third"]);
});
