// The top bar's connection status, and "Retry now" while a reconnect waits.
import { retryEveryConnectionNow } from "./connection.mjs";
import { sayInDialog } from "./said.mjs";

const statusBadge = document.getElementById("status");
const reconnectNow = document.getElementById("reconnect-now");
// NB: the button goes as it is pressed (a try starts): the keyboard goes to the heading.
reconnectNow.onclick = () => {
  document.querySelector("#app h1")?.focus({ preventScroll: true });
  retryEveryConnectionNow();
};
/** Counts a reconnect's wait down, each second on screen. */
let countdown = 0;

const TEXT = {
  connecting: "Connecting…",
  live: "Live",
  quiet: "No word from the server…", // a ticking room's clock stopped: asked whether it is there
  reconnecting: "Reconnecting…",
  closed: "Disconnected",
  "signed-out": "Signed out",
  // A page with nothing to connect to (a standup deleted or not found, signing in).
  none: "",
};

/** Statuses a screen reader is told of as they come: what is wrong with a connection, and
 * "Live" once it is over. A screen's ordinary connecting ("Connecting…", then "Live") is not
 * said: it came with every screen change, and said nothing the person did not know; nor is
 * being signed out, which the sign-in page says. */
const TROUBLE = new Set(["quiet", "reconnecting", "closed"]);
const statusSaid = document.getElementById("status-said");
/** The last status told, while it is a trouble not yet over. */
let troubleSaid = null;

/** Shows `status` (a connection's, or "none"); "reconnecting" with the `delay` (ms) before
 * its next try counts that down. */
export function setStatus(status, delay) {
  clearInterval(countdown);
  const waiting = status === "reconnecting" && delay > 0;
  if (waiting) showWait(Date.now() + delay);
  else statusBadge.textContent = TEXT[status];
  // NB: a reconnect's next try is not said again: the wait is heard as it begins.
  if (TROUBLE.has(status) && status !== troubleSaid) {
    tell(waiting ? `Retrying in ${secondsUntil(Date.now() + delay)} s` : TEXT[status]);
    troubleSaid = status;
  } else if (status === "live" && troubleSaid) {
    tell(TEXT.live);
    troubleSaid = null;
  } else if (status === "none" || status === "signed-out") {
    // NB: a page with nothing to connect to (a standup deleted, signing in) says why itself:
    // what was told of the last connection is over, and the next screen's is its own.
    statusSaid.textContent = "";
    troubleSaid = null;
  }
  statusBadge.dataset.status = status;
  statusBadge.hidden = status === "none";
  // NB: while reconnecting, the button keeps its place, shown only for a wait worth skipping:
  // a top bar that grew and shrank with each try would move the whole page (on a phone, by
  // a row or two).
  reconnectNow.hidden = status !== "reconnecting";
  reconnectNow.classList.toggle("idle", !(waiting && delay >= 2000));
  // NB: the page's live parts say they are as last heard while this is not "live" (app.css).
  document.body.dataset.connection = status;
}

/** Tells a screen reader `text`, in the open modal dialog too (which hides the top bar). */
function tell(text) {
  statusSaid.textContent = text;
  sayInDialog(text);
}

const secondsUntil = (at) => String(Math.max(1, Math.ceil((at - Date.now()) / 1000)));

/** "Retrying in 8 s…", counted down to the try at `at`: the same words on a phone's top bar
 * (where they fit on its one line) as on a laptop's, and to a screen reader. */
function showWait(at) {
  // NB: one flex item (the badge spaces its items apart): the words stay together.
  statusBadge.innerHTML = `<span>Retrying in <span class="seconds">${secondsUntil(at)}</span> s…</span>`;
  const shown = statusBadge.querySelector(".seconds");
  countdown = setInterval(() => { shown.textContent = secondsUntil(at); }, 250);
}
