// The edit form's text fields, shared: what this person types goes out after a short pause
// (or at once before Save, Enter, Add attendee), with the room's text it started from
// (`base`), and the room merges it with what others typed meanwhile (TextMerge). Someone
// else's typing comes into the field the same way, around this person's own, while they
// type (`textmerge.mjs`, the same merge). PROTOCOL.md, "Typing together".
import { fieldName, isOverLimit } from "./limits.mjs";
import { builtOn, keepLeftTyping, takeLeftTyping, textAt, whatTheRoomLacks } from "./comeback.mjs";
import { currentRoomView, keepSaying, offerInToast, toast } from "./shell.mjs";
import { holds, mergeText } from "./textmerge.mjs";

/** One form's text fields, by path (`/title`, `/attendees/{id}/name`). */
export class SharedText {
  constructor(view, form) {
    this.view = view;
    this.form = form;
    /** path → the timer of typing not sent yet. */
    this.pending = new Map();
    /** path → the room's text as last received. */
    this.roomValues = new Map();
    /**
     * path → `{ shadow, inflight, unsure }`: `shadow`, the room's text the field's own text
     * builds on; `inflight`, the change on its way (sent, not answered: `{ base, value,
     * answer, arrived }`); `unsure`, one whose answer was lost with the connection (`{ base,
     * value, arrived }`); `arrived`: its patch came.
     */
    this.fields = new Map();
    /** Fields whose removal this person asked for (their attendee's ✕), until answered. */
    this.removingHere = new Set();
    /** The input an input method is composing in (most typing on a phone): not written into. */
    this.composing = null;
    /** This person cancelled: what they typed is thrown away, not "left out". */
    this.discarding = false;
    /** The Cancel's answer went with the connection: the room, caught up, tells. */
    this.cancelUnsure = false;
    /** The form went (`close`): nothing of it is sent any more, whatever answer comes late. */
    this.closed = false;
    form.addEventListener("compositionstart", (event) => (this.composing = event.target));
    form.addEventListener("compositionend", (event) => {
      this.composing = null;
      // NB: Chrome's last `input` of a composition comes before its end, still composing.
      const path = event.target.dataset.path;
      if (path) this.typed(path, event.target, event);
    });
  }

  inputFor(path) {
    return [...this.form.querySelectorAll("[data-path]")].find((input) => input.dataset.path === path);
  }

  /** Typing in a field (its `input` event, or a composition's end): sent after a pause. */
  typed(path, input, event) {
    // NB: typed in during this form: a removal of the field by someone else is said
    // (`removed`). Not others' typing taking it over its limit (an event of the page's own).
    const typedIn = this.fields.get(path);
    if (typedIn && event.isTrusted) typedIn.typed = true;
    // NB: a composition's steps are not sent, nor a field over its limit (it says so): the
    // first when it ends, the second once it fits.
    if ((event.type === "input" && event.isComposing) || isOverLimit(input)) return;
    const waiting = this.pending.get(path);
    clearTimeout(waiting?.timer);
    // NB: typing that goes on is sent at least every 400 ms, so that others see it come.
    const since = waiting?.since ?? Date.now();
    const delay = Math.max(0, Math.min(150, since + 400 - Date.now()));
    this.pending.set(path, { since, timer: setTimeout(() => this.flush(path), delay) });
  }

  /** The room's text for a field (each render): it comes in around what is typed here. */
  show(input, path, value) {
    const before = this.roomValues.get(path);
    this.roomValues.set(path, value);
    const field = this.fields.get(path);
    if (!field) {
      this.fields.set(path, { shadow: value, inflight: null, unsure: null });
      input.value = value;
      return;
    }
    // NB: a change on its way, or whose answer a drop lost, arrived with the patch that
    // turned the room's text into it merged with that text (a resumed welcome replays them).
    const change = field.inflight ?? field.unsure;
    if (change && before !== undefined && value !== before
        && value === mergeText(change.base, change.value, before).value) change.arrived = true;
    // NB: a change on its way, or unsure, is rebased when its fate is known.
    if (!field.inflight && !field.unsure) this.rebase(input, field, field.shadow, value);
  }

  /** The field's text, built on `base`, moved onto the room's `room` (its selection kept). */
  rebase(input, field, base, room) {
    if (this.composing === input) {
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
  }

  /** Sends the field's typing and waits for the room's answer; false if it was refused. */
  async flush(path) {
    clearTimeout(this.pending.get(path)?.timer);
    this.pending.delete(path);
    const field = this.fields.get(path);
    // NB: a form that went sends nothing: a form opened since is another draft, someone
    // else's, and this typing was offered already (`sayUnsentTyping`).
    if (this.closed) return false;
    if (!field) return true;
    // NB: one change in flight per field: the next one starts from the room's answer to it.
    // `answer` settles only after the code below the `await` that sent it has run (its
    // `then` is one step behind), so `inflight` is cleared and rebased by then.
    while (field.inflight) await field.inflight.answer;
    // NB: and none that went while this waited for the change before it.
    if (this.closed) return false;
    const input = this.inputFor(path);
    // NB: typing whose fate a dropped connection hid waits for the room to be back; a
    // composition or a field over its limit is not sent until it ends or fits.
    if (field.unsure || (input && (this.composing === input || isOverLimit(input)))) return false;
    if (!input || input.value === field.shadow) return true;
    const base = field.shadow;
    const value = input.value;
    const { connection } = this.view;
    const answer = connection.send({ type: "edit.binding", path, value, base });
    field.inflight = { base, value, answer: answer.then(() => {}, () => {}) };
    try {
      await answer;
      field.inflight = null;
      // NB: this person's typing is in the room's draft: a Cancel by someone else throws it
      // away (`typedIn`).
      if (value !== base) field.tookPart = true;
      // The room holds `value` merged with others' typing: what was typed since goes onto it.
      this.rebase(input, field, value, this.roomValues.get(path) ?? value);
      if (input.value !== field.shadow) this.typed(path, input, { type: "answer" });
      return true;
    } catch (error) {
      const { arrived } = field.inflight;
      field.inflight = null;
      if (error.code === "offline") {
        // Its answer lost with the connection: once the room is back, `backInTheRoom` tells
        // whether it arrived, and sends what the room lacks. (One never sent just waits:
        // the field's text still differs from `shadow`.)
        if (error.sent !== false) field.unsure = { base, value, arrived };
      } else {
        this.rebase(input, field, base, this.roomValues.get(path) ?? base);
        // NB: refused because the form closed meanwhile: `sayUnsentTyping` says so.
        if (!connection.closed && this.view.mode === "edit") toast(error.message);
      }
      return false;
    }
  }

  /** Sends what typing still waits for; resolves false if any of it was refused. */
  async flushAll() {
    const paths = [...this.fields].filter(([path, field]) =>
      this.pending.has(path) || field.inflight || this.inputFor(path)?.value !== field.shadow);
    return (await Promise.all(paths.map(([path]) => this.flush(path)))).every(Boolean);
  }

  /** Leaving the room or the page: what is typed and not sent goes now, without waiting for
   * an answer; behind a change on its way, from the text that change sent (the room takes
   * one person's changes in order). */
  sendNow() {
    this.stop();
    for (const [path, field] of this.fields) {
      const input = this.inputFor(path);
      const base = field.inflight?.value ?? field.shadow;
      if (!input || field.unsure || input.value === base || isOverLimit(input)) continue;
      this.view.connection.send({ type: "edit.binding", path, value: input.value, base }).catch(() => {});
    }
  }

  /**
   * Back in the room after a drop (`welcome`): the field this person is in is marked theirs
   * again (they came back as a new arrival, with none), and once that is answered — after the
   * patches a resumed welcome is followed by, so the room's text is current — the typing
   * whose fate the drop hid goes if it had not arrived, and any typing not sent.
   */
  backInTheRoom(resumed) {
    const active = document.activeElement;
    const field = this.form.contains(active) ? active.dataset.focus ?? null : null;
    this.view.connection.send({ type: "focusChanged", field }).then(
      () => this.resend(resumed),
      // NB: dropped again: the next welcome tries again.
      (error) => error.code !== "offline" && this.resend(resumed));
  }

  resend(resumed) {
    // NB: the answer came after the form went, or after a Cancel this person pressed.
    if (this.closed || this.discarding) return;
    for (const [path, field] of this.fields) {
      const input = this.inputFor(path);
      const room = this.roomValues.get(path);
      if (!input || room === undefined) continue;
      if (field.unsure) {
        const { base, value, arrived } = field.unsure;
        field.unsure = null;
        // NB: resumed, the room replayed every change since, so `arrived` is known; from a
        // whole state (the room opened afresh, another node) the room's text is all there is.
        const did = resumed ? Boolean(arrived) : holds(base, value, room);
        this.rebase(input, field, did ? value : base, room);
      }
      if (input.value !== field.shadow) this.flush(path);
    }
  }

  /** Back in the room and caught up, the form still open: a Cancel whose answer a drop hid
   * did not happen, and what is typed in the form is this person's again. (Not one pressed
   * since, whose answer is still on its way.) */
  caughtUp() {
    if (!this.cancelUnsure) return;
    this.cancelUnsure = false;
    this.discarding = false;
  }

  /** What this person typed that the room's draft does not hold (read when the form closes
   * under them: someone else saved or cancelled it). */
  unsent() {
    if (this.discarding) return [];
    const fields = [...this.fields].flatMap(([path, field]) => {
      const input = this.inputFor(path);
      return input && input.value !== field.shadow
        ? [{ path, base: field.shadow, value: input.value, name: fieldName(input) ?? "a field" }]
        : [];
    });
    // NB: and rows added here that the room had not answered yet (`addAttendee`).
    const waiting = [...this.form.querySelectorAll("li[data-waiting] input")]
      .filter((input) => input.value.trim())
      .map((input) => newAttendeeTyping(input.value));
    return [...fields, ...waiting];
  }

  /** The fields whose draft text holds typing of this person's (the room took a change of
   * theirs, and the text is not the saved one), as they stand, built on the saved standup's
   * text (`saved`, the room's as the form closed), and on the draft's as last seen
   * (`shadow`): someone else's Cancel threw the draft away, with their typing in it. (A
   * field whose typing never reached the draft is `unsent`'s.) */
  typedIn(saved) {
    if (this.discarding) return [];
    return [...this.fields].flatMap(([path, field]) => {
      const input = this.inputFor(path);
      if (!input || !field.tookPart) return [];
      const base = textAt(saved, path) ?? "";
      return field.shadow === base ? []
        : [{ path, base, value: input.value, shadow: field.shadow, name: fieldName(input) ?? "a field" }];
    });
  }

  /** A field is gone (its attendee removed by someone else): forgets it. Typing this person
   * did in it, whether or not it reached the room, is said, with a way to add it again as a
   * new attendee: a name someone was typing does not vanish without a word. */
  removed(path, input) {
    const field = this.fields.get(path);
    clearTimeout(this.pending.get(path)?.timer);
    this.pending.delete(path);
    this.fields.delete(path);
    this.roomValues.delete(path);
    const value = input.value;
    if (this.removingHere.has(path)) return;
    if (!field || !value.trim() || (!field.typed && value === field.shadow)) return;
    // NB: by the row's id, built on its saved name: should the removal go (the form cancelled,
    // a removal undone), the typing goes back into that row, not into a second one beside it.
    const saved = (this.view.state && textAt(this.view.state.standup, path)) ?? "";
    offerTyping(this.view, `The attendee you were typing in was removed: “${value}” is not in the draft.`,
      [{ path, base: saved, value, shadow: field.shadow, name: "a removed attendee" }],
      { label: "Add it again", className: "add-again" });
  }

  /** The form went (saved, cancelled, closed under this person): nothing of it goes any more. */
  close() {
    this.closed = true;
    this.stop();
  }

  /** Typing waiting for its pause is not sent (the form is gone, or cancelled). */
  stop() {
    this.pending.forEach((waiting) => clearTimeout(waiting.timer));
    this.pending.clear();
  }
}

/** Typing for an attendee the room has not made (yet): "Edit again with it" adds one for it. */
export const newAttendeeTyping = (value) => ({ path: "/attendees/new/name", base: "", value, name: "a new attendee" });


/** Rooms whose "Edit again with it" was pressed on another screen: once the room is open
 * and offers the typing again, it is put back at once (`takeEditAgainOnArrival`). */
const editAgainOnArrival = new Set();

/** Whether "Edit again with it" was pressed for `room` on another screen; asked once, by the
 * room's screen as it opens (the next to ask gets false). */
export function takeEditAgainOnArrival(room) {
  return editAgainOnArrival.delete(room);
}

/**
 * The form closed under this person's typing (someone else saved or cancelled it; their
 * session ended): says what did not make it in, with a button that opens the form again
 * with it.
 */
export function sayUnsentTyping(view, unsent, lead = "The form closed before your typing reached it", { editNow = false } = {}) {
  const what = unsent.map(({ name, value }) => `“${value}” (${name})`).join(", ");
  const item = offerTyping(view, `${lead}: ${what}.`, unsent, { label: "Edit again with it", className: "edit-again" });
  if (editNow) editAgain(view.id, unsent, item);
}

/** Says `message` in a toast that holds `unsent` (its only copy), with a button that puts it
 * back in the room's form (`editAgain`); returns the toast. */
function offerTyping(view, message, unsent, { label, className }) {
  // NB: it goes by itself once the room holds the typing (an Undo of the Cancel brought it back).
  const item = keepSaying(message, { kind: "unsent", room: view.id, moot: (state) => !whatTheRoomLacks(unsent, state).length });
  const again = document.createElement("button");
  again.type = "button";
  again.className = className;
  again.textContent = label;
  const room = view.id;
  again.onclick = () => editAgain(room, unsent, item);
  offerInToast(item, again);
  return item;
}

/** Opens `room`'s form again with `unsent` in it; the toast `item`, which holds the only
 * copy until then, goes once it is in. */
async function editAgain(room, unsent, item) {
  // NB: the screen it was said on may be gone (the lobby and back, a rename, the page put
  // away and back): it acts through the room's screen showing now; on another screen, the
  // room opens, and takes it there (kept in this tab meanwhile, as if left unsent).
  const showing = currentRoomView(room);
  if (!showing) {
    // NB: with what an earlier leaving kept for the room, if anything (a field's own latest).
    const earlier = (takeLeftTyping(room) ?? []).filter(({ path }) => !unsent.some((typing) => typing.path === path));
    keepLeftTyping({ room, unsent: [...earlier, ...unsent] });
    editAgainOnArrival.add(room);
    item.remove();
    location.hash = `#/rooms/${room}`;
    return;
  }
  const { connection } = showing;
  const draft = () => connection.state.destination.edit.draft;
  try {
    // NB: someone may have opened the form again meanwhile: then it goes into theirs. A
    // cancel that can still be undone is undone, so that the others' changes in the form
    // come back with it (and their Undo is not taken from them).
    const { destination, undo } = connection.state;
    if (!destination?.edit) {
      await connection.send(undo?.kind === "cancelledEditing"
        ? { type: "undoButtonTapped", seq: undo.seq } : { type: "editButtonTapped" });
    }
    let last = null;
    // NB: typing the draft holds already (a Cancel undone brought it back) is not sent again.
    const lacking = whatTheRoomLacks(unsent, { destination: { edit: { draft: draft() } } });
    for (const typing of unsent) {
      const { path, value } = typing;
      const base = builtOn(typing, draft());
      if (!lacking.includes(typing)) {
        last = path;
        continue;
      }
      const attendee = /^\/attendees\/([^/]+)\/name$/.exec(path)?.[1];
      if (attendee && !draft().attendees.some(({ id }) => id === attendee)) {
        // NB: a new attendee whose name never came was dropped by the save: a new row.
        await connection.send({ type: "edit.addAttendeeButtonTapped" });
        const added = draft().attendees.at(-1).id;
        last = `/attendees/${added}/name`;
        await connection.send({ type: "edit.binding", path: last, value });
      } else {
        last = path;
        await connection.send({ type: "edit.binding", path, base, value });
      }
    }
    // The keyboard goes back where the typing was, after it: the next key goes on with it.
    const field = last && document.querySelector(`.edit-form [data-path="${CSS.escape(last)}"]`);
    if (field) {
      field.focus();
      field.setSelectionRange(field.value.length, field.value.length);
    }
    // NB: only now: until then the toast holds the only copy.
    item.remove();
  } catch (error) {
    toast(error.message);
  }
}
