// Standups in the browser: the lobby and the rooms, drawn from the server's state.
import { RoomConnection } from "./connection.mjs";
import {
  THEMES, THEME_NAMES, arcPath, clock, escapeHTML, meetingDate, speakerSlices,
} from "./format.mjs";

const app = document.getElementById("app");
const statusBadge = document.getElementById("status");
const toasts = document.getElementById("toasts");
let current = null;

// ---------------------------------------------------------------- shell

function route() {
  current?.connection.close();
  current = null;
  const match = location.hash.match(/^#\/rooms\/([0-9A-Fa-f-]{36})$/);
  if (match) showRoom(match[1]);
  else showLobby();
}

window.addEventListener("hashchange", route);

function setStatus(status, delay) {
  const text = {
    connecting: "Connecting…",
    live: "Live",
    reconnecting: delay ? `Reconnecting in ${Math.ceil(delay / 1000)} s…` : "Reconnecting…",
    closed: "Disconnected",
  }[status];
  statusBadge.textContent = text;
  statusBadge.dataset.status = status;
}

export function toast(message) {
  // The same message again (a burst of refusals) renews the one showing; at most three show.
  let item = [...toasts.children].find((shown) => shown.textContent === message);
  if (!item) {
    item = document.createElement("div");
    item.className = "toast";
    item.setAttribute("role", "status");
    item.textContent = message;
    toasts.append(item);
    while (toasts.children.length > 3) toasts.firstElementChild.remove();
  }
  clearTimeout(item.timer);
  item.timer = setTimeout(() => item.remove(), 5000);
}

/** Why the last `whoAmI` found nobody signed in, for the sign-in page. */
let signInReason = "";

/**
 * Who this person is: the name their session carries, or on an open server a name asked
 * once and remembered. Null when they are not signed in (or must wait: `signInReason`).
 */
async function whoAmI() {
  const response = await fetch("/api/session", { credentials: "same-origin" }).catch(() => null);
  // Unreachable: go on with the name remembered; the connection says what is wrong.
  if (!response) return askName();
  const session = await response.json().catch(() => ({}));
  if (!response.ok) {
    signInReason = session.message ?? `The server answered ${response.status}: try again in a moment.`;
    return null;
  }
  if (session.open) return askName();
  if (!session.signedIn) {
    signInReason = session.reason ?? "";
    return null;
  }
  localStorage.setItem("standups.name", session.name);
  return session.name;
}

function askName() {
  const saved = localStorage.getItem("standups.name");
  if (saved) return Promise.resolve(saved);
  const dialog = document.getElementById("name-dialog");
  const input = dialog.querySelector("input");
  dialog.showModal();
  input.focus();
  return new Promise((resolve) => {
    dialog.querySelector("form").onsubmit = (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      localStorage.setItem("standups.name", name);
      dialog.close();
      resolve(name);
    };
  });
}

/** Without a session: what to do, instead of a page that cannot connect. */
function showSignIn(reason = signInReason) {
  current?.connection.close();
  current = null;
  setStatus("closed");
  document.title = "Sign in · Standups";
  app.innerHTML = `
    <section class="signin panel">
      <h1 tabindex="-1">Ask your team for the invite link</h1>
      <p>${escapeHTML(reason || "These standups are for one team only.")}</p>
      <p>Someone on your team has a link that looks like
        <code>${escapeHTML(location.origin)}/join#…</code>. Open it once in this browser and you are in.</p>
    </section>`;
  app.querySelector("h1").focus();
}

function themeStyle(theme) {
  const [background, foreground] = THEMES[theme] ?? THEMES.bubblegum;
  return `--theme:${background};--on-theme:${foreground}`;
}

function connect(path, name, view) {
  const connection = new RoomConnection(path, name, {
    onState: (state, you) => view.render(state, you),
    onStatus: setStatus,
    onError: (error) => toast(error.message),
    // Refused again and again after having been in: perhaps the session ended meanwhile.
    onRefused: async () => {
      if ((await whoAmI()) === null) showSignIn();
    },
    onGone: async (code, reason) => {
      setStatus("closed");
      sessionStorage.removeItem(`standups.resume:${path}`);
      // Ended (4401) or never let in: maybe the session is over.
      if ((code === 4401 || code === 0) && (await whoAmI()) === null) {
        showSignIn(code === 4401 ? reason : "");
        return;
      }
      view.gone?.(code, reason);
    },
  });
  current = { connection, view };
  window.standupsConnection = connection; // for the browser tests
  return connection;
}

/** Sends an action; shows the server's refusal as a toast. */
async function act(connection, action) {
  try {
    return await connection.send(action);
  } catch (error) {
    toast(error.message);
    return null;
  }
}

// ---------------------------------------------------------------- lobby

async function showLobby() {
  document.title = "Standups";
  app.innerHTML = `
    <section class="lobby">
      <div class="lobby-head">
        <h1>Standups</h1>
        <button type="button" class="primary" id="new-standup" aria-expanded="false">New standup</button>
      </div>
      <form id="new-form" class="panel" hidden aria-labelledby="new-title">
        <h2 id="new-title">New standup</h2>
        <label>Title <input name="title" maxlength="100" required autocomplete="off"></label>
        <label>Length <span class="range"><input name="minutes" type="range" min="5" max="30" value="5">
          <output name="minutesLabel">5 min</output></span></label>
        <fieldset class="themes"><legend>Theme</legend>${themeSwatches("new-theme", "orange")}</fieldset>
        <fieldset><legend>Attendees</legend>
          <ul class="new-attendees"></ul>
          <button type="button" class="add-attendee">Add attendee</button>
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
  const name = await whoAmI();
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
  cards.innerHTML = state.standups.map((standup) => {
    const live = standup.live
      ? `<span class="live">● ${standup.live.participants} here${standup.live.meetingRunning ? " · meeting on" : ""}</span>`
      : "";
    return `<li><a class="card" href="#/rooms/${standup.id}" style="${themeStyle(standup.theme)}">
      <span class="card-title">${escapeHTML(standup.title)}</span>
      <span class="card-meta">${standup.attendeeCount} ${standup.attendeeCount === 1 ? "person" : "people"} · ${standup.duration / 60} min</span>${live}
    </a></li>`;
  }).join("");
  app.querySelector(".empty").hidden = state.standups.length > 0;
}

function wireNewStandupForm(connection) {
  const form = app.querySelector("#new-form");
  const toggle = app.querySelector("#new-standup");
  const list = form.querySelector(".new-attendees");
  const addRow = (value = "") => {
    const item = document.createElement("li");
    item.innerHTML = `<input aria-label="Attendee name" maxlength="40" value="${escapeHTML(value)}">
      <button type="button" class="icon" aria-label="Remove attendee">✕</button>`;
    item.querySelector("button").onclick = () => item.remove();
    list.append(item);
    return item.querySelector("input");
  };
  const reset = () => {
    form.reset();
    list.innerHTML = "";
    addRow();
    form.querySelector("output").value = "5 min";
    form.querySelector(".form-error").textContent = "";
  };
  reset();
  toggle.onclick = () => {
    form.hidden = !form.hidden;
    toggle.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) form.querySelector("input[name=title]").focus();
  };
  form.querySelector(".add-attendee").onclick = () => addRow().focus();
  form.querySelector(".cancel").onclick = () => {
    form.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    reset();
  };
  form.minutes.oninput = () => (form.querySelector("output").value = `${form.minutes.value} min`);
  form.onsubmit = async (event) => {
    event.preventDefault();
    const standup = {
      title: form.title.value,
      duration: Number(form.minutes.value) * 60,
      theme: form.querySelector("input[name=new-theme]:checked")?.value,
      attendees: [...list.querySelectorAll("input")]
        .map((input) => input.value.trim()).filter(Boolean).map((name) => ({ name })),
    };
    try {
      await connection.send({ type: "addStandupSubmitted", standup });
      form.hidden = true;
      toggle.setAttribute("aria-expanded", "false");
      reset();
    } catch (error) {
      form.querySelector(".form-error").textContent = error.message;
    }
  };
}

function themeSwatches(group, selected) {
  return THEME_NAMES.map((theme) => `
    <label class="swatch" style="${themeStyle(theme)}" title="${theme}">
      <input type="radio" name="${group}" value="${theme}" ${theme === selected ? "checked" : ""}>
      <span class="visually-hidden">${theme}</span>
    </label>`).join("");
}

// ---------------------------------------------------------------- room

async function showRoom(id) {
  app.innerHTML = `<section class="room"><p class="loading">Joining…</p></section>`;
  const name = await whoAmI();
  if (name === null) return showSignIn();
  const view = new RoomView(id);
  view.connection = connect(`/ws/rooms/${id}`, name, view);
}

class RoomView {
  constructor(id) {
    this.id = id;
    this.mode = null;
  }

  gone(code, reason) {
    const deleted = code === 4410;
    app.innerHTML = `<section class="room gone"><h1>${deleted ? "This standup was deleted." : "Disconnected"}</h1>
      <p>${escapeHTML(reason || "")}</p>
      <p>${deleted ? "" : `<button type="button" class="reconnect primary">Reconnect</button> `}<a href="#/">Back to all standups</a></p></section>`;
    // Closed for a reason (too slow, too many messages): the person decides when to come back.
    app.querySelector(".reconnect")?.addEventListener("click", route);
  }

  render(state, you) {
    this.state = state;
    this.you = you;
    const mode = state.meeting ? "meeting" : state.destination?.edit ? "edit" : "detail";
    if (mode !== this.mode) {
      this.mode = mode;
      this.layout(state);
    }
    document.title = `${state.standup.title} · Standups`;
    const section = app.querySelector(".room");
    section.setAttribute("style", themeStyle(state.standup.theme));
    section.querySelector(".room-title").textContent = state.standup.title;
    section.querySelector(".presence").innerHTML = state.participants.map((person) => `
      <li class="person${person.isBot ? " bot" : ""}${person.id === you ? " me" : ""}">
        ${escapeHTML(person.name)}${person.id === you ? " (you)" : ""}${person.isBot ? `<span class="badge">bot</span>` : ""}</li>`).join("");
    if (mode === "meeting") this.renderMeeting(state);
    else if (mode === "edit") this.renderEdit(state);
    else this.renderDetail(state);
  }

  layout() {
    app.innerHTML = `<section class="room">
      <header class="room-head">
        <a href="#/" class="back">← Standups</a>
        <h1 class="room-title"></h1>
        <ul class="presence" aria-label="In this room"></ul>
      </header>
      <div class="room-body">${this.template()}</div>
    </section>`;
    this.wire();
  }

  template() {
    switch (this.mode) {
      case "meeting": return `
        <div class="meeting">
          <div class="ring-wrap">
            <svg class="ring" viewBox="0 0 220 220" aria-hidden="true"></svg>
            <div class="ring-center">
              <p class="speaker" aria-live="polite"></p>
              <p class="times"><span class="elapsed"></span> elapsed · <span class="remaining"></span> left</p>
            </div>
          </div>
          <p class="paused" role="status" hidden>Paused: everyone had left.
            <button type="button" class="primary resume">Resume meeting</button></p>
          <div class="actions">
            <button type="button" class="primary next">Next speaker</button>
            <button type="button" class="danger end">End meeting</button>
          </div>
          <form class="note-form">
            <label for="note">Add a note</label>
            <input id="note" maxlength="1000" autocomplete="off" required>
            <button>Add</button>
          </form>
          <pre class="transcript" aria-label="Notes so far"></pre>
          <dialog class="end-alert" aria-labelledby="end-title">
            <h2 id="end-title">End meeting?</h2>
            <p>Save the meeting to the history, or discard it.</p>
            <div class="actions">
              <button type="button" class="resume-alert">Resume</button>
              <button type="button" class="danger discard">Discard</button>
              <button type="button" class="primary save">Save and end</button>
            </div>
          </dialog>
        </div>`;
      case "edit": return `
        <form class="edit-form panel" aria-label="Edit standup">
          <h2>Edit standup <span class="hint">everyone here sees this draft</span></h2>
          <label>Title <input class="title" maxlength="100" autocomplete="off" data-focus="title"></label>
          <ul class="chips" data-for="title"></ul>
          <label>Length <span class="range"><input class="duration" type="range" min="5" max="30">
            <output class="duration-label"></output></span></label>
          <fieldset class="themes"><legend>Theme</legend>${themeSwatches("edit-theme", null)}</fieldset>
          <fieldset><legend>Attendees</legend><ul class="attendees"></ul>
            <button type="button" class="add-attendee">Add attendee</button></fieldset>
          <div class="actions">
            <button type="button" class="cancel-edit">Cancel</button>
            <button class="primary save-edit">Save</button>
          </div>
        </form>`;
      default: return `
        <div class="detail">
          <div class="actions">
            <button type="button" class="primary start">Start meeting</button>
            <button type="button" class="edit">Edit</button>
            <button type="button" class="danger delete">Delete</button>
          </div>
          <dl class="facts"></dl>
          <h2>Attendees</h2><ul class="attendee-list"></ul>
          <h2>History</h2><ul class="history"></ul>
          <dialog class="delete-alert" aria-labelledby="delete-title">
            <h2 id="delete-title">Delete this standup?</h2>
            <p>Its meeting history goes with it. Everyone in the room is sent back.</p>
            <div class="actions">
              <button type="button" class="dismiss">Cancel</button>
              <button type="button" class="danger confirm">Delete</button>
            </div>
          </dialog>
        </div>`;
    }
  }

  wire() {
    const on = (selector, event, handler) => app.querySelector(selector)?.addEventListener(event, handler);
    const send = (action) => act(this.connection, action);
    if (this.mode === "detail") {
      on(".start", "click", () => send({ type: "startMeetingButtonTapped" }));
      on(".edit", "click", () => send({ type: "editButtonTapped" }));
      on(".delete", "click", () => send({ type: "deleteButtonTapped" }));
      on(".confirm", "click", () => send({ type: "alert.confirmDeletion" }));
      on(".dismiss", "click", () => send({ type: "alert.dismissed" }));
      on(".delete-alert", "cancel", (event) => {
        event.preventDefault();
        send({ type: "alert.dismissed" });
      });
    } else if (this.mode === "meeting") {
      on(".next", "click", () => send({ type: "meeting.nextButtonTapped", from: this.state.meeting.speakerIndex }));
      on(".end", "click", () => send({ type: "meeting.endMeetingButtonTapped" }));
      on(".save", "click", () => send({ type: "meeting.alert.saveAndEnd" }));
      on(".discard", "click", () => send({ type: "meeting.alert.discard" }));
      on(".resume-alert", "click", () => send({ type: "meeting.alert.resume" }));
      on(".end-alert", "cancel", (event) => {
        event.preventDefault();
        send({ type: "meeting.alert.resume" });
      });
      on(".resume", "click", () => send({ type: "meeting.resumeButtonTapped" }));
      on(".note-form", "submit", async (event) => {
        event.preventDefault();
        const input = app.querySelector("#note");
        if (await send({ type: "meeting.noteSubmitted", text: input.value })) input.value = "";
      });
    } else {
      this.wireEdit(send);
    }
  }

  renderDetail(state) {
    const { standup } = state;
    app.querySelector(".facts").innerHTML = `
      <div><dt>Length</dt><dd>${standup.duration / 60} min</dd></div>
      <div><dt>Theme</dt><dd><span class="theme-chip">${standup.theme}</span></dd></div>
      <div><dt>Meetings</dt><dd>${standup.meetings.length}</dd></div>`;
    app.querySelector(".attendee-list").innerHTML = standup.attendees
      .map((attendee) => `<li>${escapeHTML(attendee.name)}</li>`).join("");
    app.querySelector(".history").innerHTML = standup.meetings.length
      ? standup.meetings.map((meeting) => `<li><details><summary>${meetingDate(meeting.date)}</summary>
          <pre>${escapeHTML(meeting.transcript || "No notes.")}</pre></details></li>`).join("")
      : `<li class="empty">No meetings yet.</li>`;
    const alert = app.querySelector(".delete-alert");
    const open = state.destination?.alert === "confirmDeletion";
    if (open && !alert.open) alert.showModal();
    if (!open && alert.open) alert.close();
  }

  renderMeeting(state) {
    const { meeting, standup } = state;
    const duration = standup.duration;
    const speaker = standup.attendees[meeting.speakerIndex]?.name ?? "—";
    const speakerLine = app.querySelector(".speaker");
    const text = `Speaker ${meeting.speakerIndex + 1} of ${standup.attendees.length}: ${speaker}`;
    if (speakerLine.textContent !== text) speakerLine.textContent = text;
    app.querySelector(".elapsed").textContent = clock(meeting.secondsElapsed);
    app.querySelector(".remaining").textContent = clock(duration - meeting.secondsElapsed);
    const done = meeting.secondsElapsed / duration;
    app.querySelector(".ring").innerHTML =
      `<circle cx="110" cy="110" r="96" class="track"/>` +
      speakerSlices(duration, standup.attendees.length).map((slice) => {
        const state = slice.index < meeting.speakerIndex ? "spoken" : slice.index === meeting.speakerIndex ? "speaking" : "waiting";
        return `<path d="${arcPath(110, 96, slice.start + 0.004, slice.end - 0.004)}" class="slice ${state}"/>`;
      }).join("") +
      (done > 0 ? `<path d="${arcPath(110, 96, 0, Math.min(done, 0.9999))}" class="progress"/>` : "");
    app.querySelector(".paused").hidden = !meeting.isPaused;
    app.querySelector(".next").textContent =
      meeting.speakerIndex >= standup.attendees.length - 1 ? "Finish" : "Next speaker";
    app.querySelector(".transcript").textContent = meeting.transcript || "No notes yet.";
    const alert = app.querySelector(".end-alert");
    const open = meeting.alert === "endMeeting";
    if (open && !alert.open) alert.showModal();
    if (!open && alert.open) alert.close();
  }

  wireEdit(send) {
    const form = app.querySelector(".edit-form");
    let titleTimer;
    const focus = (field) => send({ type: "focusChanged", field });
    form.querySelector(".title").addEventListener("input", (event) => {
      clearTimeout(titleTimer);
      titleTimer = setTimeout(() => send({ type: "edit.binding", path: "/title", value: event.target.value }), 150);
    });
    form.addEventListener("focusin", (event) => {
      if (event.target.dataset.focus) focus(event.target.dataset.focus);
    });
    form.addEventListener("focusout", (event) => {
      if (event.target.dataset.focus && !form.contains(event.relatedTarget)) focus(null);
    });
    form.querySelector(".duration").addEventListener("change", (event) =>
      send({ type: "edit.binding", path: "/duration", value: Number(event.target.value) * 60 }));
    form.querySelector(".duration").addEventListener("input", (event) =>
      (form.querySelector(".duration-label").value = `${event.target.value} min`));
    form.querySelectorAll("input[name=edit-theme]").forEach((radio) =>
      radio.addEventListener("change", () => send({ type: "edit.binding", path: "/theme", value: radio.value })));
    form.querySelector(".add-attendee").onclick = () => send({ type: "edit.addAttendeeButtonTapped" });
    form.querySelector(".cancel-edit").onclick = () => send({ type: "cancelEditButtonTapped" });
    form.onsubmit = (event) => {
      event.preventDefault();
      send({ type: "saveEditButtonTapped" });
    };
    this.nameTimers = new Map();
  }

  renderEdit(state) {
    const draft = state.destination.edit.draft;
    const form = app.querySelector(".edit-form");
    const setValue = (input, value) => {
      if (document.activeElement !== input && input.value !== String(value)) input.value = value;
    };
    setValue(form.querySelector(".title"), draft.title);
    setValue(form.querySelector(".duration"), draft.duration / 60);
    form.querySelector(".duration-label").value = `${draft.duration / 60} min`;
    const theme = form.querySelector(`input[name=edit-theme][value=${draft.theme}]`);
    if (theme && !theme.checked) theme.checked = true;
    const others = (field) => state.participants
      .filter((person) => person.focus === field && person.id !== this.you)
      .map((person) => `<li class="chip">${escapeHTML(person.name)}</li>`).join("");
    form.querySelector(".chips[data-for=title]").innerHTML = others("title");

    const list = form.querySelector(".attendees");
    const rows = new Map([...list.children].map((row) => [row.dataset.id, row]));
    draft.attendees.forEach((attendee, index) => {
      let row = rows.get(attendee.id);
      if (!row) {
        row = document.createElement("li");
        row.dataset.id = attendee.id;
        row.innerHTML = `<input maxlength="40" aria-label="Attendee name" data-focus="attendee:${attendee.id}">
          <button type="button" class="icon" aria-label="Remove attendee">✕</button>
          <ul class="chips"></ul>`;
        const input = row.querySelector("input");
        input.addEventListener("input", () => {
          clearTimeout(this.nameTimers.get(attendee.id));
          this.nameTimers.set(attendee.id, setTimeout(() => act(this.connection, {
            type: "edit.binding", path: `/attendees/${attendee.id}/name`, value: input.value,
          }), 150));
        });
        row.querySelector("button").onclick = () =>
          act(this.connection, { type: "edit.deleteAttendeesTapped", ids: [attendee.id] });
      }
      if (list.children[index] !== row) list.insertBefore(row, list.children[index] ?? null);
      setValue(row.querySelector("input"), attendee.name);
      row.querySelector(".chips").innerHTML = others(`attendee:${attendee.id}`);
      rows.delete(attendee.id);
    });
    for (const row of rows.values()) row.remove();
  }
}

route();
