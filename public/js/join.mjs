// The invite link's page: /join#<invite>. Trades the invite for a session cookie, once, and
// takes the invite out of the address bar at once (it never reaches the server's logs: a
// fragment is not sent with requests).
const form = document.getElementById("join-form");
const error = form.querySelector(".form-error");
const heading = document.querySelector("h1");

const fromLink = location.hash.slice(1);
if (fromLink) sessionStorage.setItem("standups.invite", fromLink);
history.replaceState(null, "", location.pathname);
const invite = sessionStorage.getItem("standups.invite");

form.elements.name.value = localStorage.getItem("standups.name") ?? "";
if (!invite) {
  heading.textContent = "This link has no invite in it";
  error.textContent = "Ask your team for the whole invite link: it ends with # and a long code.";
  form.querySelector("button").disabled = true;
}
heading.focus();

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = form.elements.name.value.trim();
  if (!name) return;
  error.textContent = "";
  const button = form.querySelector("button");
  button.disabled = true;
  try {
    const response = await fetch("/api/session", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ invite, name }),
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      error.textContent = answer.message ?? `The server said ${response.status}: try again.`;
      return;
    }
    sessionStorage.removeItem("standups.invite");
    localStorage.setItem("standups.name", answer.name);
    location.replace("/");
  } catch {
    error.textContent = "The server cannot be reached: try again in a moment.";
  } finally {
    button.disabled = false;
  }
});
