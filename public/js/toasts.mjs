// Toasts: short notices at the top of the page, under its bar (at the very top once the bar has
// scrolled away), each for a few seconds, at most three — but for those that hold the only copy
// of something typed, which stay until the person is done with them (or, for a note set aside,
// a while longer than a notice). On a phone, the page makes room for those under its bar rather
// than lie under them.
import { say } from "./said.mjs";

const toasts = document.getElementById("toasts");
const bar = document.querySelector("header.top");

/** Puts the toasts under the page's bar as much of it as is in sight: never over the
 * connection's status and the person's name, nor lower than they need be. Those that stay
 * (holding typing) come first, and the page leaves room for them (`--kept-toasts`, used on a
 * phone, where they would lie over the room's title and its links for as long as they stay). */
function placeToasts() {
  const kept = [...toasts.children].filter(holdsTyping);
  const room = kept.length
    ? Math.max(...kept.map((item) => item.getBoundingClientRect().bottom)) - toasts.getBoundingClientRect().top : 0;
  // NB: and as much again under them as they are under the bar (.5rem).
  document.body.style.setProperty("--kept-toasts", `${room > 0 ? Math.ceil(room) + 8 : 0}px`);
  if (!toasts.children.length || !bar) return;
  toasts.style.setProperty("--bar-in-sight", `${Math.max(0, bar.getBoundingClientRect().bottom)}px`);
}
addEventListener("scroll", placeToasts, { passive: true });
addEventListener("resize", placeToasts);
// NB: the bar may grow (a phone narrower than the bar's one line); a toast that stays grows as
// its text wraps, and goes by itself (`item.remove()`).
if (bar) new ResizeObserver(placeToasts).observe(bar);
new ResizeObserver(placeToasts).observe(toasts);
new MutationObserver(placeToasts).observe(toasts, { childList: true });

/** Shows `message` for 5 s (until dismissed, with `holdsTyping`: see `keepSaying`; or for
 * `lasts` ms as well); returns its element. */
export function toast(message, { kind, holdsTyping: holding = false, lasts = null } = {}) {
  // The same message again (a burst of refusals), or another of the same `kind`, renews the
  // one showing — never one that holds typing (`keepSaying`): its text and button stay.
  let item = holding ? null : [...toasts.children].find((shown) => !holdsTyping(shown)
    && (shown.textContent === message || (kind && shown.dataset.kind === kind)));
  // NB: said apart from the toast (`say`): not with its buttons' names, and heard while a
  // modal dialog hides the page.
  say(message);
  if (item) {
    item.textContent = message;
  } else {
    item = document.createElement("div");
    item.className = "toast";
    item.textContent = message;
    if (kind) item.dataset.kind = kind;
    // NB: marked before the limit below: it is never the one pushed out.
    if (holding) {
      item.dataset.holdsTyping = "";
      const dismiss = document.createElement("button");
      dismiss.type = "button";
      dismiss.className = "dismiss";
      dismiss.textContent = "Dismiss";
      dismiss.onclick = () => {
        // NB: the keyboard was on the toast that goes: to where the page's work is.
        const hadKeyboard = item.contains(document.activeElement);
        takeDown(item);
        if (hadKeyboard) whereTheWorkIs()?.focus();
      };
      item.append(" ", dismiss);
    }
    toasts.append(item);
    placeToasts();
    // NB: the oldest notices go first, but the newest stays (what was just said); one that
    // holds typing goes only with its time.
    const notices = () => [...toasts.children].filter((shown) => !holdsTyping(shown));
    while (toasts.children.length > 3 && notices().length > 1) notices()[0].remove();
  }
  clearTimeout(item.timer);
  // NB: one that holds typing has no time limit (WCAG 2.2.1): it goes when dismissed or used —
  // unless it `lasts` (a note set aside: the person said it was not needed), then its time
  // stands still while it is pointed at or has the keyboard.
  if (!holding) item.timer = setTimeout(() => item.remove(), 5000);
  else if (lasts) goesAfter(item, lasts);
  return item;
}

/** Takes `item` down after `ms`, counted anew once it is neither pointed at nor has the
 * keyboard (its buttons about to be pressed). */
function goesAfter(item, ms) {
  const held = () => item.matches(":hover") || item.contains(document.activeElement);
  const hold = () => clearTimeout(item.timer);
  const run = () => {
    clearTimeout(item.timer);
    item.timer = setTimeout(() => (held() ? null : takeDown(item)), ms);
  };
  item.addEventListener("pointerenter", hold);
  item.addEventListener("focusin", hold);
  item.addEventListener("pointerleave", () => !held() && run());
  // NB: once the keyboard has left (`focusout` comes before it is elsewhere).
  item.addEventListener("focusout", () => setTimeout(() => item.isConnected && !held() && run()));
  run();
}

/** Where the keyboard goes from something that went under it (a toast, the late note's
 * form): the note being typed, else the screen's heading. */
export function whereTheWorkIs() {
  const shown = (element) => element && element.offsetParent !== null;
  return [document.querySelector("#late-note"), document.querySelector("#note"), document.querySelector("main h1")]
    .find(shown);
}

/** What makes a toast that holds typing moot, by toast: its room's id, and `moot(state)`. */
const mootWhen = new WeakMap();

/** A toast that holds the only copy of something typed (a note set aside, typing the form
 * closed under): it stays until dismissed (or its action is taken), and no other toast
 * takes its place or pushes it out — or, given `room` and `moot`, until a state of that room
 * holds what it holds (`withdrawMoot`: the typing reached the room after all, an Undo brought
 * it back, the note is shown again where it was typed); or, given `lasts`, for that long. */
export function keepSaying(message, { room, moot, ...options } = {}) {
  const item = toast(message, { ...options, holdsTyping: true });
  if (room && moot) mootWhen.set(item, { room, moot });
  return item;
}

/** Takes down the toasts holding typing that `state`, `room`'s, makes moot. */
export function withdrawMoot(room, state) {
  for (const item of [...toasts.children]) {
    const when = mootWhen.get(item);
    if (when && when.room === room && when.moot(state)) takeDown(item);
  }
}

/** Adds `button`, what can be done with the typing, to `item` (`keepSaying`'s), before its
 * Dismiss. */
export function offerInToast(item, button) {
  item.insertBefore(button, item.querySelector(".dismiss"));
}

const holdsTyping = (item) => "holdsTyping" in item.dataset;

/** Takes down one toast, if it still shows `message` (another may have taken its place). */
export function dismissToast(item, message) {
  if (item.textContent === message) takeDown(item);
}

/** Takes down the toast of `kind`, if one shows (what it said is overtaken). */
export function dismissToastOfKind(kind) {
  const item = [...toasts.children].find((shown) => shown.dataset.kind === kind && !holdsTyping(shown));
  if (item) takeDown(item);
}

/** Takes down the toasts showing (what they said is overtaken: a meeting ended) but those
 * that hold typing; with `typing`, those too (signed out: nothing typed is kept). */
export function dismissToasts({ typing = false } = {}) {
  [...toasts.children].filter((shown) => typing || !holdsTyping(shown)).forEach(takeDown);
}

function takeDown(item) {
  clearTimeout(item.timer);
  item.remove();
}
