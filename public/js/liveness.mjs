// Whether a room's connection still reaches the server (for connection.mjs): how long it may
// be quiet before the page asks, and how long the answer may take.

/**
 * How long a connection may stay quiet before the page asks whether it still reaches the
 * server (a `ping`, answered with `pong`), and how long the answer may take before the
 * connection counts as lost. A page cannot see WebSocket pings: a network that went silent
 * without closing anything (a Wi-Fi switch, a VPN that dropped) would otherwise read "Live"
 * for good. (The browser tests shorten both through `window.standupsLiveness`.)
 */
export const LIVENESS = { quietMs: 10000, answerMs: 5000, ...(globalThis.standupsLiveness ?? {}) };
/** Quiet enough to ask, in a room whose meeting ticks every second. */
export const TICKING_QUIET_MS = 3000;

/** The limits for a connection whose room is in `state`: a meeting that runs ticks every
 * second, so 3 s without a word is already quiet there. */
export function livenessFor(state, limits = LIVENESS) {
  return ticking(state) ? { ...limits, quietMs: Math.min(limits.quietMs, TICKING_QUIET_MS) } : limits;
}

/** Whether the room in `state` has a meeting whose clock the server moves every second. */
export function ticking(state) {
  const meeting = state?.meeting;
  return Boolean(meeting && !meeting.isPaused && !meeting.alert);
}

/** What a connection last heard at `heardAt` (and pinged at `pingedAt`, or null) does now. */
export function liveness(now, heardAt, pingedAt, { quietMs, answerMs } = LIVENESS) {
  if (pingedAt !== null) return now - pingedAt >= answerMs ? "lost" : "wait";
  return now - heardAt >= quietMs ? "ping" : "wait";
}

/**
 * Whether an opening that began at `openedAt`, its handshake not finished, is given up: after
 * as long as a quiet connection is given in all (10 s, then 5 s for the answer). A network
 * that came back half-way (a laptop waking, a VPN half up) may swallow the opening handshake
 * without closing anything, and the browser would wait minutes before it said so.
 */
export function opening(now, openedAt, { quietMs, answerMs } = LIVENESS) {
  return now - openedAt >= quietMs + answerMs ? "lost" : "wait";
}

/**
 * `fetch`, given up (a TimeoutError, as a network error) when no answer came within as long as
 * an opening is given (`opening`): a network that came back half-way may take the request and
 * never answer nor close, and the browser would wait minutes — a page "Joining…" for good.
 */
export function fetchAnswered(resource, options = {}, { quietMs, answerMs } = LIVENESS) {
  return fetch(resource, { ...options, signal: AbortSignal.timeout(quietMs + answerMs) });
}
