// The shared edit form: everyone in the room sees one draft, with chips for who is where.
import { escapeHTML } from "./format.mjs";
import { fieldName, isOverLimit } from "./limits.mjs";
import { app, toast } from "./shell.mjs";
import { themeSwatches } from "./views.mjs";

export const edit = {
  template() {
    return `
      <form class="edit-form panel" aria-label="Edit standup">
        <h2>Edit standup <span class="hint">everyone here sees this draft</span></h2>
        <label>Title <input class="title" data-max-chars="100" autocomplete="off" data-focus="title" data-path="/title"></label>
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
  },

  wire(view) {
    const send = (action) => view.send(action);
    const form = app.querySelector(".edit-form");
    // Typing is sent after a short pause; what is still waiting goes out at once, in order,
    // before anything that depends on it (Save, Enter, Add attendee).
    view.pending = new Map();
    // What this browser last sent for each field, and the value each last showed from the
    // room: a new value that is neither came from someone else typing in the same field.
    view.sentValues = new Map();
    view.roomValues = new Map();
    const later = (path, value) => {
      // NB: typing on after someone else's text came: this person's goes out last, and stays.
      const input = form.querySelector(`[data-path="${path}"]`);
      if (input) delete input.dataset.theirs;
      clearTimeout(view.pending.get(path)?.timer);
      const timer = setTimeout(() => flushOne(path), 150);
      view.pending.set(path, { value, timer });
    };
    const flushOne = (path) => {
      const waiting = view.pending.get(path);
      if (!waiting) return Promise.resolve(true);
      clearTimeout(waiting.timer);
      view.pending.delete(path);
      view.sentValues.set(path, waiting.value);
      const { connection } = view;
      return connection.send({ type: "edit.binding", path, value: waiting.value }).catch((error) => {
        // Not sent, or its answer lost with the connection: it goes again once the room is
        // back (`resendTyping`), unless typing went on meanwhile. Setting a field to what was
        // typed twice changes nothing more.
        if (error.code === "offline") {
          if (!view.pending.has(path)) view.pending.set(path, { value: waiting.value });
        } else if (!connection.closed) {
          toast(error.message);
        }
        return null;
      });
    };
    /** Sends what typing still waits for; resolves false if any of it was refused. */
    view.flushEdits = async () =>
      (await Promise.all([...view.pending.keys()].map(flushOne))).every((ack) => ack !== null);
    view.typeLater = later;
    /** Back in the room after a drop: what could not be sent goes now. */
    view.resendTyping = () => view.pending.size && view.flushEdits();
    const focus = (field) => send({ type: "focusChanged", field });
    const title = form.querySelector(".title");
    // NB: a field over its limit (a composition ended past it) is not sent: it says so, and
    // goes once it fits.
    title.addEventListener("input", () => isOverLimit(title) || later("/title", title.value));
    form.addEventListener("focusin", (event) => {
      delete event.target.dataset.typed;
      if (event.target.dataset.focus) focus(event.target.dataset.focus);
    });
    // NB: only a field typed in since it took the focus can have been typed over.
    form.addEventListener("input", (event) => {
      if (event.target.dataset.path) event.target.dataset.typed = "";
    });
    form.addEventListener("focusout", (event) => {
      // NB: the form going away (saved, cancelled) blurs its input too: nothing to clear then.
      if (view.mode !== "edit") return;
      const input = event.target;
      if (input.dataset.theirs !== undefined) {
        overwritten(input);
      } else if (!("typed" in input.dataset) && view.roomValues.has(input.dataset.path)) {
        // NB: a field only sat in kept its text while it had the focus: it shows the room's
        // now, not at the next change to the room.
        input.value = view.roomValues.get(input.dataset.path);
      }
      if (event.target.dataset.focus && !form.contains(event.relatedTarget)) focus(null);
    });
    /**
     * Someone else wrote this field while this person typed in it, and the room kept theirs
     * (the last one sent wins). Leaving the field shows the room's text: what this person
     * typed is said, with a button that puts it back, rather than dropped without a word.
     */
    const overwritten = (input) => {
      const theirs = input.dataset.theirs;
      delete input.dataset.theirs;
      const mine = input.value;
      const path = input.dataset.path;
      if (!path || mine === theirs || view.pending.has(path)) return;
      // NB: the field shows the room's text now, not at the next change to the room.
      input.value = view.roomValues.get(path) ?? theirs;
      const item = toast(
        `“${fieldName(input) ?? "This field"}” was changed to “${theirs}” by someone else while you typed “${mine}”.`,
        { kind: "overwritten" });
      const putBack = document.createElement("button");
      putBack.type = "button";
      putBack.className = "put-back";
      putBack.textContent = "Put mine back";
      putBack.onclick = () => {
        item.remove();
        later(path, mine);
        view.flushEdits();
      };
      item.append(" ", putBack);
      // NB: longer than a toast that only informs: it holds the only copy of that text.
      clearTimeout(item.timer);
      item.timer = setTimeout(() => item.remove(), 30000);
    };
    form.querySelector(".duration").addEventListener("change", (event) =>
      send({ type: "edit.binding", path: "/duration", value: Number(event.target.value) * 60 }));
    form.querySelector(".duration").addEventListener("input", (event) =>
      (form.querySelector(".duration-label").value = `${event.target.value} min`));
    form.querySelectorAll("input[name=edit-theme]").forEach((radio) =>
      radio.addEventListener("change", () => send({ type: "edit.binding", path: "/theme", value: radio.value })));
    form.querySelector(".add-attendee").onclick = () => {
      view.flushEdits();
      view.focusNewAttendee = true;
      send({ type: "edit.addAttendeeButtonTapped" });
    };
    form.querySelector(".cancel-edit").onclick = () => {
      view.pending.forEach((waiting) => clearTimeout(waiting.timer));
      view.pending.clear();
      send({ type: "cancelEditButtonTapped" });
    };
    // Enter in an attendee's name adds the next attendee; anywhere else it saves.
    form.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.isComposing) return;
      if (!event.target.matches(".attendees input")) return;
      event.preventDefault();
      form.querySelector(".add-attendee").click();
    });
    form.onsubmit = async (event) => {
      event.preventDefault();
      // NB: sent at once, in order, before the save; a refused edit (its toast says why)
      // keeps the form open rather than saving an older draft than the one on screen.
      const saveAfter = view.flushEdits();
      if (await saveAfter) send({ type: "saveEditButtonTapped" });
    };
  },

  render(view, state) {
    const draft = state.destination.edit.draft;
    const form = app.querySelector(".edit-form");
    const setValue = (input, value) => {
      if (document.activeElement !== input && input.value !== String(value)) input.value = value;
    };
    /** A text field: its value from the room, noting one someone else wrote while focused. */
    const setText = (input, path, value) => {
      const before = view.roomValues.get(path);
      view.roomValues.set(path, value);
      if (document.activeElement === input && "typed" in input.dataset && before !== undefined
        && value !== before
        && value !== view.sentValues.get(path) && value !== input.value && !view.pending.has(path)) {
        input.dataset.theirs = value;
      }
      setValue(input, value);
    };
    setText(form.querySelector(".title"), "/title", draft.title);
    setValue(form.querySelector(".duration"), draft.duration / 60);
    form.querySelector(".duration-label").value = `${draft.duration / 60} min`;
    const theme = form.querySelector(`input[name=edit-theme][value=${draft.theme}]`);
    if (theme && !theme.checked) theme.checked = true;
    const others = (field) => state.participants
      .filter((person) => person.focus === field && person.id !== view.you)
      .map((person) => `<li class="chip">${escapeHTML(person.name)}</li>`).join("");
    form.querySelector(".chips[data-for=title]").innerHTML = others("title");

    const list = form.querySelector(".attendees");
    const rows = new Map([...list.children].map((row) => [row.dataset.id, row]));
    draft.attendees.forEach((attendee, index) => {
      let row = rows.get(attendee.id);
      if (!row) {
        row = document.createElement("li");
        row.dataset.id = attendee.id;
        row.innerHTML = `<input data-max-chars="40" aria-label="Attendee name" data-focus="attendee:${attendee.id}"
          data-path="/attendees/${attendee.id}/name">
          <button type="button" class="icon" aria-label="Remove attendee">✕</button>
          <ul class="chips"></ul>`;
        const input = row.querySelector("input");
        input.addEventListener("input", () =>
          isOverLimit(input) || view.typeLater(`/attendees/${attendee.id}/name`, input.value));
        row.querySelector("button").onclick = () => {
          view.flushEdits();
          view.send({ type: "edit.deleteAttendeesTapped", ids: [attendee.id] });
        };
        if (view.focusNewAttendee && index === draft.attendees.length - 1) {
          view.focusNewAttendee = false;
          queueMicrotask(() => input.focus());
        }
      }
      if (list.children[index] !== row) list.insertBefore(row, list.children[index] ?? null);
      setText(row.querySelector("input"), `/attendees/${attendee.id}/name`, attendee.name);
      row.querySelector(".chips").innerHTML = others(`attendee:${attendee.id}`);
      rows.delete(attendee.id);
    });
    for (const row of rows.values()) row.remove();
  },
};
