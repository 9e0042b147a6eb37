// Where a page was when its session ended (the invite rotated, the session expired, or it
// was never signed in), and what was typed there that the room never got: kept in this
// browser until the person is signed in again — from this tab or another, such as the
// invite link's page — for a day at most, then taken back to.
const KEY = "standups.afterSignIn";
/** Set by whichever tab signs in: the others showing the sign-in page go back too. */
export const SIGNED_IN_KEY = "standups.signedInAt";
const KEPT_FOR = 24 * 60 * 60 * 1000;

function read(storage) {
  try {
    const kept = JSON.parse(storage.getItem(KEY) ?? "null");
    return kept && Date.now() - kept.at < KEPT_FOR ? kept : null;
  } catch {
    return null;
  }
}

/**
 * Keeps the page's address (`hash`) and `typing`, `{ room, unsent, note }` (an edit form's
 * fields as `sayUnsentTyping` takes them, a note), if any. Typing kept before and not yet
 * taken stays when there is none now: a page asked to sign in twice keeps it.
 */
export function keepForSignIn(hash, typing = null, storage = localStorage, now = Date.now()) {
  const typed = typing && (typing.unsent.length > 0 || typing.note) ? typing : null;
  const kept = { hash, at: now, typing: typed ?? read(storage)?.typing ?? null };
  storage.setItem(KEY, JSON.stringify(kept));
  return kept;
}

/** Where the invite link's page goes once signed in: the page that asked, else the lobby. */
export function addressAfterSignIn(storage = localStorage) {
  const hash = read(storage)?.hash ?? "";
  return hash.startsWith("#/") ? `/${hash}` : "/";
}

/** The typing kept for `room`, once (the next to ask gets null). */
export function takeTyping(room, storage = localStorage) {
  const kept = read(storage);
  if (kept?.typing?.room !== room) return null;
  storage.setItem(KEY, JSON.stringify({ ...kept, typing: null }));
  return kept.typing;
}

/** Signed out on purpose: nothing typed stays behind in this browser for the next person. */
export function forgetKept(storage = localStorage) {
  storage.removeItem(KEY);
}
