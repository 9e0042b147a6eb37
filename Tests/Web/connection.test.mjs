import assert from "node:assert/strict";
import { test } from "node:test";
import { connectionURL } from "../../public/js/connection.mjs";
import { LIVENESS, TICKING_QUIET_MS, liveness, livenessFor, opening, ticking } from "../../public/js/liveness.mjs";

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

test("an opening with no welcome in 15 s is given up, however it went", () => {
  assert.equal(opening(1000, 0, limits), "wait");
  assert.equal(opening(14999, 0, limits), "wait");
  assert.equal(opening(15000, 0, limits), "lost");
});

test("a first connection gives its name; a reconnect resumes and takes its old one's place", () => {
  const page = { protocol: "http:", host: "127.0.0.1:8080" };
  assert.equal(connectionURL(page, "/ws/lobby", { name: "Ana Lü" }), "ws://127.0.0.1:8080/ws/lobby?name=Ana+L%C3%BC");
  assert.equal(
    connectionURL({ protocol: "https:", host: "standups.example" }, "/ws/rooms/A1", { name: "Ana", since: 0, replaces: "p-1&x" }),
    "wss://standups.example/ws/rooms/A1?name=Ana&since=0&replaces=p-1%26x",
  );
});

/** A page's globals for a `RoomConnection` in node: its sockets are recorded, not opened. */
function fakePage() {
  const sockets = [];
  const storage = new Map();
  globalThis.location = { protocol: "http:", host: "127.0.0.1:8080" };
  globalThis.sessionStorage = {
    getItem: (key) => storage.get(key) ?? null,
    setItem: (key, value) => storage.set(key, String(value)),
    removeItem: (key) => storage.delete(key),
  };
  globalThis.WebSocket = class {
    static CONNECTING = 0;
    static OPEN = 1;
    constructor(url) {
      this.url = url;
      this.readyState = 1;
      this.sent = [];
      sockets.push(this);
    }
    send(data) {
      this.sent.push(JSON.parse(data));
    }
    close() {
      this.readyState = 3;
    }
    /** The server's frame arriving. */
    hear(message) {
      this.onmessage({ data: JSON.stringify(message) });
    }
  };
  return sockets;
}

function tickPatch(version) {
  return { type: "patch", version, ops: [{ op: "replace", path: "/seconds", value: version }] };
}

/** A connection to room `id` on a fake page, welcomed at version 4; what it tells its view. */
async function welcomedConnection(t, id) {
  const { RoomConnection } = await import("../../public/js/connection.mjs");
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  const sockets = fakePage();
  const arrivals = [];
  const connection = new RoomConnection(`/ws/rooms/${id}`, "Ana", {
    onState: (state, you, arrival) => arrivals.push({ seconds: state.seconds, ...arrival }),
  });
  t.after(() => connection.close());
  sockets[0].hear({ type: "welcome", room: id, you: "u1", key: "k1", version: 4, state: { seconds: 4 } });
  return { sockets, arrivals, connection };
}

test("a drop in the middle of a replay: the next welcome's state is a step of it, drawn at its end", async (t) => {
  const { sockets, arrivals } = await welcomedConnection(t, "A1");
  sockets[0].hear(tickPatch(5));
  // Away, then back: the room went on to version 9 meanwhile.
  sockets[0].onclose({ code: 1006, reason: "" });
  t.mock.timers.tick(20000);
  assert.equal(sockets.length, 2);
  assert.match(sockets[1].url, /since=5&replaces=k1$/);
  sockets[1].hear({ type: "welcome", room: "A1", you: "u1", key: "k2", version: 5, resumed: true, latest: 9 });
  sockets[1].hear(tickPatch(6));
  sockets[1].hear(tickPatch(7));
  // Dropped again before the replay ended.
  sockets[1].onclose({ code: 1006, reason: "" });
  t.mock.timers.tick(20000);
  assert.match(sockets[2].url, /since=7&replaces=k2$/);
  sockets[2].hear({ type: "welcome", room: "A1", you: "u1", key: "k3", version: 7, resumed: true, latest: 9 });
  sockets[2].hear(tickPatch(8));
  sockets[2].hear(tickPatch(9));
  sockets[2].hear(tickPatch(10));
  const drawn = (arrival) => !arrival.replaying;
  assert.deepEqual(arrivals.map((a) => [a.seconds, Boolean(a.welcome), Boolean(a.replaying), Boolean(a.caughtUp)]), [
    [4, true, false, true],
    [5, false, false, false],
    [5, true, false, false], // the first resumed welcome: what the page already held
    [6, false, true, false],
    [7, false, true, false],
    [7, true, true, false], // mid-replay: not drawn alone
    [8, false, true, false],
    [9, false, false, true],
    [10, false, false, false],
  ]);
  assert.deepEqual(arrivals.filter(drawn).map((a) => a.seconds), [4, 5, 5, 9, 10]);
});

test("an action whose save may have landed is, to the page, one whose answer was lost", async (t) => {
  const { sockets, connection } = await welcomedConnection(t, "F6");
  const refused = connection.send({ type: "meeting.noteSubmitted", text: "one" });
  const unknown = connection.send({ type: "meeting.noteSubmitted", text: "two" });
  const [first, second] = sockets[0].sent.map((message) => message.ref);
  sockets[0].hear({ type: "error", ref: first, code: "storage_unavailable", message: "undone" });
  sockets[0].hear({ type: "error", ref: second, code: "outcome_unknown", message: "may have been saved" });
  await assert.rejects(refused, { code: "storage_unavailable", message: "undone" });
  // Looked for once the room is back (`sent`), as when a drop takes the answer.
  await assert.rejects(unknown, { code: "offline", sent: true, said: "outcome_unknown", message: "may have been saved" });
});

test("a drop in the middle of a replay whose next welcome has nothing more to replay is drawn", async (t) => {
  const { sockets, arrivals } = await welcomedConnection(t, "B2");
  sockets[0].onclose({ code: 1006, reason: "" });
  t.mock.timers.tick(20000);
  sockets[1].hear({ type: "welcome", room: "B2", you: "u1", key: "k2", version: 4, resumed: true, latest: 6 });
  sockets[1].hear(tickPatch(5));
  sockets[1].onclose({ code: 1006, reason: "" });
  t.mock.timers.tick(20000);
  // The room stood still since: the welcome is the end of the replay.
  sockets[2].hear({ type: "welcome", room: "B2", you: "u1", key: "k3", version: 5, resumed: true, latest: 5 });
  const last = arrivals.at(-1);
  assert.deepEqual([last.seconds, last.welcome, Boolean(last.replaying), last.caughtUp], [5, true, false, true]);
});

test("a page never let in gives up only once the server answers: one restarting is waited for", async (t) => {
  const { RoomConnection } = await import("../../public/js/connection.mjs");
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  const sockets = fakePage();
  let serverUp = false;
  const gone = [];
  const connection = new RoomConnection("/ws/rooms/C3", "Ana", {
    serverAnswers: async () => serverUp,
    onGone: (code, reason) => gone.push([code, reason]),
  });
  t.after(() => connection.close());
  const refuse = async () => {
    sockets.at(-1).onclose({ code: 1006, reason: "" });
    // The health check's answer (a promise), then the backoff.
    await new Promise((resolve) => setImmediate(resolve));
    t.mock.timers.tick(20000);
  };
  // The server is away (restarting): the page keeps knocking, as many times as it takes.
  for (let attempt = 0; attempt < 6; attempt++) await refuse();
  assert.equal(sockets.length, 7);
  assert.deepEqual(gone, []);
  // Back, and it still refuses this page: that is an answer.
  serverUp = true;
  await refuse();
  assert.equal(gone.length, 1);
  assert.match(gone[0][1], /cannot be opened/);
  assert.equal(sockets.length, 7);
});

test("a page the server lets in once it is back is in", async (t) => {
  const { RoomConnection } = await import("../../public/js/connection.mjs");
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  const sockets = fakePage();
  const gone = [];
  const states = [];
  const connection = new RoomConnection("/ws/rooms/D4", "Ana", {
    serverAnswers: async () => false,
    onGone: (code) => gone.push(code),
    onState: (state) => states.push(state),
  });
  t.after(() => connection.close());
  for (let attempt = 0; attempt < 4; attempt++) {
    sockets.at(-1).onclose({ code: 1006, reason: "" });
    await new Promise((resolve) => setImmediate(resolve));
    t.mock.timers.tick(20000);
  }
  sockets.at(-1).hear({ type: "welcome", room: "D4", you: "u1", key: "k1", version: 1, state: { seconds: 0 } });
  assert.deepEqual(gone, []);
  assert.deepEqual(states, [{ seconds: 0 }]);
});

test("an opening the network swallows is given up and tried again, never taken for a refusal", async (t) => {
  const { RoomConnection } = await import("../../public/js/connection.mjs");
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  let now = 0;
  t.mock.method(performance, "now", () => now);
  const sockets = fakePage();
  let asked = 0;
  const gone = [];
  const connection = new RoomConnection("/ws/rooms/E5", "Ana", {
    serverAnswers: async () => (asked++, true),
    onGone: (code) => gone.push(code),
  });
  t.after(() => connection.close());
  // Each opening hangs: no welcome, no close (a half-up network, a laptop waking).
  for (let attempt = 0; attempt < 4; attempt++) {
    sockets.at(-1).readyState = WebSocket.CONNECTING;
    t.mock.timers.tick(1000);
    assert.equal(sockets.length, attempt + 1, "given up too soon");
    now += 15000;
    t.mock.timers.tick(1000);
    assert.equal(sockets.at(-1).readyState, 3, "the hung opening was not closed");
    await new Promise((resolve) => setImmediate(resolve));
    t.mock.timers.tick(20000);
  }
  assert.equal(sockets.length, 5);
  // Once open, a welcome may be on its way (a large one, a slow link): it is waited for.
  sockets.at(-1).readyState = WebSocket.OPEN;
  now += 60000;
  t.mock.timers.tick(1000);
  assert.equal(sockets.length, 5);
  assert.equal(sockets.at(-1).readyState, WebSocket.OPEN);
  // Nothing refused it: no health check, and the page goes on trying.
  assert.equal(asked, 0);
  assert.deepEqual(gone, []);
  sockets.at(-1).hear({ type: "welcome", room: "E5", you: "u1", key: "k1", version: 1, state: { seconds: 0 } });
  assert.deepEqual(gone, []);
});

test("a page that was in, refused again and again, closes once its standup is gone, not before", async (t) => {
  const { RoomConnection } = await import("../../public/js/connection.mjs");
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  const sockets = fakePage();
  let missing = false;
  let asked = 0;
  const gone = [];
  const connection = new RoomConnection("/ws/rooms/F6", "Ana", {
    onRefused: async () => (asked++, missing),
    onGone: (code, reason) => gone.push([code, reason]),
  });
  t.after(() => connection.close());
  sockets[0].hear({ type: "welcome", room: "F6", you: "u1", key: "k1", version: 1, state: { seconds: 0 } });
  const refuse = async () => {
    sockets.at(-1).onclose({ code: 1006, reason: "" });
    // The app's answer (a promise), then the backoff.
    await new Promise((resolve) => setImmediate(resolve));
    t.mock.timers.tick(20000);
  };
  // Refused, the standup still there (a session to check, a server draining): it knocks on.
  for (let attempt = 0; attempt < 4; attempt++) await refuse();
  assert.ok(asked >= 2, "the app was never asked why");
  assert.deepEqual(gone, []);
  assert.equal(sockets.length, 5);
  // Deleted meanwhile: nothing left to knock on.
  missing = true;
  await refuse();
  assert.deepEqual(gone, [[4410, "This standup was deleted."]]);
  assert.equal(sockets.length, 5);
});

test("a page that was in knocks again when the look for its standup does not answer in time", async (t) => {
  const { RoomConnection } = await import("../../public/js/connection.mjs");
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  const sockets = fakePage();
  const gone = [];
  const connection = new RoomConnection("/ws/rooms/G7", "Ana", {
    onRefused: () => new Promise(() => {}), // a request that stalls
    onGone: (code) => gone.push(code),
  });
  t.after(() => connection.close());
  sockets[0].hear({ type: "welcome", room: "G7", you: "u1", key: "k1", version: 1, state: { seconds: 0 } });
  for (let attempt = 0; attempt < 4; attempt++) {
    sockets.at(-1).onclose({ code: 1006, reason: "" });
    await new Promise((resolve) => setImmediate(resolve));
    t.mock.timers.tick(5000);
    await new Promise((resolve) => setImmediate(resolve));
    t.mock.timers.tick(20000);
  }
  assert.equal(sockets.length, 5);
  assert.deepEqual(gone, []);
});

test("a running meeting is heard from every second: 3 s of quiet is already worth a ping", () => {
  assert.equal(TICKING_QUIET_MS, 3000);
  const running = { meeting: { isPaused: false, alert: null } };
  assert.equal(ticking(running), true);
  const tickingLimits = livenessFor(running, limits);
  assert.deepEqual(tickingLimits, { quietMs: 3000, answerMs: 5000 });
  // Paused, asked to end (ticks are not sent then), no meeting, the lobby: 10 s as anywhere.
  for (const state of [{ meeting: { isPaused: true, alert: null } }, { meeting: { isPaused: false, alert: "endMeeting" } },
    { meeting: null }, { standups: [] }, null]) {
    assert.deepEqual(livenessFor(state, limits), limits, JSON.stringify(state));
    assert.equal(ticking(state), false, JSON.stringify(state));
  }
  // Shortened further by the browser tests, never lengthened.
  assert.deepEqual(livenessFor({ meeting: { isPaused: false } }, { quietMs: 1500, answerMs: 1500 }), { quietMs: 1500, answerMs: 1500 });
  assert.equal(liveness(2999, 0, null, tickingLimits), "wait");
  assert.equal(liveness(3000, 0, null, tickingLimits), "ping");
  assert.equal(liveness(7999, 0, 3000, tickingLimits), "wait");
  assert.equal(liveness(8000, 0, 3000, tickingLimits), "lost");
});

test("a running meeting's clock that stops is not shown live while the page asks; a quiet room is only asked", async (t) => {
  const { RoomConnection } = await import("../../public/js/connection.mjs");
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  let now = 0;
  t.mock.method(performance, "now", () => now);
  const sockets = fakePage();
  const statuses = [];
  const connection = new RoomConnection("/ws/rooms/G7", "Ana", { onStatus: (status) => statuses.push(status) });
  t.after(() => connection.close());
  const running = { seconds: 4, meeting: { isPaused: false, alert: null } };
  sockets[0].hear({ type: "welcome", room: "G7", you: "u1", key: "k1", version: 4, state: running });
  assert.deepEqual(statuses, ["connecting", "live"]);
  // No tick for 3 s (a frozen server, a silent network): asked, and not "Live" meanwhile.
  now = 3000;
  t.mock.timers.tick(1000);
  assert.equal(sockets[0].sent.at(-1).type, "ping");
  assert.deepEqual(statuses.slice(2), ["quiet"]);
  // The answer (or the next tick): live again.
  sockets[0].hear({ type: "pong", ref: sockets[0].sent.at(-1).ref });
  assert.deepEqual(statuses.slice(2), ["quiet", "live"]);
  sockets[0].hear(tickPatch(5));
  assert.deepEqual(statuses.slice(2), ["quiet", "live"]);
  // Paused: quiet for 10 s is asked about, with nothing said (no clock has stopped).
  sockets[0].hear({ type: "patch", version: 6, ops: [{ op: "replace", path: "/meeting/isPaused", value: true }] });
  now += 10000;
  t.mock.timers.tick(1000);
  assert.equal(sockets[0].sent.at(-1).type, "ping");
  assert.deepEqual(statuses.slice(2), ["quiet", "live"]);
});
