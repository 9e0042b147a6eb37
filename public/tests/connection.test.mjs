import assert from "node:assert/strict";
import { test } from "node:test";
import { LIVENESS, connectionURL, liveness } from "../js/connection.mjs";

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

test("a first connection gives its name; a reconnect resumes and takes its old one's place", () => {
  const page = { protocol: "http:", host: "127.0.0.1:8080" };
  assert.equal(connectionURL(page, "/ws/lobby", { name: "Ana Lü" }), "ws://127.0.0.1:8080/ws/lobby?name=Ana+L%C3%BC");
  assert.equal(
    connectionURL({ protocol: "https:", host: "standups.example" }, "/ws/rooms/A1", { name: "Ana", since: 0, replaces: "p-1&x" }),
    "wss://standups.example/ws/rooms/A1?name=Ana&since=0&replaces=p-1%26x",
  );
});
