// The invite link's page: /join#<invite>. Trades the invite for a session cookie, once, and
// takes the invite out of the address bar at once (it never reaches the server's logs: a
// fragment is not sent with requests).
import { addressAfterSignIn, signedIn } from "./comeback.mjs";
import { BLANK_NAME, wireJSON } from "./format.mjs";
import { guardLengths } from "./limits.mjs";
import { fetchAnswered } from "./liveness.mjs";

const form = document.getElementById("join-form");
const error = form.querySelector(".form-error");
const heading = document.querySelector("h1");

const defaultHeading = heading.textContent;
let invite = null;

// Takes the invite from the address bar (at load, and when a whole link is pasted into the
// same tab, which changes only the fragment and loads nothing) and shows whether there is one.
function takeInvite() {
  const fromLink = location.hash.slice(1);
  if (fromLink) sessionStorage.setItem("standups.invite", fromLink);
  history.replaceState(null, "", location.pathname);
  invite = sessionStorage.getItem("standups.invite");
  heading.textContent = invite ? defaultHeading : "This link has no invite in it";
  error.textContent = invite
    ? ""
    : "Ask your team for the whole invite link: it ends with # and a long code.";
  form.querySelector("button").disabled = !invite;
}

form.elements.name.value = localStorage.getItem("standups.name") ?? "";
takeInvite();
window.addEventListener("hashchange", takeInvite);
guardLengths(form, (message) => { error.textContent = message; });
// NB: with an invite, the one thing to do is the name; without, the heading says why not.
if (invite) form.elements.name.focus();
else heading.focus();
sayWhetherSignedIn();

/** A browser signed in already (the link opened again) is told so, and where to go; joining
 * again, under another name, stays possible (a shared computer). */
async function sayWhetherSignedIn() {
  try {
    const session = await (await fetchAnswered("/api/session", { credentials: "same-origin" })).json();
    if (!session.signedIn || !session.name) return;
    const note = document.querySelector(".signed-in-note");
    note.textContent = `You are signed in here as ${session.name}. `;
    const open = Object.assign(document.createElement("a"), { href: "/", textContent: "Open your team's standups" });
    note.append(open, ", or join under another name below.");
    note.hidden = false;
  } catch {
    // Not known: the form is all there is to do.
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = form.elements.name.value.trim();
  if (!name) {
    error.textContent = BLANK_NAME;
    form.elements.name.focus();
    return;
  }
  error.textContent = "";
  const button = form.querySelector("button");
  button.disabled = true;
  try {
    const response = await fetchAnswered("/api/session", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: wireJSON({ invite, name }),
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      error.textContent = answer.message ?? `The server said ${response.status}: try again.`;
      return;
    }
    sessionStorage.removeItem("standups.invite");
    // NB: the name is kept with the sign-in; a page that asked to sign in (this tab's, or
    // another's) goes back to where it was.
    signedIn(answer.name);
    location.replace(addressAfterSignIn());
  } catch {
    error.textContent = "The server cannot be reached: try again in a moment.";
  } finally {
    button.disabled = false;
  }
});
