// The page around every screen: status badge, who you are, connections, actions (and the
// toasts of toasts.mjs, for the screens).
import { forgetKept, keepForSignIn, keepLeftTyping, renamed, signOutDone, signOutFailed } from "./comeback.mjs";
import { RoomConnection, standupIsMissing } from "./connection.mjs";
import { BLANK_NAME, escapeHTML, wireJSON, within } from "./format.mjs";
import { fetchAnswered } from "./liveness.mjs";
import { SIGNED_IN_KEY } from "./session.mjs";
import { setStatus } from "./status.mjs";
import { typedInClosedTabs } from "./tabtyping.mjs";
import { dismissToasts, toast, withdrawMoot } from "./toasts.mjs";
import {
  answerOtherTabs, forgetTyping, lostWithTheTab, typedHere, typedList, typingInOtherTabs,
} from "./typed.mjs";
export { setStatus } from "./status.mjs";
export { dismissToast, dismissToastOfKind, dismissToasts, keepSaying, offerInToast, toast, whereTheWorkIs } from "./toasts.mjs";

export const app = document.getElementById("app");
/** The screen showing now: its connection and view. */
let current = null;
let router = () => {};

/** Registers what draws the screen for the address (app.mjs's `route`). */
export function setRouter(route) {
  router = route;
}

/** Draws the screen for the address again (a Reconnect button). */
export const reroute = () => router();

/** Counts screens, so that one whose `await` finishes after the next began does nothing. */
let screens = 0;

/** Typing that still waits for its pause goes out now: it reaches the server before the
 * close that follows (leaving the room, putting the page away). */
function sendPendingTyping({ keepTyping = true } = {}) {
  // NB: read first: the form's typing the room had not answered, whether it goes now or
  // cannot (offline, over a limit) — a connection that looks open may be gone. This tab keeps
  // it, and offers back what the room turns out not to hold when it is open here again.
  const typing = current?.view?.typingToKeep?.();
  current?.view?.text?.sendNow();
  if (keepTyping && current) keepLeftTyping(typing);
}

/** Closes the screen's connection: a new screen comes. `keepTyping` false: the caller
 * keeps (or drops) the form's typing the room had not answered. */
export function leave({ keepTyping = true } = {}) {
  sendPendingTyping({ keepTyping });
  current?.connection.close();
  current = null;
}

/** Leaves the current screen and starts the next; returns its number. */
export function beginScreen() {
  leave();
  return ++screens;
}

/** The view of the screen showing now, if it is a room's (`id`): a toast outlives the
 * screen it was made on, and acts through the one showing when it is used. */
export function currentRoomView(id) {
  return current?.view?.id === id ? current.view : null;
}

/** Whether `screen` is still the one showing (no route came since it began). */
export function isShowing(screen) {
  return screen === screens;
}

/** The page is put away: its connection leaves the room, keeping what to resume from. */
export function suspend() {
  sendPendingTyping();
  current?.connection.suspend();
}

// The tabs of this browser answer each other: a sign-out in one names what all of them hold.
answerOtherTabs(() => lostWithTheTab(current?.view?.typingToKeep?.(), sessionStorage, "in another tab"));

/** This tab's sign-out on its way: the server closes the room (4401) before it answers. */
let signingOut = null;
/** Why the last `whoAmI` found nobody signed in, for the sign-in page. */
let signInReason = "";
/** The name of a session a bot's name took since, which may choose another; else null. */
let renamableName = null;

/**
 * Who this person is: the name their session carries, or on an open server a name asked
 * once and remembered. Null when they are not signed in (or must wait: `signInReason`).
 */
export async function whoAmI() {
  const response = await fetchAnswered("/api/session", { credentials: "same-origin" }).catch(() => null);
  // Unreachable, or a server (or the proxy in front of it) that cannot answer now: no answer
  // about the session at all. Go on with the name remembered; the connection says what is
  // wrong, and reconnects.
  if (!response || response.status >= 500 || response.status === 429) return askName();
  const session = await response.json().catch(() => ({}));
  if (!response.ok) {
    signInReason = session.message ?? `The server answered ${response.status}: try again in a moment.`;
    return null;
  }
  if (session.open) return showMe(await askName(), true);
  if (!session.signedIn) {
    signInReason = session.reason ?? "";
    renamableName = session.mayRename ? session.name ?? "" : null;
    return null;
  }
  renamableName = null;
  localStorage.setItem("standups.name", session.name);
  return showMe(session.name, false);
}

/** Whether the server says this browser is signed in no more (false when it cannot say). */
async function sessionIsOver() {
  const response = await fetchAnswered("/api/session", { credentials: "same-origin" }).catch(() => null);
  const session = response?.ok ? await response.json().catch(() => null) : null;
  return session?.signedIn === false && !session.open;
}

/** Shows who you are in the top bar; a click changes your name. */
function showMe(name, open) {
  const button = document.getElementById("me");
  button.hidden = false;
  button.replaceChildren(Object.assign(document.createElement("span"), { className: "me-name", textContent: name }), "✎");
  button.title = name;
  button.setAttribute("aria-label", open ? `${name}: change your name` : `${name}: change your name or sign out`);
  button.onclick = () => changeName(name, open);
  return name;
}

/** Renames you (your session, or on an open server the name this browser remembers), then
 * joins again under the new name. */
function changeName(name, open) {
  const dialog = document.getElementById("name-dialog");
  const form = dialog.querySelector("form");
  const input = dialog.querySelector("input");
  const error = dialog.querySelector(".form-error");
  const cancel = dialog.querySelector(".cancel");
  dialog.querySelector("h2").textContent = open ? "Change your name" : "Change your name, or sign out";
  dialog.querySelector("button.primary").textContent = "Save";
  input.value = name;
  error.textContent = "";
  cancel.hidden = false;
  cancel.onclick = () => dialog.close();
  // With a session (not on an open server): signing out ends it in this browser.
  const signOut = dialog.querySelector(".sign-out");
  signOut.hidden = open;
  signOut.textContent = "Sign out";
  signOut.onclick = async () => {
    // NB: a sign-out keeps nothing for whoever signs in next: typing the room never got, in
    // this tab or another of this browser, is named first, and a second press signs out anyway.
    if (signOut.textContent === "Sign out") {
      signOut.disabled = true;
      const elsewhere = await typingInOtherTabs();
      signOut.disabled = false;
      const dropped = [...lostWithTheTab(current?.view?.typingToKeep?.(), sessionStorage),
        ...elsewhere,
        ...typedInClosedTabs()];
      if (dropped.length === 0) return signOutNow();
      error.textContent = `Signing out drops what you typed that has not reached the room: ${dropped.join(", ")}.`;
      signOut.textContent = "Sign out anyway";
      return;
    }
    await signOutNow();
  };
  const signOutNow = async () => {
    // NB: marked before the server ends the session: another tab whose room closes under it
    // then keeps nothing for whoever signs in next, whichever hears of it first.
    forgetKept();
    // NB: a sign-out not answered in time (a cluster's database slow) may have ended the
    // session all the same: asked, one that is over is a sign-out done, not "cannot be reached".
    signingOut = fetchAnswered("/api/session", { method: "DELETE", credentials: "same-origin" })
      .catch(() => null)
      .then(async (answer) => answer ?? ((await sessionIsOver()) ? { ok: true } : null));
    const response = await signingOut;
    signingOut = null;
    if (!response?.ok) {
      signOutFailed();
      const answer = await response?.json().catch(() => ({}));
      error.textContent = answer?.message ?? "The server cannot be reached: try again.";
      return;
    }
    dialog.close();
    document.getElementById("me").hidden = true;
    renamableName = null;
    showSignIn("You signed out of this browser.", { keep: false });
    signOutDone();
    // NB: on purpose: not a lost connection; and what the room said is over, typing too.
    dismissToasts({ typing: true });
    setStatus("signed-out");
  };
  dialog.onclose = null;
  form.onsubmit = async (event) => {
    event.preventDefault();
    const wanted = input.value.trim();
    if (!wanted) {
      error.textContent = BLANK_NAME;
      input.focus();
      return;
    }
    if (!open) {
      const response = await fetchAnswered("/api/session", {
        method: "POST", credentials: "same-origin",
        headers: { "content-type": "application/json" },
        body: wireJSON({ name: wanted }),
      }).catch(() => null);
      const answer = await response?.json().catch(() => ({}));
      if (!response?.ok) {
        error.textContent = answer?.message ?? "The server cannot be reached: try again.";
        return;
      }
    }
    // NB: what the browser keeps typed under the old name is theirs under the new one.
    renamed(name, wanted);
    localStorage.setItem("standups.name", wanted);
    dialog.close();
    reroute();
  };
  dialog.showModal();
  input.select();
}

function askName() {
  const saved = localStorage.getItem("standups.name");
  if (saved) return Promise.resolve(saved);
  const dialog = document.getElementById("name-dialog");
  const input = dialog.querySelector("input");
  let chosen = false;
  // The dialog may have been used to rename before: no cancelling and no signing out here.
  dialog.querySelector(".cancel").hidden = true;
  dialog.querySelector(".sign-out").hidden = true;
  // NB: Escape closes a modal dialog (the browser may not let the page prevent it), which
  // would leave a page that never connects: without a name, it opens again.
  dialog.addEventListener("cancel", (event) => event.preventDefault());
  dialog.onclose = () => {
    if (chosen) return;
    dialog.showModal();
    input.focus();
  };
  dialog.showModal();
  input.focus();
  return new Promise((resolve) => {
    dialog.querySelector("form").onsubmit = (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) {
        dialog.querySelector(".form-error").textContent = BLANK_NAME;
        input.focus();
        return;
      }
      localStorage.setItem("standups.name", name);
      chosen = true;
      dialog.close();
      resolve(name);
    };
  });
}

/**
 * Without a session: what to do, instead of a page that cannot connect. Where the page was,
 * and typing its room never got, are kept for after the sign-in (`comeback.mjs`), unless
 * the person signed out (`keep` false).
 */
export function showSignIn(reason = signInReason, { keep = true } = {}) {
  // NB: read before `leave`, while the screen and its fields are still there.
  const typing = current?.view?.typingToKeep?.();
  // NB: null once signed out, here or in another tab: nothing is kept for the next person.
  const kept = keep ? keepForSignIn(location.hash, typing) : forgetKept();
  // Signed out in another tab: what was typed here is named where it was typed, not kept.
  const dropped = keep && !kept ? lostWithTheTab(typing, sessionStorage) : [];
  leave({ keepTyping: false });
  // NB: nor does this tab keep its copies (a note's, for a reload) for whoever signs in next.
  if (!kept) forgetTyping(sessionStorage);
  // Nobody is signed in here now: no name to change, and what the room said is over.
  document.getElementById("me").hidden = true;
  if (document.getElementById("name-dialog").open) document.getElementById("name-dialog").close();
  if (!kept) dismissToasts({ typing: true });
  setStatus("none");
  // NB: whoever asked last (`whoAmI`) found a session that only needs another name.
  if (renamableName !== null) return showRename(signInReason || reason);
  document.title = "Sign in · Standups";
  const back = kept?.typing
    ? "Once you are signed in, in this tab or another, this page goes back to the standup you were in, with what you typed that had not reached it:"
    : kept?.hash.startsWith("#/rooms/") ? "Once you are signed in, in this tab or another, this page goes back to the standup it was showing." : "";
  // NB: what was kept, word for word: keys typed after the form went are not in it.
  const typed = typedHere(kept?.typing);
  app.innerHTML = `
    <section class="signin panel">
      <h1 tabindex="-1">Ask your team for the invite link</h1>
      <p>${escapeHTML(reason || "These standups are for one team only.")}</p>
      <p>Someone on your team has a link that looks like
        <code>${escapeHTML(location.origin)}/join#…</code>. Open it once in this browser and you are in.</p>
      ${back ? `<p class="kept">${escapeHTML(back)}</p>` : ""}
      ${typed.length ? typedList(typed, "kept-typing") : ""}
      ${dropped.length ? `<p class="dropped">This browser was signed out in another tab. What you typed here had not reached the room, and is not kept for whoever signs in next:</p>${typedList(dropped, "dropped-typing")}` : ""}
    </section>`;
  app.querySelector("h1").focus();
}

// Closing the tab (or reloading it) while it holds typing no room has — a note not sent, a new
// standup not added — the browser asks first: "Leave site?". The listener is there only from
// the first typing until a close finds nothing to lose, as one makes a page one that some
// browsers' back/forward cache will not keep.
function askBeforeLosingTyping(event) {
  if (lostWithTheTab(current?.view?.typingToKeep?.(), sessionStorage).length) {
    event.preventDefault();
  } else {
    window.removeEventListener("beforeunload", askBeforeLosingTyping);
  }
}
export function guardTheTab() {
  window.addEventListener("beforeunload", askBeforeLosingTyping);
}
document.addEventListener("input", guardTheTab, true);

// Signed in from another tab (the invite link's page): a page asking to sign in goes back
// to where it was.
window.addEventListener("storage", (event) => {
  if (event.key === SIGNED_IN_KEY && app.querySelector(".signin")) reroute();
  // Renamed in another tab: this one joins again under the new name, as that tab did, so
  // that a room never shows one person under two names (a note typed here is kept).
  if (event.key === "standups.name" && event.newValue && current
    && current.connection.name !== event.newValue) reroute();
});

/** Signed in under a name a bot was given since: the session holds, another name lets in. */
function showRename(reason) {
  document.title = "Choose another name · Standups";
  app.innerHTML = `
    <section class="signin panel">
      <h1 tabindex="-1">Choose another name</h1>
      <p>${escapeHTML(reason)}</p>
      <p><button type="button" class="primary rename">Choose another name</button></p>
    </section>`;
  app.querySelector(".rename").onclick = () => changeName(renamableName, false);
  app.querySelector("h1").focus();
}

export function connect(path, name, view) {
  // NB: what a close finds out over HTTP may come after the person went elsewhere: not drawn then.
  const elsewhere = () => current?.connection !== connection;
  const connection = new RoomConnection(path, name, {
    onState: (state, you, arrival) => {
      view.render(state, you, arrival);
      withdrawMoot(view.id, state);
    },
    onStatus: setStatus,
    onError: (error) => toast(error.message),
    // NB: a server restarting refuses nothing: it is not there. Nor is one draining (404) or
    // whose storage fails (503), for this page's purpose: it is let in once that is over.
    serverAnswers: () => fetchAnswered("/healthz", { cache: "no-store" }).then((r) => r.ok, () => false),
    // Refused again and again after having been in: perhaps the session ended meanwhile, or
    // the standup was deleted (its room answers 404 over HTTP too).
    onRefused: async () => {
      if ((await whoAmI()) === null) {
        if (!elsewhere()) showSignIn();
        return false;
      }
      return standupIsMissing(path);
    },
    onGone: async (code, reason) => {
      setStatus("closed");
      sessionStorage.removeItem(`standups.resume:${path}`);
      // NB: this tab's own sign-out, not the room's close, says what happened (a bare "This
      // session was signed out" could come after its "You signed out"), if it answers in 5 s.
      if (code === 4401 && (await within(signingOut, 5000))?.ok) return;
      // Ended (4401) or never let in: maybe the session is over.
      if ((code === 4401 || code === 0) && (await whoAmI()) === null) {
        if (!elsewhere()) showSignIn(code === 4401 ? reason : "");
        return;
      }
      // NB: a browser reports a refused upgrade as a bare close: asked over HTTP, a standup
      // that does not exist answers 404, and there is nothing to reconnect to.
      const missing = code === 0 && (await standupIsMissing(path));
      if (elsewhere()) return;
      if (missing) {
        setStatus("none");
        view.gone?.("missing", "");
        return;
      }
      // NB: a standup deleted has nothing to connect to: no "Disconnected" beside it.
      if (code === 4410) setStatus("none");
      view.gone?.(code, reason);
    },
  });
  // NB: never two: a screen that connects replaces the last one's connection.
  current?.connection.close();
  current = { connection, view };
  window.standupsConnection = connection; // for the browser tests
  return connection;
}

/** Sends an action; shows the server's refusal as a toast (not once the page closed the
 * connection itself: leaving a room is no failure to report on the next screen). */
export async function act(connection, action) {
  try {
    return await connection.send(action);
  } catch (error) {
    if (!connection.closed) toast(error.message);
    return null;
  }
}
