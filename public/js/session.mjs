// What this browser keeps of its sessions, for every tab: the name signed in under, the last
// sign-in, and how many sign-ins and sign-outs it has seen. A tab that heard nothing of them
// (away on another page, in the back/forward cache, or showing the sign-in page) learns from
// the counts what happened meanwhile (`tabtyping.mjs`).

/** The name this browser signed in under (`join.mjs`), or chose on an open server. */
export const NAME_KEY = "standups.name";
/** Set by whichever tab signs in, last: the others showing the sign-in page go back too. */
export const SIGNED_IN_KEY = "standups.signedInAt";
/** Set by a sign-out, until the next sign-in: nothing is kept for whoever comes next. */
export const SIGNED_OUT_KEY = "standups.signedOut";
/** Where a sign-out on its way keeps what it takes away (`forgetKept`) until the server has
 * answered: by key, the values it took. */
export const SET_ASIDE_KEY = "standups.signingOut";
/** How many sign-outs the server confirmed in this browser. */
const SIGN_OUTS_KEY = "standups.signOuts";
/** How many sign-ins, and the name of the last: `{ count, name }`. */
const SIGN_INS_KEY = "standups.signIns";

/** What a sign-out on its way set aside (`SET_ASIDE_KEY`), by key: `{}` when none. */
export function setAside(storage) {
  try {
    const aside = JSON.parse(storage.getItem(SET_ASIDE_KEY) ?? "{}");
    return aside && typeof aside === "object" ? aside : {};
  } catch {
    return {}; // not a record this page wrote
  }
}

export const signOuts = (storage) => Number.parseInt(storage.getItem(SIGN_OUTS_KEY) ?? "0", 10) || 0;

/** A sign-out the server confirmed (or one never answered, counted at the next sign-in). */
export function countSignOut(storage) {
  storage.setItem(SIGN_OUTS_KEY, String(signOuts(storage) + 1));
}

/** The sign-ins so far, and who signed in last (`name`, null before any). */
export function signIns(storage) {
  try {
    const { count, name } = JSON.parse(storage.getItem(SIGN_INS_KEY) ?? "{}") ?? {};
    return { count: Number.isInteger(count) ? count : 0, name: typeof name === "string" ? name : null };
  } catch {
    return { count: 0, name: null }; // not a record this page wrote
  }
}

/** Someone signed in under `name`: counted, then the name, in that order (a tab that sees the
 * new name sees the sign-in with it). `SIGNED_IN_KEY` is the caller's to set, last. */
export function countSignIn(storage, name) {
  storage.setItem(SIGN_INS_KEY, JSON.stringify({ count: signIns(storage).count + 1, name }));
  if (name) storage.setItem(NAME_KEY, name);
}
