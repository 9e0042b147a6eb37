// The shared edit form: everyone in the room sees one draft, with chips for who is where.
import { escapeHTML } from "./format.mjs";
import { fieldName, isOverLimit } from "./limits.mjs";
import { app, toast } from "./shell.mjs";
import { holds, mergeText } from "./textmerge.mjs";
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
    // A text field is shared: what this person types goes out after a short pause (or at
    // once before Save, Enter, Add attendee), with the room's text it started from, and the
    // room merges it with what others typed meanwhile (TextMerge). Someone else's typing
    // comes into the field the same way, around this person's own, while they type.
    // - `view.pending`: path → the timer of typing not sent yet;
    // - `view.roomValues`: path → the room's text as last received;
    // - `view.fields`: path → `{ shadow, inflight, unsure }`: `shadow`, the room's text the
    //   field's own text builds on; `inflight`, the change on its way (sent, not answered:
    //   `{ base, value, answer, arrived }`); `unsure`, one whose answer was lost with the
    //   connection (`{ base, value, arrived }`); `arrived`: its patch came.
    view.pending = new Map();
    view.roomValues = new Map();
    view.fields = new Map();
    const inputFor = (path) => [...form.querySelectorAll("[data-path]")]
      .find((input) => input.dataset.path === path);
    /** The field's text, built on `base`, moved onto the room's `room` (its selection kept). */
    const rebase = (input, field, base, room) => {
      if (view.composing === input) {
        // NB: writing into a composition would cancel it: the field's text still builds on
        // `base`, and its next change goes from there.
        field.shadow = base;
        return;
      }
      const focused = document.activeElement === input;
      const { selectionStart, selectionEnd, selectionDirection } = input;
      const { value, caret: end } = mergeText(base, input.value, room, focused ? selectionEnd : null);
      if (input.value !== value) {
        const start = focused && selectionStart !== selectionEnd
          ? mergeText(base, input.value, room, selectionStart).caret
          : end;
        input.value = value;
        if (focused && end !== null) input.setSelectionRange(start, end, selectionDirection);
        // NB: others' typing took it over its limit: it says so (`guardLengths` listens).
        if (isOverLimit(input)) input.dispatchEvent(new Event("input", { bubbles: true }));
      }
      field.shadow = room;
    };
    const later = (path) => {
      const waiting = view.pending.get(path);
      clearTimeout(waiting?.timer);
      // NB: typing that goes on is sent at least every 400 ms, so that others see it come.
      const since = waiting?.since ?? Date.now();
      const delay = Math.max(0, Math.min(150, since + 400 - Date.now()));
      view.pending.set(path, { since, timer: setTimeout(() => flushOne(path), delay) });
    };
    /** Sends the field's typing and waits for the room's answer; false if it was refused. */
    const flushOne = async (path) => {
      clearTimeout(view.pending.get(path)?.timer);
      view.pending.delete(path);
      const field = view.fields.get(path);
      if (!field) return true;
      // NB: one change in flight per field: the next one starts from the room's answer to
      // it. `answer` settles only after the code below the `await` that sent it has run
      // (its `then` is one step behind), so `inflight` is cleared and rebased by then.
      while (field.inflight) await field.inflight.answer;
      const input = inputFor(path);
      // NB: typing whose fate a dropped connection hid waits for the room to be back; a
      // composition or a field over its limit is not sent until it ends or fits.
      if (field.unsure || (input && (view.composing === input || isOverLimit(input)))) return false;
      if (!input || input.value === field.shadow) return true;
      const base = field.shadow;
      const value = input.value;
      const { connection } = view;
      const answer = connection.send({ type: "edit.binding", path, value, base });
      field.inflight = { base, value, answer: answer.then(() => {}, () => {}) };
      try {
        await answer;
        field.inflight = null;
        // The room holds `value` merged with others' typing: what was typed since goes onto it.
        rebase(input, field, value, view.roomValues.get(path) ?? value);
        if (input.value !== field.shadow) later(path);
        return true;
      } catch (error) {
        const { arrived } = field.inflight;
        field.inflight = null;
        if (error.code === "offline") {
          // Its answer lost with the connection: once the room is back, `resendTyping`
          // tells whether it arrived, and sends what the room lacks. (One never sent just
          // waits: the field's text still differs from `shadow`.)
          if (error.sent !== false) field.unsure = { base, value, arrived };
        } else {
          rebase(input, field, base, view.roomValues.get(path) ?? base);
          // NB: refused because the form closed meanwhile: `sayUnsentTyping` says so.
          if (!connection.closed && view.mode === "edit") toast(error.message);
        }
        return false;
      }
    };
    /** Sends what typing still waits for; resolves false if any of it was refused. */
    view.flushEdits = async () => {
      const paths = [...view.fields.keys()].filter((path) =>
        view.pending.has(path) || view.fields.get(path).inflight
        || inputFor(path)?.value !== view.fields.get(path).shadow);
      return (await Promise.all(paths.map(flushOne))).every(Boolean);
    };
    /** Leaving the room or the page: what is typed and not sent goes now, without waiting
     * for an answer; behind a change on its way, from the text that change sent (the room
     * takes one person's changes in order). */
    view.sendTypingNow = () => {
      for (const [path, field] of view.fields) {
        clearTimeout(view.pending.get(path)?.timer);
        view.pending.delete(path);
        const input = inputFor(path);
        const base = field.inflight?.value ?? field.shadow;
        if (!input || field.unsure || input.value === base || isOverLimit(input)) continue;
        view.connection.send({ type: "edit.binding", path, value: input.value, base }).catch(() => {});
      }
    };
    /** Back in the room after a drop: what did not reach it goes now. */
    const resendTyping = (resumed) => {
      for (const [path, field] of view.fields) {
        const input = inputFor(path);
        const room = view.roomValues.get(path);
        if (!input || room === undefined) continue;
        if (field.unsure) {
          const { base, value, arrived } = field.unsure;
          field.unsure = null;
          // NB: resumed, the room replayed every change since, so `arrived` is known; from a
          // whole state (the room opened afresh, another node) the room's text is all there is.
          const did = resumed ? Boolean(arrived) : holds(base, value, room);
          rebase(input, field, did ? value : base, room);
        }
        if (input.value !== field.shadow) flushOne(path);
      }
    };
    /**
     * Back in the room after a drop (`welcome`): the field this person is in is marked theirs
     * again (they came back as a new arrival, with none), and once that is answered — after
     * the patches a resumed welcome is followed by, so the room's text is current — the
     * typing whose fate the drop hid goes if it had not arrived.
     */
    view.backInTheRoom = (resumed) => {
      const field = form.contains(document.activeElement) ? document.activeElement.dataset.focus : null;
      view.connection.send({ type: "focusChanged", field: field ?? null }).then(
        () => resendTyping(resumed),
        // NB: dropped again: the next welcome tries again.
        (error) => error.code !== "offline" && resendTyping(resumed));
    };
    view.rebase = rebase;
    /** What this person typed that the room's draft does not hold (for when the form closes
     * under them: someone else saved or cancelled it). */
    view.unsentTyping = () => (view.discarding ? [] : [...view.fields].flatMap(([path, field]) => {
      const input = inputFor(path);
      return input && input.value !== field.shadow
        ? [{ path, base: field.shadow, value: input.value, name: fieldName(input) ?? "a field" }]
        : [];
    }));
    view.discarding = false;
    // NB: a composition's steps are not sent: its end (an `input` after `compositionend`) is.
    view.typeLater = (path, input, event) =>
      (event.type === "input" && event.isComposing) || isOverLimit(input) || later(path);
    const focus = (field) => send({ type: "focusChanged", field });
    const title = form.querySelector(".title");
    // NB: a field over its limit (a composition ended past it) is not sent: it says so, and
    // goes once it fits.
    title.addEventListener("input", (event) => view.typeLater("/title", title, event));
    // NB: an input method's composition (most typing on a phone) is not written into: the
    // room's text comes in once it ends, with the typing it made.
    form.addEventListener("compositionstart", (event) => (view.composing = event.target));
    form.addEventListener("compositionend", (event) => {
      view.composing = null;
      // NB: Chrome's last `input` of a composition comes before its end, still composing.
      const path = event.target.dataset.path;
      if (path) view.typeLater(path, event.target, event);
    });
    form.addEventListener("focusin", (event) => {
      if (event.target.dataset.focus) focus(event.target.dataset.focus);
    });
    form.addEventListener("focusout", (event) => {
      // NB: the form going away (saved, cancelled) blurs its input too: nothing to clear then.
      if (view.mode !== "edit") return;
      if (event.target.dataset.focus && !form.contains(event.relatedTarget)) focus(null);
    });
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
      view.discarding = true;
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
    /** A shared text field: the room's text, with what this person typed and has not yet
     * seen come back kept where it was (a change in flight is rebased on its answer). */
    const setText = (input, path, value) => {
      const before = view.roomValues.get(path);
      view.roomValues.set(path, value);
      const field = view.fields.get(path);
      if (!field) {
        view.fields.set(path, { shadow: value, inflight: null, unsure: null });
        input.value = value;
        return;
      }
      // NB: a change on its way, or whose answer a drop lost, arrived with the patch that
      // turned the room's text into it merged with that text (a resumed welcome replays them).
      const change = field.inflight ?? field.unsure;
      if (change && before !== undefined && value !== before
          && value === mergeText(change.base, change.value, before).value) change.arrived = true;
      if (!field.inflight && !field.unsure && view.composing !== input) {
        view.rebase(input, field, field.shadow, value);
      }
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
        input.addEventListener("input", (event) => view.typeLater(`/attendees/${attendee.id}/name`, input, event));
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
    for (const [id, row] of rows) {
      const input = row.querySelector("input");
      const path = `/attendees/${id}/name`;
      const field = view.fields.get(path);
      const hadFocus = row.contains(document.activeElement);
      row.remove();
      clearTimeout(view.pending.get(path)?.timer);
      view.pending.delete(path);
      view.fields.delete(path);
      view.roomValues.delete(path);
      // Someone else removed the attendee this person was typing in: the keyboard goes to
      // Add attendee, and the typing is said, not dropped without a word.
      if (hadFocus) {
        // NB: not another attendee's name, which the next keys would change.
        form.querySelector(".add-attendee").focus();
        view.send({ type: "focusChanged", field: null });
      }
      if (field && input.value !== field.shadow && input.value.trim()) {
        keepSaying(toast(`The attendee you were typing in was removed: “${input.value}” is not in the draft.`));
      }
    }
  },
};

/** A toast that holds the only copy of something typed stays longer than one that informs. */
function keepSaying(item) {
  clearTimeout(item.timer);
  item.timer = setTimeout(() => item.remove(), 30000);
  return item;
}

/**
 * The form closed under this person's typing (someone else saved or cancelled it): says what
 * did not make it in, with a button that opens the form again with it.
 */
export function sayUnsentTyping(view, unsent) {
  const what = unsent.map(({ name, value }) => `“${value}” (${name})`).join(", ");
  const item = keepSaying(toast(`The form closed before your typing reached it: ${what}.`, { kind: "unsent" }));
  const again = document.createElement("button");
  again.type = "button";
  again.className = "edit-again";
  again.textContent = "Edit again with it";
  again.onclick = async () => {
    const { connection } = view;
    try {
      await connection.send({ type: "editButtonTapped" });
      for (const { path, base, value } of unsent) {
        const attendee = /^\/attendees\/([^/]+)\/name$/.exec(path)?.[1];
        const draft = () => connection.state.destination.edit.draft;
        if (attendee && !draft().attendees.some(({ id }) => id === attendee)) {
          // NB: a new attendee whose name never came was dropped by the save: a new row.
          await connection.send({ type: "edit.addAttendeeButtonTapped" });
          const added = draft().attendees.at(-1).id;
          await connection.send({ type: "edit.binding", path: `/attendees/${added}/name`, value });
        } else {
          await connection.send({ type: "edit.binding", path, base, value });
        }
      }
      // NB: only now: until then the toast holds the only copy.
      item.remove();
    } catch (error) {
      toast(error.message);
    }
  };
  item.append(" ", again);
}
