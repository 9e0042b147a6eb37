import assert from "node:assert/strict";
import { test } from "node:test";
import { LIVENESS, liveness } from "../js/connection.mjs";

const limits = { quietMs: 10000, answerMs: 5000 };

test("a connection heard from lately waits; one quiet for 10 s is pinged", () => {
  assert.deepEqual(LIVENESS, limits);
  assert.equal(liveness(1000, 0, null, limits), "wait");
  assert.equal(liveness(9999, 0, null, limits), "wait");
  assert.equal(liveness(10000, 0, null, limits), "ping");
});

test("a ping unanswered for 5 s means the connection is lost; until then it waits", () => {
  assert.equal(liveness(12000, 0, 10000, limits), "wait");
  assert.equal(liveness(14999, 0, 10000, limits), "wait");
  assert.equal(liveness(15000, 0, 10000, limits), "lost");
  // A timer that ran late (a tab in the background) still gives the answer its 5 s.
  assert.equal(liveness(70000, 0, 69000, limits), "wait");
});
