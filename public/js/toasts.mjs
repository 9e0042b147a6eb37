// Toasts: short notices at the bottom of the page (at the top on a phone), each for a few seconds, at most three.
const toasts = document.getElementById("toasts");

/** Shows `message` for 5 s; returns its element. */
export function toast(message, { kind } = {}) {
  // The same message again (a burst of refusals), or another of the same `kind`, renews the
  // one showing; at most three show.
  let item = [...toasts.children].find((shown) =>
    shown.textContent === message || (kind && shown.dataset.kind === kind));
  if (item) {
    item.textContent = message;
  } else {
    item = document.createElement("div");
    item.className = "toast";
    item.setAttribute("role", "status");
    item.textContent = message;
    if (kind) item.dataset.kind = kind;
    toasts.append(item);
    while (toasts.children.length > 3) toasts.firstElementChild.remove();
  }
  clearTimeout(item.timer);
  item.timer = setTimeout(() => item.remove(), 5000);
  return item;
}

/** Takes down one toast, if it still shows `message` (another may have taken its place). */
export function dismissToast(item, message) {
  if (item.textContent === message) takeDown(item);
}

/** Takes down the toast of `kind`, if one shows (what it said is overtaken). */
export function dismissToastOfKind(kind) {
  const item = [...toasts.children].find((shown) => shown.dataset.kind === kind);
  if (item) takeDown(item);
}

/** Takes down the toasts showing (what they said is overtaken: a meeting ended). */
export function dismissToasts() {
  [...toasts.children].forEach(takeDown);
}

function takeDown(item) {
  clearTimeout(item.timer);
  item.remove();
}

