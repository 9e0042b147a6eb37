// The top bar's connection status, and "Reconnect now" while a reconnect waits.
import { retryEveryConnectionNow } from "./connection.mjs";

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

/** Shows `status` (a connection's, or "none"); "reconnecting" with the `delay` (ms) before
 * its next try counts that down. */
export function setStatus(status, delay) {
  clearInterval(countdown);
  const waiting = status === "reconnecting" && delay > 0;
  if (waiting) showWait(Date.now() + delay);
  else statusBadge.textContent = TEXT[status];
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

/** "Reconnecting in 8 s…", counted down to the try at `at`. A screen reader hears the wait
 * once, as it begins (the status is a live region), not each second of it; a phone reads
 * "Retrying", which fits its top bar. */
function showWait(at) {
  const seconds = () => String(Math.max(1, Math.ceil((at - Date.now()) / 1000)));
  statusBadge.innerHTML = `<span class="visually-hidden">Reconnecting in ${seconds()} s</span>`
    + `<span aria-hidden="true"><span class="wide">Reconnecting</span><span class="narrow">Retrying</span>`
    + ` in <span class="seconds">${seconds()}</span> s…</span>`;
  const shown = statusBadge.querySelector(".seconds");
  countdown = setInterval(() => { shown.textContent = seconds(); }, 250);
}
