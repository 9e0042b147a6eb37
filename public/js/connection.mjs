// One live room (or the lobby): welcome + patches → state, actions → acks, and reconnects
// with backoff that resume from the last version held.
import { applyPatch } from "./jsonpatch.mjs";
import { backoff, wireJSON, within } from "./format.mjs";
import { LIVENESS, fetchAnswered, liveness, livenessFor, opening, ticking } from "./liveness.mjs";

/**
 * The WebSocket address of `path` on the page's server: `since`, the last version held, to
 * resume; `replaces`, the key (its welcome's `key`) of the connection this page had. A
 * network that went silent may have left that one open on the server, which would show
 * this person twice until it timed out; the new one takes its place.
 */
export function connectionURL({ protocol, host }, path, { name, since = null, replaces = null }) {
  const scheme = protocol === "https:" ? "wss:" : "ws:";
  const params = new URLSearchParams({ name });
  if (since !== null) params.set("since", String(since));
  if (replaces !== null) params.set("replaces", replaces);
  return `${scheme}//${host}${path}?${params}`;
}

/** The key of the connection each path last had on this page: a screen left (the lobby, then
 * back to a room) may have left it open on a silent network. Memory only (see `key`). */
const lastKeys = new Map();

/** How long a page that was in waits for the app to say why it is refused, before it knocks
 * again anyway. */
const REFUSAL_CHECK_MS = 5000;

/** The connections open on this page, for `retryEveryConnectionNow`. */
const connections = new Set();

/** Every connection waiting out its backoff to try again tries now: its person pressed
 * "Retry now", or — within a second, `spread` at random, so that a whole office's pages
 * do not all knock in the same instant — the browser is back online or the tab is shown
 * again. A failure after it still waits longer than the last. */
export function retryEveryConnectionNow({ spread = false } = {}) {
  for (const connection of connections) {
    if (spread) setTimeout(() => connection.retryNow(), Math.random() * 1000);
    else connection.retryNow();
  }
}

globalThis.addEventListener?.("online", () => retryEveryConnectionNow({ spread: true }));
globalThis.document?.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") retryEveryConnectionNow({ spread: true });
});

/** Whether the server says the standup of a room's socket (`/ws/rooms/{id}`) is not there:
 * its `/api/rooms/{id}` answers 404. */
export async function standupIsMissing(path) {
  if (!path.startsWith("/ws/rooms/")) return false;
  const room = path.replace("/ws/rooms/", "/api/rooms/");
  return fetchAnswered(`${room}/meetings?limit=1`, { credentials: "same-origin" })
    .then((response) => response.status === 404, () => false);
}

export class RoomConnection {
  /**
   * @param {string} path `/ws/lobby` or `/ws/rooms/{id}`
   * @param {object} handlers `onState(state, you, arrival)` (`arrival`: `welcome`, `whole`
   *   with a welcome's state; `replaying` for a patch a resumed welcome is followed by, before
   *   the last of them, and for a resumed welcome that a drop in such a replay led to, whose
   *   own replay goes on; `caughtUp` once the state is the room's as of the welcome: with it,
   *   or with the last of those patches), `onStatus(status, detail)`,
   *   `onError(error)` (an unanswered error), `onGone(code, reason)` (closed for good),
   *   `serverAnswers()` (a promise: whether the server is there at all, asked when this page
   *   is not let in again and again), `onRefused()` (a promise: whether there is nothing
   *   left to connect to, asked when a page that was in is not let in again and again)
   */
  constructor(path, name, handlers) {
    this.path = path;
    this.name = name;
    this.handlers = handlers;
    this.state = null;
    this.version = null;
    this.you = null;
    this.replayUntil = null;
    // A reload picks up where this tab was: resume from the last version it held, and take
    // the place of the connection it had (on a silent network the server may still hold
    // it). The key is kept only while the page is away and taken at once, so that a copy
    // of a live tab (Duplicate) never has it to push out the tab it was copied from.
    this.replacesKey = `standups.replaces:${path}`;
    this.key = sessionStorage.getItem(this.replacesKey) ?? lastKeys.get(path) ?? null;
    sessionStorage.removeItem(this.replacesKey);
    this.resumeKey = `standups.resume:${path}`;
    try {
      const saved = JSON.parse(sessionStorage.getItem(this.resumeKey) ?? "null");
      if (saved && Number.isSafeInteger(saved.version)) ({ state: this.state, version: this.version } = saved);
    } catch {
      sessionStorage.removeItem(this.resumeKey);
    }
    this.pending = new Map();
    this.attempt = 0;
    this.nextRef = 1;
    this.closed = false;
    /** A retry waits out its backoff (`retry`). */
    this.retrying = false;
    connections.add(this);
    this.open();
    this.watch = setInterval(() => this.check(), Math.min(1000, LIVENESS.answerMs / 2));
  }

  url() {
    return connectionURL(location, this.path, { name: this.name, since: this.version, replaces: this.key });
  }

  open() {
    this.retrying = false;
    this.handlers.onStatus?.(this.attempt === 0 ? "connecting" : "reconnecting");
    const socket = new WebSocket(this.url());
    this.socket = socket;
    this.welcomed = false;
    this.heardAt = performance.now();
    this.pingedAt = null;
    this.quiet = false;
    socket.onmessage = (event) => {
      this.heardAt = performance.now();
      this.pingedAt = null;
      if (this.quiet) this.handlers.onStatus?.("live");
      this.quiet = false;
      this.receive(JSON.parse(event.data));
    };
    socket.onclose = (event) => this.lost(event);
  }

  /** Asks a quiet connection whether it still reaches the server; one that does not answer
   * in time, or an opening not welcomed in time, is given up and opened anew (`since=`, as
   * after any drop). */
  check() {
    const socket = this.socket;
    if (this.closed || !socket) return;
    // NB: a socket closed already has told `lost` (a retry may be waiting): nothing to do.
    if (socket.readyState !== WebSocket.OPEN && socket.readyState !== WebSocket.CONNECTING) return;
    const now = performance.now();
    // NB: only a handshake that never finished: once open, a welcome may be on its way (a
    // large one, over a slow link), and the server is there.
    if (socket.readyState === WebSocket.CONNECTING) {
      if (opening(now, this.heardAt) === "lost") this.giveUp(socket, "The server did not answer.", true);
      return;
    }
    if (!this.welcomed) return;
    switch (liveness(now, this.heardAt, this.pingedAt, livenessFor(this.state))) {
      case "ping":
        this.pingedAt = now;
        socket.send(JSON.stringify({ type: "ping", ref: `p-${this.nextRef++}` }));
        // NB: a clock that stopped (a frozen server, a silent network) is not shown as live
        // while the page waits for the answer; a quiet room with no clock is only asked.
        this.quiet = ticking(this.state);
        if (this.quiet) this.handlers.onStatus?.("quiet");
        break;
      case "lost":
        this.giveUp(socket, "The connection stopped answering.");
        break;
    }
  }

  /** Ends `socket` here and now: a silent network may never deliver its close. */
  giveUp(socket, reason, unanswered = false) {
    socket.onmessage = null;
    socket.onclose = null;
    socket.close(socket.readyState === WebSocket.OPEN ? 1000 : undefined);
    this.lost({ code: 1006, reason, unanswered });
  }

  receive(message) {
    switch (message.type) {
      case "welcome":
        this.welcomed = true;
        this.you = message.you;
        this.key = message.key ?? null;
        this.attempt = 0;
        if (!message.resumed) this.state = message.state;
        this.version = message.version;
        this.resumed = Boolean(message.resumed);
        // Dropped again in the middle of a replay: this welcome's state is a step of it.
        const midReplay = this.replayUntil !== null && Boolean(message.resumed);
        // Resumed: the patches up to `latest` replay what happened while this page was away.
        // (A server from before `latest` replays without saying: each patch is drawn.)
        this.replayUntil = message.resumed && message.latest > message.version ? message.latest : null;
        this.handlers.onStatus?.("live");
        this.remember();
        // A whole state (not resumed) may be a room opened afresh: its numbers start over.
        this.handlers.onState?.(this.state, this.you, {
          whole: !message.resumed,
          welcome: true,
          replaying: midReplay && this.replayUntil !== null,
          caughtUp: this.replayUntil === null,
        });
        break;
      case "patch":
        if (message.version !== this.version + 1) {
          // A gap should never happen; start over with a whole state.
          this.version = null;
          this.socket.close();
          return;
        }
        this.state = applyPatch(this.state, message.ops);
        this.version = message.version;
        this.remember();
        const caughtUp = this.replayUntil !== null && this.version >= this.replayUntil;
        if (caughtUp) this.replayUntil = null;
        // NB: a view may skip drawing a replayed state; the last one is drawn as any other.
        this.handlers.onState?.(this.state, this.you, { replaying: this.replayUntil !== null, caughtUp });
        break;
      case "ack":
      case "history":
        this.settle(message.ref, (pending) => pending.resolve(message));
        break;
      case "error": {
        // NB: `field` names the form's field a refused save is about (`title`, `attendee:<id>`).
        // One the server could not tell the fate of (`outcome_unknown`: the database went
        // while it saved) is, to the page, one whose answer was lost: `offline`, sent, and
        // looked for in the room once it is back, never sent again blindly.
        const error =
          message.code === "outcome_unknown"
            ? Object.assign(new Error(message.message), { code: "offline", sent: true, said: message.code })
            : Object.assign(new Error(message.message), { code: message.code, field: message.field });
        if (message.ref && this.pending.has(message.ref)) {
          this.settle(message.ref, (pending) => pending.reject(error));
        } else if (message.ref?.startsWith("p-")) {
          // A ping refused (a server from before pings, or over the rate): it was answered,
          // which is all a ping asks; nobody did anything to be told of.
        } else {
          this.handlers.onError?.(error);
        }
        break;
      }
    }
  }

  remember() {
    try {
      sessionStorage.setItem(this.resumeKey, JSON.stringify({ version: this.version, state: this.state }));
    } catch {
      // Storage full or unavailable: reloads start from a whole state instead.
    }
  }

  settle(ref, body) {
    const pending = this.pending.get(ref);
    if (!pending) return;
    this.pending.delete(ref);
    body(pending);
  }

  /** Sends an action; resolves with its ack, rejects with the server's error. */
  send(action) {
    return this.request({ type: "action", action });
  }

  /** Asks for a page of saved meetings (newest first); resolves with the `history` answer. */
  history(offset, limit = 20) {
    return this.request({ type: "history", offset, limit });
  }

  request(message) {
    const ref = `c-${this.nextRef++}`;
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
        // NB: `sent: false`: it never left, unlike one whose answer a drop lost.
        reject(Object.assign(new Error("Not connected: try again in a moment."), { code: "offline", sent: false }));
        return;
      }
      this.pending.set(ref, { resolve, reject });
      this.socket.send(wireJSON({ ...message, ref }));
    });
  }

  lost(event) {
    for (const pending of this.pending.values()) {
      pending.reject(Object.assign(new Error("The connection dropped."), { code: "offline" }));
    }
    this.pending.clear();
    if (this.closed) return;
    if (event.code === 4410 || event.code === 4401 || event.code === 1008) {
      this.closed = true;
      this.handlers.onGone?.(event.code, event.reason);
      return;
    }
    // 1012: the server restarts, or the standup moves to another server of a cluster — it
    // is there again in a moment, so this is never a refusal for good. Nor is an opening
    // that had no answer in time (`unanswered`): a refusal answers.
    const moving = event.code === 1012 || event.unanswered === true;
    // Never in, and not let in again (an unknown room answers 404, which browsers report as a
    // bare close, as they do a server that is not there): do not knock forever — unless the
    // server is away (restarting, or the network), which is no refusal.
    if (!moving && this.you === null && this.attempt >= 2) {
      this.refusedOrAway();
      return;
    }
    // In before, refused now: the app checks whether the session ended, or the standup went
    // (deleted while this page was away: its room answers 404, a bare close, for good).
    if (!moving && !this.welcomed && this.attempt >= 2) {
      this.refusedAfterBeingIn();
      return;
    }
    this.retry();
  }

  /** Refused again after having been in: closed for good if the app finds nothing left to
   * connect to (`onRefused` answers true), tried again otherwise. */
  async refusedAfterBeingIn() {
    // NB: an answer that does not come in time (a stalled request) is no reason to stop trying.
    const gone = await within(Promise.resolve(this.handlers.onRefused?.() ?? false).catch(() => false), REFUSAL_CHECK_MS);
    if (this.closed) return;
    if (gone) {
      // NB: this page was in it, so it was there: deleted since, as a 4410 would have said.
      this.closed = true;
      this.handlers.onGone?.(4410, "This standup was deleted.");
      return;
    }
    this.retry();
  }

  retry() {
    const delay = backoff(this.attempt++);
    this.retrying = true;
    this.handlers.onStatus?.("reconnecting", delay);
    this.timer = setTimeout(() => this.open(), delay);
  }

  /** Tries again at once if a retry is waiting out its backoff (`retryEveryConnectionNow`). */
  retryNow() {
    if (this.closed || !this.retrying) return;
    clearTimeout(this.timer);
    this.open();
  }

  /** A connection never let in: closed for good if the server answers (`serverAnswers`: its
   * health check), so that it refused this page; tried again later if it does not. */
  async refusedOrAway() {
    const answers = await (this.handlers.serverAnswers?.() ?? true);
    if (this.closed) return;
    if (!answers) {
      this.retry();
      return;
    }
    this.closed = true;
    this.handlers.onGone?.(0, "This cannot be opened: the standup may have been deleted, or the server refused you.");
  }

  /** Whether what is sent now reaches the server (not while reconnecting). */
  get isOpen() {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  close() {
    this.closed = true;
    connections.delete(this);
    if (this.key !== null) lastKeys.set(this.path, this.key);
    clearInterval(this.watch);
    // A page put away keeps what it held, so that coming back (or reloading) resumes.
    if (!this.suspended) sessionStorage.removeItem(this.resumeKey);
    clearTimeout(this.timer);
    this.socket?.close(1000);
  }

  /** The page is put away (reload, back/forward cache): leave, but keep what to resume from. */
  suspend() {
    this.suspended = true;
    try {
      if (this.key !== null) sessionStorage.setItem(this.replacesKey, this.key);
    } catch {
      // Storage full or unavailable: a reload then cannot name this connection.
    }
    this.close();
  }
}
