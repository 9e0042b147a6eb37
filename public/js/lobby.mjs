// The lobby: every standup as a card, who is in each, and the new-standup form.
import { escapeHTML } from "./format.mjs";
import { say } from "./said.mjs";
import { app, connect, isShowing, showSignIn, whoAmI } from "./shell.mjs";
import { newStandupKey } from "./typed.mjs";
import { meetingNote, numberRow, themeStyle, themeSwatches, whoIsHere } from "./views.mjs";

export async function showLobby(screen) {
  document.title = "Standups";
  app.innerHTML = `
    <section class="lobby">
      <div class="lobby-head">
        <h1 tabindex="-1">Standups</h1>
        <button type="button" class="primary" id="new-standup" aria-expanded="false">New standup</button>
      </div>
      <form id="new-form" class="panel" hidden aria-labelledby="new-title">
        <h2 id="new-title">New standup</h2>
        <label>Title <input name="title" dir="auto" data-max-chars="100" required autocomplete="off"></label>
        <label>Length <span class="range"><input name="minutes" type="range" min="5" max="30" value="5" aria-valuetext="5 minutes">
          <output name="minutesLabel">5 min</output></span></label>
        <fieldset class="themes"><legend>Theme</legend>${themeSwatches("new-theme", "orange")}</fieldset>
        <fieldset><legend>Attendees</legend>
          <ul class="new-attendees"></ul>
          <button type="button" class="add-attendee">Add attendee</button>
          <p class="attendee-cap" role="alert" hidden>A standup has at most 50 attendees.</p>
        </fieldset>
        <p class="form-error" role="alert"></p>
        <div class="actions">
          <button type="button" class="cancel">Cancel</button>
          <button class="primary">Add standup</button>
        </div>
      </form>
      <ul class="cards" aria-label="Standups"></ul>
      <p class="empty" hidden>No standups yet: add the first one.</p>
    </section>`;
  app.querySelector("h1").focus({ preventScroll: true });
  const name = await whoAmI();
  if (!isShowing(screen)) return;
  if (name === null) return showSignIn();
  const connection = connect("/ws/lobby", name, {
    render: renderLobby,
    gone: (code, reason) => {
      const empty = app.querySelector(".empty");
      if (!empty) return;
      empty.hidden = false;
      empty.textContent = `${reason || "The connection was closed."} Reload the page to try again.`;
    },
  });
  wireNewStandupForm(connection);
}

function renderLobby(state) {
  const cards = app.querySelector(".cards");
  if (!cards) return;
  // The lobby is live again: "Not connected" under the new standup form is past.
  const form = app.querySelector("#new-form");
  if (form && "notSent" in form.dataset) {
    form.querySelector(".form-error").textContent = "";
    delete form.dataset.notSent;
  }
  // NB: each card is kept, and changed in place only where it changed: the keyboard (and a
  // screen reader's place) stays on a card while people come and go in any room.
  // NB: the cards gone go first: the others then move only if their order changed.
  const listed = new Set(state.standups.map(({ id }) => id));
  // NB: the keyboard on a card that goes (someone deleted its standup) goes to the card that
  // takes its place, not to the top of the page, where a screen reader would lose its place.
  const before = [...cards.children];
  const lost = before.findIndex((item) => !listed.has(item.dataset.id) && item.contains(document.activeElement));
  const stays = (item) => listed.has(item.dataset.id);
  const nextCard = lost < 0 ? null
    : before.slice(lost + 1).find(stays) ?? before.slice(0, lost).reverse().find(stays);
  const takesItsPlace = lost < 0 ? null : nextCard?.firstElementChild ?? app.querySelector("#new-standup");
  for (const item of before) if (!stays(item)) item.remove();
  const shown = new Map([...cards.children].map((item) => [item.dataset.id, item]));
  state.standups.forEach((standup, index) => {
    let item = shown.get(standup.id);
    if (!item) {
      item = document.createElement("li");
      item.dataset.id = standup.id;
      item.innerHTML = `<a class="card" href="#/rooms/${standup.id}"></a>`;
    }
    const card = item.firstElementChild;
    const style = themeStyle(standup.theme);
    if (card.getAttribute("style") !== style) card.setAttribute("style", style);
    const inside = cardInside(standup);
    if (card.drawnHTML !== inside) {
      card.innerHTML = inside;
      card.drawnHTML = inside;
    }
    if (cards.children[index] !== item) cards.insertBefore(item, cards.children[index] ?? null);
  });
  app.querySelector(".empty").hidden = state.standups.length > 0;
  takesItsPlace?.focus();
}

/** What a standup's card shows: its title, attendees and length, who is in its room. */
function cardInside(standup) {
  const live = standup.live
    // NB: the dot is for the eye: a screen reader reads the card's link without it.
    ? `<span class="live"><span aria-hidden="true">●</span> ${escapeHTML(whoIsHere(standup.live))}${meetingNote(standup.live)}</span>`
    : "";
  return `<span class="card-title"><bdi>${escapeHTML(standup.title)}</bdi></span>
      <span class="card-meta">${standup.attendeeCount} ${standup.attendeeCount === 1 ? "attendee" : "attendees"} · ${standup.duration / 60} min</span>${live}`;
}

function keptNewStandup() {
  try {
    return JSON.parse(sessionStorage.getItem(newStandupKey) ?? "null");
  } catch {
    return null; // not a record this page wrote
  }
}

/** Said when an Add's answer went with the connection (and again after a reload). */
const mayHaveBeenMade = "The connection dropped before the server answered: the standup may have been made. Look for it in the list before you create it again.";

/** As the server holds (`StandupRules.attendeeCount`), and `.attendee-cap` says. */
const MAX_ATTENDEES = 50;

function wireNewStandupForm(connection) {
  const form = app.querySelector("#new-form");
  const toggle = app.querySelector("#new-standup");
  const list = form.querySelector(".new-attendees");
  const addRow = (value = "") => {
    const item = document.createElement("li");
    item.innerHTML = `<input dir="auto" data-max-chars="40" value="${escapeHTML(value)}">
      <button type="button" class="icon">✕</button>`;
    item.querySelector("button").onclick = () => {
      // NB: the keyboard was on the row's button, which goes: to the next row, or Add.
      const next = item.nextElementSibling?.querySelector("input") ?? form.querySelector(".add-attendee");
      item.remove();
      form.querySelector(".attendee-cap").hidden = true;
      [...list.children].forEach(numberRow);
      keep();
      next.focus();
    };
    list.append(item);
    numberRow(item, list.children.length - 1);
    return item.querySelector("input");
  };
  const typed = () => ({
    title: form.title.value,
    minutes: form.minutes.value,
    theme: form.querySelector("input[name=new-theme]:checked")?.value,
    attendees: [...list.querySelectorAll("input")].map((input) => input.value),
  });
  // What is typed is kept in the tab as it is typed; a reload opens the form with it again.
  const keep = () => {
    const now = { ...typed(), maybeMade: "maybeMade" in form.dataset };
    if (now.title.trim() || now.attendees.some((name) => name.trim())) {
      sessionStorage.setItem(newStandupKey, JSON.stringify(now));
    } else {
      sessionStorage.removeItem(newStandupKey);
    }
  };
  const reset = () => {
    form.reset();
    list.innerHTML = "";
    addRow();
    form.querySelector("output").value = "5 min";
    form.querySelector(".form-error").textContent = "";
    form.querySelector(".attendee-cap").hidden = true;
    delete form.dataset.maybeMade;
    delete form.dataset.notSent;
    sessionStorage.removeItem(newStandupKey);
  };
  const open = (isOpen) => {
    form.hidden = !isOpen;
    toggle.setAttribute("aria-expanded", String(isOpen));
  };
  const kept = keptNewStandup();
  reset();
  if (kept) {
    form.title.value = kept.title ?? "";
    form.minutes.value = kept.minutes ?? 5;
    showMinutes(form);
    const theme = form.querySelector(`input[name=new-theme][value="${CSS.escape(kept.theme ?? "")}"]`);
    if (theme) theme.checked = true;
    list.innerHTML = "";
    for (const name of kept.attendees?.length ? kept.attendees : [""]) addRow(String(name));
    if (kept.maybeMade) {
      form.dataset.maybeMade = "";
      form.querySelector(".form-error").textContent = mayHaveBeenMade;
    }
    keep();
    open(true);
  }
  form.addEventListener("input", keep);
  form.addEventListener("change", keep);
  toggle.onclick = () => {
    open(form.hidden);
    if (!form.hidden) form.querySelector("input[name=title]").focus();
  };
  // NB: a 51st row is said to be one too many when it is asked for, not at Add standup.
  const addAnother = () => {
    if (list.children.length < MAX_ATTENDEES) return addRow().focus();
    form.querySelector(".attendee-cap").hidden = false;
  };
  form.querySelector(".add-attendee").onclick = addAnother;
  // Enter in an attendee's name adds the next one; it never submits half a list.
  list.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || !event.target.matches("input")) return;
    event.preventDefault();
    if (!submitting) addAnother();
  });
  form.querySelector(".cancel").onclick = () => {
    open(false);
    reset();
    toggle.focus();
  };
  // Escape closes the form and keeps what is typed in it (New standup shows it again); only
  // Cancel throws it away.
  form.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || event.isComposing) return;
    event.preventDefault();
    open(false);
    toggle.focus();
  });
  form.minutes.oninput = () => showMinutes(form);
  let submitting = false;
  form.onsubmit = async (event) => {
    event.preventDefault();
    // NB: one at a time: a second Enter while the first is on its way would make two.
    if (submitting) return;
    const standup = {
      title: form.title.value,
      duration: Number(form.minutes.value) * 60,
      theme: form.querySelector("input[name=new-theme]:checked")?.value,
      attendees: [...list.querySelectorAll("input")]
        .map((input) => input.value.trim()).filter(Boolean).map((name) => ({ name })),
    };
    submitting = true;
    // NB: what is sent is what the form holds until the answer: typing meanwhile would be
    // wiped by the form's reset when it comes, or stay behind a refusal unsent.
    const fields = [...form.querySelectorAll("input[type=text], input:not([type])")];
    for (const field of fields) field.readOnly = true;
    form.querySelector(".add-attendee").disabled = true;
    form.setAttribute("aria-busy", "true");
    try {
      await connection.send({ type: "addStandupSubmitted", standup });
      open(false);
      reset();
      // NB: the form had the keyboard and is gone: it goes back to the button that opened it,
      // and a screen reader is told it was added (its card comes with no word).
      toggle.focus();
      say(`Added ${standup.title.trim()}.`);
    } catch (error) {
      // Sent, but its answer went with the connection: it may have been made (said again
      // after a reload).
      const maybeMade = error.code === "offline" && error.sent !== false;
      if (maybeMade) form.dataset.maybeMade = "";
      // NB: not sent for want of a connection: said until the lobby is live again.
      if (error.code === "offline" && !maybeMade) form.dataset.notSent = "";
      form.querySelector(".form-error").textContent = maybeMade ? mayHaveBeenMade : error.message;
      keep();
    } finally {
      submitting = false;
      for (const field of fields) field.readOnly = false;
      form.querySelector(".add-attendee").disabled = false;
      form.removeAttribute("aria-busy");
    }
  };
}

/** The slider's length beside it, and as a screen reader says it ("15 minutes", not "15"). */
function showMinutes(form) {
  form.querySelector("output").value = `${form.minutes.value} min`;
  form.minutes.setAttribute("aria-valuetext", `${form.minutes.value} minutes`);
}
