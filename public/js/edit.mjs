// The shared edit form: everyone in the room sees one draft, with chips for who is where.
import { escapeHTML } from "./format.mjs";
import { app, toast } from "./shell.mjs";
import { SharedText, newAttendeeTyping, sayUnsentTyping } from "./sharedtext.mjs";
import { numberRow, themeSwatches } from "./views.mjs";

/** Saves the draft; a refusal says why: under the field it names (which gets the keyboard),
 * else in a notice. */
async function save(view, form) {
  try {
    await view.connection.send({ type: "saveEditButtonTapped" });
  } catch (error) {
    if (view.connection.closed) return;
    const field = error.field && form.querySelector(`[data-focus="${CSS.escape(error.field)}"]`);
    if (!field) return toast(error.message, { kind: "save-refused" });
    // NB: one at a time: the next refusal replaces the last, which is about its own field.
    if (view.refusal) clearRefusal(view, view.refusal);
    // NB: beside the field, not in a notice that goes in 5 s while the field stays marked;
    // and what a screen reader says of the field, as the keyboard lands there.
    const line = Object.assign(document.createElement("p"), {
      className: "field-error", id: "edit-refusal", textContent: error.message,
    });
    (field.closest(".field") ?? field.closest("li")).append(line);
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", line.id);
    const refusal = { field, line, about: refusedPart(view.state, error.field), typed: new AbortController() };
    view.refusal = refusal;
    field.addEventListener("input", () => clearRefusal(view, refusal), { once: true, signal: refusal.typed.signal });
    // NB: the keyboard lands on the field, which says why — also when it was there already
    // (Enter in the title saves): a screen reader says a field as it gets the keyboard.
    if (document.activeElement === field) field.blur();
    field.focus({ preventScroll: true });
    field.scrollIntoView({ block: "center" });
  }
}

/** What a refused save was about in the draft: its title, or its attendees' names (a name
 * may be refused for being another's too). Someone changing it answers the refusal. */
function refusedPart(state, field) {
  const draft = state?.destination?.edit?.draft;
  if (!draft) return null;
  return field === "title" ? draft.title : JSON.stringify(draft.attendees.map(({ id, name }) => [id, name]));
}

/** The refused field is changed (here, or by someone else in the room): no longer marked. */
function clearRefusal(view, refusal) {
  refusal.field.removeAttribute("aria-invalid");
  refusal.field.removeAttribute("aria-describedby");
  refusal.line.remove();
  refusal.typed.abort();
  if (view.refusal === refusal) view.refusal = null;
}

export const edit = {
  template() {
    return `
      <form class="edit-form panel" aria-label="Edit standup">
        <h2>Edit standup</h2><p class="hint">Everyone here sees this draft.</p>
        <div class="field"><label>Title <input class="title" dir="auto" data-max-chars="100" autocomplete="off" data-focus="title" data-path="/title"></label>
          <ul class="chips" data-for="title" aria-label="Also in this field"></ul></div>
        <label>Length <span class="range"><input class="duration" type="range" min="5" max="30">
          <output class="duration-label"></output></span></label>
        <fieldset class="themes"><legend>Theme</legend>${themeSwatches("edit-theme", null)}</fieldset>
        <fieldset><legend>Attendees</legend><ul class="attendees" tabindex="-1" aria-label="Attendees"></ul>
          <button type="button" class="add-attendee">Add attendee</button></fieldset>
        <div class="actions">
          <button type="button" class="cancel-edit">Cancel</button>
          <button class="primary save-edit">Save</button>
        </div>
      </form>`;
  },

  wire(view) {
    const send = (action) => view.send(action);
    const form = app.querySelector(".edit-form");
    // The text fields are shared: typing goes out as it comes, and others' comes in around
    // it (sharedtext.mjs).
    const text = new SharedText(view, form);
    view.text = text;
    view.refusal = null; // one of a form closed since went with it
    const focus = (field) => sayFocus(view, field);
    const title = form.querySelector(".title");
    title.addEventListener("input", (event) => text.typed("/title", title, event));
    form.addEventListener("focusin", (event) => {
      if (event.target.dataset.focus) focus(event.target.dataset.focus);
    });
    form.addEventListener("focusout", (event) => {
      // NB: the form going away (saved, cancelled) blurs its input too: nothing to clear then.
      if (view.mode !== "edit") return;
      if (event.target.dataset.focus && !form.contains(event.relatedTarget)) focus(null);
    });
    // NB: a setting the room did not take (offline, refused) shows the room's again.
    const set = async (action) => {
      const draft = () => view.state?.destination?.edit?.draft;
      if ((await send(action)) === null && view.mode === "edit" && draft()) showSettings(form, draft());
    };
    form.querySelector(".duration").addEventListener("change", (event) =>
      set({ type: "edit.binding", path: "/duration", value: Number(event.target.value) * 60 }));
    form.querySelector(".duration").addEventListener("input", (event) => showLength(form, event.target.value));
    // NB: the slider follows the room while it has the keyboard (an arrow key then moves on
    // from what others set), not while a pointer drags it.
    const duration = form.querySelector(".duration");
    duration.addEventListener("pointerdown", () => (duration.dataset.dragging = "true"));
    for (const end of ["pointerup", "pointercancel", "change"]) {
      duration.addEventListener(end, () => delete duration.dataset.dragging);
    }
    form.querySelectorAll("input[name=edit-theme]").forEach((radio) =>
      radio.addEventListener("change", () => set({ type: "edit.binding", path: "/theme", value: radio.value })));
    view.addsWaiting = new Set();
    form.querySelector(".add-attendee").onclick = () => {
      const adding = addAttendee(view, form);
      view.addsWaiting.add(adding);
      adding.finally(() => view.addsWaiting.delete(adding));
    };
    form.querySelector(".cancel-edit").onclick = async () => {
      text.discarding = true;
      text.stop();
      try {
        await view.connection.send({ type: "cancelEditButtonTapped" });
      } catch (error) {
        if (view.connection.closed) return;
        toast(error.message);
        // Its answer went with the connection: the room, once back, tells whether it was
        // cancelled (the form is gone then) or not (`caughtUp` keeps the typing again).
        if (error.code === "offline" && error.sent !== false) {
          text.cancelUnsure = true;
          return;
        }
        // Refused, or never sent: the form stays, and what is typed in it is kept again.
        text.discarding = false;
        text.flushAll();
      }
    };
    // NB: the list has the keyboard only when someone removed the attendee being typed in:
    // the keys typed on do nothing (no scrolling space, no browser find on "'" or "/").
    const list = form.querySelector(".attendees");
    list.addEventListener("keydown", (event) => {
      if (event.target === list && event.key.length === 1) event.preventDefault();
    });
    // Enter in an attendee's name adds the next attendee; anywhere else it saves.
    form.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.isComposing) return;
      if (!event.target.matches(".attendees input")) return;
      event.preventDefault();
      form.querySelector(".add-attendee").click();
    });
    form.onsubmit = async (event) => {
      event.preventDefault();
      // NB: one save at a time: a second press while the first waits would be refused after it.
      if (view.saving) return;
      view.saving = true;
      try {
        // NB: a row added a moment ago holds its typing until the room's attendee takes it.
        await Promise.all(view.addsWaiting);
        // NB: sent at once, in order, before the save; a refused edit (its toast says why)
        // keeps the form open rather than saving an older draft than the one on screen.
        if (await text.flushAll()) await save(view, form);
      } finally {
        view.saving = false;
      }
    };
  },

  render(view, state) {
    const draft = state.destination.edit.draft;
    const form = app.querySelector(".edit-form");
    const { text } = view;
    const refusal = view.refusal;
    if (refusal && refusedPart(state, refusal.field.dataset.focus) !== refusal.about) clearRefusal(view, refusal);
    text.show(form.querySelector(".title"), "/title", draft.title);
    showSettings(form, draft);
    const others = (field) => state.participants
      .filter((person) => person.focus === field && person.id !== view.you)
      .map((person) => `<li class="chip" title="${escapeHTML(person.name)}">${escapeHTML(person.name)}</li>`).join("");
    form.querySelector(".chips[data-for=title]").innerHTML = others("title");

    const list = form.querySelector(".attendees");
    // NB: rows added here that the room has not answered yet stay below the room's.
    const waiting = [...list.querySelectorAll("li[data-waiting]")];
    const rows = new Map([...list.children].filter((row) => !waiting.includes(row)).map((row) => [row.dataset.id, row]));
    // NB: the rows of attendees removed go first, so that the rows after them need not move:
    // a row moved in the page loses the keyboard, and the next keys of whoever typed in it.
    const kept = new Set(draft.attendees.map(({ id }) => id));
    for (const [id, row] of rows) {
      if (kept.has(id)) continue;
      rows.delete(id);
      const hadFocus = row.contains(document.activeElement);
      row.remove();
      text.removed(`/attendees/${id}/name`, row.querySelector("input"));
      // Someone else removed the attendee this person was typing in: the keyboard goes to
      // the list of attendees, where the next keys do nothing (not into another attendee's
      // name, which they would change, nor onto Add attendee, which a space would press).
      if (hadFocus) {
        list.focus();
        sayFocus(view, null);
      }
    }
    draft.attendees.forEach((attendee, index) => {
      let row = rows.get(attendee.id);
      if (!row) {
        row = document.createElement("li");
        row.dataset.id = attendee.id;
        row.innerHTML = `<input dir="auto" data-max-chars="40" data-focus="attendee:${attendee.id}"
          data-path="/attendees/${attendee.id}/name">
          <button type="button" class="icon">✕</button>
          <ul class="chips" aria-label="Also in this field"></ul>`;
        const input = row.querySelector("input");
        input.addEventListener("input", (event) => text.typed(`/attendees/${attendee.id}/name`, input, event));
        row.querySelector("button").onclick = () => {
          text.flushAll();
          // NB: removed by this person: its row going is no news to them (`removed`).
          const path = `/attendees/${attendee.id}/name`;
          text.removingHere.add(path);
          view.send({ type: "edit.deleteAttendeesTapped", ids: [attendee.id] })
            .finally(() => text.removingHere.delete(path));
        };
      }
      if (list.children[index] !== row) list.insertBefore(row, list.children[index] ?? null);
      numberRow(row, index);
      text.show(row.querySelector("input"), `/attendees/${attendee.id}/name`, attendee.name);
      row.querySelector(".chips").innerHTML = others(`attendee:${attendee.id}`);
      rows.delete(attendee.id);
    });
    waiting.forEach((row, index) => numberRow(row, draft.attendees.length + index));
  },
};

/**
 * Add attendee (or Enter in an attendee's name): a row with the keyboard at once, so that the
 * next keys go into the new attendee even before the room answers (a slow network); with the
 * answer, the room's new attendee takes the row's place, and what was typed in it.
 */
async function addAttendee(view, form) {
  view.text.flushAll();
  const list = form.querySelector(".attendees");
  const row = document.createElement("li");
  row.dataset.waiting = "";
  row.innerHTML = `<input dir="auto" data-max-chars="40" autocomplete="off">
    <button type="button" class="icon" disabled>✕</button>`;
  list.append(row);
  numberRow(row, list.children.length - 1);
  const input = row.querySelector("input");
  input.focus();
  // NB: the room's state is the answer's own version when it settles (its patch came first,
  // the next message has not): the new attendee is the draft's last.
  const answer = await view.send({ type: "edit.addAttendeeButtonTapped" });
  const hadFocus = document.activeElement === input;
  const { value, selectionStart, selectionEnd, selectionDirection } = input;
  row.remove();
  // NB: the form closed meanwhile, or the page left the room: what the row held was said
  // then, with the form's other typing (`SharedText.unsent`).
  if (!form.isConnected || view.connection.closed) return;
  const id = answer && view.state.destination?.edit?.draft.attendees.at(-1)?.id;
  const path = `/attendees/${id}/name`;
  const added = id ? form.querySelector(`[data-path="${CSS.escape(path)}"]`) : null;
  if (!added) {
    // Refused (its toast says why), or the connection dropped: the typing is offered back.
    if (value.trim()) sayUnsentTyping(view, [newAttendeeTyping(value)], "Your typing had no new attendee to go in");
    if (hadFocus) form.querySelector(".add-attendee").focus();
    return;
  }
  if (value) {
    added.value = value;
    // NB: as if typed there: sent, and measured against the name's limit.
    added.dispatchEvent(new Event("input", { bubbles: true }));
  }
  if (hadFocus) {
    added.focus();
    added.setSelectionRange(selectionStart, selectionEnd, selectionDirection);
  }
}

/** Tells the room where this person's keyboard is. NB: only a hint to the others of who is
 * editing what: offline, it goes unsaid, not as an error about something the person did not do. */
function sayFocus(view, field) {
  view.connection.send({ type: "focusChanged", field }).catch(() => {});
}

/** The draft's length and theme in the form (the slider not while a pointer drags it). */
function showSettings(form, draft) {
  const duration = form.querySelector(".duration");
  if (!duration.dataset.dragging) {
    duration.value = draft.duration / 60;
    showLength(form, duration.value);
  }
  const theme = form.querySelector(`input[name=edit-theme][value=${draft.theme}]`);
  if (theme && !theme.checked) theme.checked = true;
}

/** The slider's length beside it, and as a screen reader says it ("15 minutes", not "15"). */
function showLength(form, minutes) {
  form.querySelector(".duration-label").value = `${minutes} min`;
  form.querySelector(".duration").setAttribute("aria-valuetext", `${minutes} minutes`);
}
