// A note that was being typed when the meeting ended (someone saved and ended it, or its time
// ran out): offered for the meeting just saved (`history.noteSubmitted`), above whatever the
// room shows next — the detail, the edit form, a new meeting — until it is added or set aside.
import { compositionGuard } from "./composing.mjs";
import { meetingEnded } from "./format.mjs";
import { lateNoteKey } from "./notekept.mjs";
import { app, currentRoomView, keepSaying, offerInToast, toast, whereTheWorkIs } from "./shell.mjs";

/** Calls `then` once the person is done with the late note typed in `input`: it is added,
 * set aside or emptied, or the keyboard goes elsewhere than its form (or `beside`, the alert
 * that waits for it). */
export function afterLateNote(input, beside, then) {
  const release = (event) => {
    if (event.type === "input" && input.value.trim()) return;
    // NB: the note's own buttons (Add, Not needed) take the keyboard on a press: not done yet.
    if (event.type === "focusin" && (input.form?.contains(event.target) || beside.contains(event.target))) return;
    input.removeEventListener("input", release);
    document.removeEventListener("focusin", release);
    doneWaiters.delete(release);
    then();
  };
  input.addEventListener("input", release);
  document.addEventListener("focusin", release);
  // NB: a note added or set aside may leave the keyboard nowhere (a hidden field's).
  doneWaiters.add(release);
}

const doneWaiters = new Set();

function keep(view) {
  if (view.lateNote) sessionStorage.setItem(lateNoteKey(view.id), JSON.stringify(view.lateNote));
  else sessionStorage.removeItem(lateNoteKey(view.id));
}

function kept(view) {
  try {
    return JSON.parse(sessionStorage.getItem(lateNoteKey(view.id)) ?? "null");
  } catch {
    return null; // not a record this page wrote
  }
}

/** Which meeting the note is for, as people tell meetings apart: when it ended. */
function meetingName(view, id) {
  const ended = meetingEnded(view.state?.standup.meetings ?? [], id);
  return ended ? `the meeting that ended ${ended}` : "the earlier meeting it was for";
}

/** How long after it ended a meeting takes a late note (`history.noteSubmitted`). */
const WINDOW_MS = 10 * 60 * 1000;
/** How far this browser's clock may be from the server's before the form closes early. */
const CLOCKS_APART_MS = 60 * 1000;

/** Shows `view.lateNote` in the form: to add, or, once its meeting takes no more notes (its
 * ten minutes passed, or the room said so), kept there to copy until it is forgotten. */
function show(view) {
  const form = app.querySelector(".late-note");
  form.hidden = false;
  const { meeting: id } = view.lateNote;
  const ended = Date.parse(view.state?.standup.meetings.find((meeting) => meeting.id === id)?.date);
  // NB: by this browser's clock, which may not be the server's: a minute's grace, after which
  // the room would refuse it anyway unless the clock is that far behind (then the refusal
  // closes it, below).
  const left = ended + WINDOW_MS + CLOCKS_APART_MS - Date.now();
  const closed = view.lateNote.closed || left <= 0;
  clearTimeout(view.lateNoteWindow);
  if (!closed && left > 0) {
    // NB: only while this room's screen shows it (another screen would find another form).
    view.lateNoteWindow = setTimeout(() => {
      if (view.lateNote?.meeting === id && currentRoomView(view.id) === view) show(view);
    }, Math.min(left + 1000, 2 ** 31 - 1));
  }
  // NB: true of a note sent that the meeting ended before it got, and of one still being
  // typed, never sent.
  form.querySelector("label").textContent = closed
    ? `Your note is not in ${meetingName(view, id)}, which takes no more notes now: copy it from here, or forget it.`
    : `Your note is not in ${meetingName(view, id)}: add it to that meeting.`;
  form.querySelector(".add").hidden = closed;
  form.querySelector(".set-aside").textContent = closed ? "Forget this note" : "Not needed";
  // NB: typed in since, the field keeps it (a timer's turn must not take it back).
  const input = form.querySelector("input");
  if (input.value !== view.lateNote.text) input.value = view.lateNote.text;
}

/** The note went in (or was set aside): the next one waiting takes its place, or the form
 * goes (and the keyboard to the room's title). */
function done(view, form) {
  const hadFocus = form.contains(document.activeElement);
  for (const waiter of [...doneWaiters]) waiter({ type: "done" });
  const next = view.lateNote?.waiting?.[0];
  if (next) {
    view.lateNote = { ...next, waiting: view.lateNote.waiting.slice(1) };
    keep(view);
    show(view);
    if (hadFocus) form.querySelector("input").focus();
    // NB: the room is here now: whether it got this one is known at once.
    if (view.lateNote.unsure && view.connection.isOpen) lateNote.backInTheRoom(view);
    return;
  }
  view.lateNote = null;
  keep(view);
  clearTimeout(view.lateNoteWindow);
  form.querySelector("input").value = "";
  form.hidden = true;
  // NB: in a meeting, back to its note field (the next note goes there); else the title.
  if (hadFocus) whereTheWorkIs()?.focus();
}

/** The note `sent` went in. What was typed after it while it was on its way stays in the
 * field; a note changed inside meanwhile stays whole (said so), to be added again or not. */
function went(view, form, sent, said = "Your note was added to the meeting that ended") {
  if (view.lateNoteComposition.composing) {
    view.lateNoteComposition.after(() => went(view, form, sent, said));
    return;
  }
  const input = form.querySelector("input");
  const rest = input.value.startsWith(sent) ? input.value.slice(sent.length).trim() : null;
  if (rest === "" || input.value.trim() === sent.trim()) {
    done(view, form);
    toast(`${said}.`);
  } else if (rest !== null) {
    input.value = rest;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    toast(`${said}; the field keeps what you typed after it.`);
  } else {
    toast(`${said}; the field keeps what you changed in it since.`);
  }
}

/** How long "Bring it back" is offered for a note set aside. */
const SET_ASIDE_MS = 10_000;

/** "Not needed": the note goes, with a way back for a while (a press by mistake). */
function setAside(view, form) {
  const { meeting, speaker } = view.lateNote;
  const text = form.querySelector("input").value;
  done(view, form);
  if (!text.trim()) return;
  // NB: for as long as the room's own Undo, as what it says was asked for (its time stands
  // still while it is pointed at or has the keyboard).
  const item = keepSaying(`Your note was set aside: “${text.trim()}”.`, { kind: "late-note", lasts: SET_ASIDE_MS });
  const back = document.createElement("button");
  back.type = "button";
  back.className = "bring-back";
  back.textContent = "Bring it back";
  const room = view.id;
  back.onclick = () => {
    item.remove();
    const note = { meeting, speaker, text, typing: [text.length, text.length] };
    // NB: through the room's screen showing now (the one it was set aside on may be gone);
    // on another screen, kept for the room, which opens and offers it.
    const showing = currentRoomView(room);
    if (showing) return lateNote.offer(showing, note);
    keepFor(room, note);
    location.hash = `#/rooms/${room}`;
  };
  offerInToast(item, back);
}

/** Keeps `note` for `room`'s next opening in this tab, ahead of a note kept for it already
 * (which waits its turn after it). */
function keepFor(room, note) {
  const before = kept({ id: room });
  const waiting = before?.meeting && before.text?.trim()
    ? [{ meeting: before.meeting, speaker: before.speaker, text: before.text }, ...(before.waiting ?? [])]
    : before?.waiting ?? [];
  sessionStorage.setItem(lateNoteKey(room), JSON.stringify({ ...note, typing: null, waiting }));
}

export const lateNote = {
  template() {
    return `
      <form class="late-note panel" hidden>
        <label for="late-note">Your note is not in the meeting that ended: add it to that meeting.</label>
        <div class="late-note-row">
          <input id="late-note" dir="auto" data-max-chars="1000" autocomplete="off" required>
          <button class="primary add">Add to the meeting</button>
          <button type="button" class="set-aside">Not needed</button>
        </div>
      </form>`;
  },

  wire(view) {
    view.lateNote = null;
    const form = app.querySelector(".late-note");
    const input = form.querySelector("input");
    const add = form.querySelector(".add");
    // NB: nothing writes into the field while an input method composes in it (`went`).
    view.lateNoteComposition = compositionGuard(input);
    input.addEventListener("input", () => {
      if (!view.lateNote) return;
      view.lateNote.text = input.value;
      keep(view);
    });
    form.querySelector(".set-aside").addEventListener("click", () => setAside(view, form));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      // NB: one at a time: a second Enter while the first is on its way would add it twice.
      // NB: marked, not disabled, while on its way: a disabled button loses the keyboard.
      if (add.getAttribute("aria-disabled") === "true" || add.hidden || !view.lateNote) return;
      const { meeting, speaker } = view.lateNote;
      const text = input.value;
      const notes = view.state.standup.meetings.find(({ id }) => id === meeting)?.notes.length ?? 0;
      add.setAttribute("aria-disabled", "true");
      // NB: unsure until its answer comes, and kept so in the tab before it goes: a page that
      // reloads, is put away or leaves the room meanwhile never hears the answer, and must
      // look in the meeting before offering the note again (pressed again, it went twice).
      const unsure = { notes, text };
      view.lateNote.unsure = unsure;
      keep(view);
      // NB: not looked for while on its way (a replay ending meanwhile): not there yet.
      view.lateNoteSending = unsure;
      const settled = () => {
        if (view.lateNote?.unsure !== unsure) return;
        view.lateNote.unsure = null;
        keep(view);
      };
      try {
        await view.connection.send({ type: "history.noteSubmitted", meeting, text, speaker });
        settled();
        went(view, form, text);
      } catch (error) {
        // NB: the page closed the connection itself (it left): unsure, as kept.
        if (view.connection.closed) return;
        // NB: the field keeps the note: refused (too late, too long), it can still be copied.
        toast(error.message);
        // Too late (its ten minutes passed): the form says so from now on. (Not while the
        // standup's deletion waits for its Undo: that refusal may not last.)
        const deleting = view.state?.undo?.kind === "deletedStandup";
        if (error.code === "invalid_action" && !deleting && view.lateNote?.meeting === meeting) {
          view.lateNote.closed = true;
          keep(view);
          show(view);
        }
        // The answer may be what was lost (`sent`): then the room tells, once the page is
        // back (a reload included: kept with the note). Otherwise it did not go in.
        if (error.code !== "offline" || error.sent === false) settled();
      } finally {
        view.lateNoteSending = null;
        add.removeAttribute("aria-disabled");
      }
    });
  },

  /**
   * Offers `late` (`{ meeting, speaker, text, typing }`, `typing`: where the caret was if the
   * person was typing it) to this person (`by`): they go on typing where they were.
   */
  offer(view, late) {
    // NB: one note in the form at a time, the newest (the keyboard is in it): one for an
    // earlier meeting still there waits its turn, after those waiting already.
    const current = view.lateNote;
    const waiting = [...(late.waiting ?? current?.waiting ?? [])];
    const earlier = current?.meeting !== late.meeting && lateNote.typed();
    // NB: with what is known of its answer: one a drop hid is looked for when its turn comes.
    if (earlier) waiting.unshift({ meeting: current.meeting, speaker: current.speaker, text: earlier, unsure: current.unsure ?? null });
    // NB: a note whose answer a drop hid (`unsure`) stays so through a reload.
    view.lateNote = { meeting: late.meeting, speaker: late.speaker, text: late.text, waiting, unsure: late.unsure ?? null, closed: late.closed ?? false };
    keep(view);
    show(view);
    const input = app.querySelector("#late-note");
    if (late.typing) {
      input.focus();
      input.setSelectionRange(...late.typing);
    }
  },

  /** A page opened afresh (a reload) offers the notes this tab kept (a sign-out clears
   * them: whoever is in this tab is who typed them, renamed or not). */
  restore(view) {
    const late = kept(view);
    if (late?.meeting && late.text?.trim()) lateNote.offer(view, { ...late, typing: null });
  },

  /** Back in the room after a drop that hid whether the note arrived: if the meeting has it
   * (a note of this person's with its text, after those it had), it is not offered again. */
  backInTheRoom(view) {
    const unsure = view.lateNote?.unsure;
    if (!unsure || view.lateNoteSending === unsure) return;
    view.lateNote.unsure = null;
    keep(view);
    const meeting = view.state.standup.meetings.find(({ id }) => id === view.lateNote.meeting);
    const me = view.myName();
    const arrived = (meeting?.notes ?? []).slice(unsure.notes)
      .some((note) => note.text === unsure.text.trim() && note.author === me);
    if (!arrived) return;
    // NB: that it got there, not when (`notesArrived`, meeting.mjs).
    went(view, app.querySelector(".late-note"), unsure.text, "Your note got into the meeting that ended, though the connection dropped");
  },

  /**
   * The meeting the note showing is for left the history as it came back (`before` to
   * `after`): its save failed, and was undone. The note is taken from the form (the next one
   * waiting takes its place) and returned (`text`, and `typing`: whether the keyboard was in
   * it), for the meeting's own field; null otherwise.
   */
  unsaved(view, before, after) {
    const id = view.lateNote?.meeting;
    const went = id && before.standup.meetings.some((meeting) => meeting.id === id)
      && !after.standup.meetings.some((meeting) => meeting.id === id);
    if (!went) return null;
    const form = app.querySelector(".late-note");
    const typing = form.contains(document.activeElement);
    const text = lateNote.typed() || view.lateNote.text;
    done(view, form);
    return { text, typing };
  },

  /** The note as typed, while it is offered: typing the room never got. */
  typed() {
    const form = app.querySelector(".late-note");
    return form && !form.hidden ? form.querySelector("input").value.trim() : "";
  },

  /** The note offered and what it is for (`{ meeting, speaker, text, waiting }`, with the
   * notes for earlier meetings waiting their turn), to keep through a sign-in; null when none
   * is. */
  kept(view) {
    const text = lateNote.typed();
    if (!view.lateNote || (!text && !view.lateNote.waiting?.length)) return null;
    const { meeting, speaker, waiting, unsure } = view.lateNote;
    return { meeting, speaker, text, waiting: waiting ?? [], unsure: unsure ?? null };
  },
};
