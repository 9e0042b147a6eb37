// The running meeting: the ring, the speaker and their turn, the clock, notes, ending it
// (the chime and the notification on a new speaker: turns.mjs).
import { compositionGuard } from "./composing.mjs";
import { arcPath, isolated } from "./format.mjs";
import { forgetFinishNote, showEndAlert, takeTheKeyboard } from "./endalert.mjs";
import { NotesAhead } from "./notesahead.mjs";
import { nextCaughtUp, nextWaiting, pressNext } from "./nextpress.mjs";
import { offerNoteOfClosedTab } from "./closednote.mjs";
import { keepNoteFor, noteDraftKey, notesAheadKey, notesFromClosedTabs } from "./notekept.mjs";
import { say } from "./said.mjs";
import { drawTranscript } from "./transcript.mjs";
import { app, keepSaying, toast } from "./shell.mjs";
import { isMe, myName, showToggles, speakerChanged, wireToggles } from "./turns.mjs";
import { meetingFacts, noteForTurn } from "./views.mjs";

/** The time gone, drawn over the arcs: dark on a light edge, so that it shows on a dark
 * theme's arcs (navy, indigo) as on a light one's. */
const progressLine = (d) => `<path d="${d}" class="progress-edge"/><path d="${d}" class="progress"/>`;

function keepNotesAhead(view) {
  const { notes } = view.notesAhead;
  if (notes.length) sessionStorage.setItem(notesAheadKey(view.id), JSON.stringify(notes));
  else sessionStorage.removeItem(notesAheadKey(view.id));
}

/** What the note field holds that the room's `transcript` does not: the notes on their way
 * it already has are not offered again (a meeting ended under them, a sign-out). */
export function unsentNote(view, transcript) {
  const input = app.querySelector("#note");
  if (!input) return "";
  return view.notesAhead?.unsentIn(input.value, transcript) ?? input.value;
}

/** Who the note field's first note sent and not in `transcript` was about (`unsentSpeaker`). */
export function unsentNoteSpeaker(view, transcript) {
  const input = app.querySelector("#note");
  return input ? view.notesAhead?.unsentSpeaker(input.value, transcript) ?? null : null;
}

/** A step that writes into the note field waits for an input method's composition to end
 * (`compositionGuard`). */
function afterComposing(view, step) {
  view.noteComposition.after(step);
}

/** The field becomes `rest`: a note ahead of the typing went. The keys typed after it keep
 * the caret (and the field's kept copy and what it said of its length follow, as if typed). */
function leaveInField(input, rest) {
  const { value, selectionStart, selectionEnd, selectionDirection } = input;
  if (rest === value) return;
  const cut = value.length - rest.length;
  input.value = rest;
  if (document.activeElement === input) {
    input.setSelectionRange(Math.max(0, selectionStart - cut), Math.max(0, selectionEnd - cut), selectionDirection);
  }
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

/** `note` reached the meeting: it goes from the field, unless the field was changed inside it
 * meanwhile (said so). Nothing once the field is gone: the meeting ended under it. */
function noteWent(view, input, note) {
  afterComposing(view, () => {
    if (!input.isConnected) return;
    const rest = view.notesAhead.arrived(input.value, note);
    keepNotesAhead(view);
    if (rest !== null) leaveInField(input, rest);
    else if (input.value.trim()) toast("Your note reached the meeting; the field keeps what you changed in it since.");
  });
}

/** The action that sends `note` (`{ text, id, speaker }`): the room takes an id once, and files
 * the note under the speaker shown as it was sent. */
const noteSubmitted = (note) => ({
  type: "meeting.noteSubmitted", text: note.text, id: note.id, ...(note.speaker ? { speaker: note.speaker } : {}),
});

/** Sends `note`; resolves with why it did not go (nothing once it reached the meeting). */
async function sendNote(view, input, note) {
  try {
    await view.connection.send(noteSubmitted(note));
    noteWent(view, input, note);
    return null;
  } catch (error) {
    // NB: the answer may be what was lost, not the note: the room's transcript tells, once
    // the page is back (`backInTheRoom`), before the person sends it again.
    if (error.code === "offline" && error.sent !== false) view.notesAhead.unsure(note);
    else view.notesAhead.refused(note);
    keepNotesAhead(view);
    // NB: one that never left waits in the field for the next Enter: said, so that the person
    // does not take it for sent.
    if (error.code === "offline" && error.sent === false) {
      return "Not connected: your note stays in its field. Press Enter again once the page says Live.";
    }
    return error.message;
  }
}

/**
 * Back after a drop that hid whether notes arrived: those the room's transcript has (a line
 * after those it had when the note was sent) are taken from the field, not sent twice; those
 * it surely lacks go again. Only after a resumed welcome, though: a `whole` state may be
 * another meeting's (one ended and another began meanwhile), which the page cannot tell.
 */
function notesArrived(view, input, transcript, whole) {
  afterComposing(view, () => {
    if (!input.isConnected) return;
    const looked = view.notesAhead.lookFor(input.value, transcript);
    const { field, found, arrived } = looked;
    const missing = whole ? [] : looked.missing;
    const unknown = looked.unknown + (whole ? looked.missing.length : 0);
    keepNotesAhead(view);
    drawTranscript(view);
    // NB: a line like it may be someone else's (one name, one text): the room takes the id
    // once, and a note it refuses now is kept in a toast.
    for (const note of whole ? [] : arrived.filter(({ id }) => id)) {
      view.connection.send(noteSubmitted(note)).catch((error) => {
        if (error.code !== "offline") keepSaying(`Your note “${note.text.trim()}” may not have reached the meeting: ${error.message}`);
      });
    }
    if (found) {
      leaveInField(input, field);
      // NB: the room's notes say that it got there, not when: before the drop, or after it (a
      // server that stood still reads it once it wakes, from the connection given up here).
      toast(found === 1 ? "Your note got into the meeting, though the connection dropped."
        : "Your notes got into the meeting, though the connection dropped.");
    }
    if (unknown) {
      toast("Your note may not have reached the meeting before the connection dropped: "
        + "it is still in the field, for Enter to send if the meeting lacks it.");
    }
    if (!missing.length) return;
    view.notesAhead.again(missing, transcript); // never arrived: they go again, as Enter sends
    sendNotes(view, input, missing);
  });
}

/** Sends `notes`, in order (kept in the tab until answered); says the first refusal. */
async function sendNotes(view, input, notes) {
  keepNotesAhead(view);
  const refusals = await Promise.all(notes.map((note) => sendNote(view, input, note)));
  // NB: a meeting that ended under the note offers it for the meeting saved.
  const refusal = refusals.find(Boolean);
  if (refusal && !view.connection.closed && input.isConnected) toast(refusal);
  if (input.isConnected) drawTranscript(view);
}

export const meeting = {
  template() {
    return `
      <div class="meeting">
        <div class="ring-wrap">
          <svg class="ring" viewBox="0 0 220 220" aria-hidden="true"></svg>
          <div class="ring-center">
            <p class="speaker"></p>
            <p class="turn"><span class="turn-left"></span> left for this speaker</p>
            <p class="times"><span class="elapsed"></span> on the clock · <span class="remaining"></span> left</p>
            <p class="up-next"></p>
          </div>
        </div>
        <p class="paused" hidden><span class="pause-reason"></span>
          <button type="button" class="primary resume">Resume meeting</button></p>
        <div class="actions">
          <button type="button" class="primary next">Next speaker</button>
          <button type="button" class="danger end">End meeting</button>
        </div>
        <p class="next-waiting hint" hidden></p>
        <div class="actions toggles">
          <button type="button" class="chime-toggle" aria-pressed="true"></button>
          <button type="button" class="notify-toggle" aria-pressed="false"></button>
          <span class="notify-why hint" hidden></span>
        </div>
        <form class="note-form">
          <p class="note-head"><label for="note">Add a note</label> <span class="note-for" id="note-for"></span></p>
          <input id="note" dir="auto" data-max-chars="1000" autocomplete="off" required aria-describedby="note-for">
          <button>Add</button>
        </form>
        <dialog class="end-alert" aria-labelledby="end-title" aria-describedby="end-asked">
          <h2 id="end-title" tabindex="-1" autofocus>End meeting?</h2>
          <p class="asked" id="end-asked" hidden></p>
          <p>Save the meeting to the history, or discard it. Its clock waits for the answer.</p>
          <p class="finish-note" id="finish-note">Someone asked to end the meeting. Your note is still being typed: Enter adds it to the meeting first.</p>
          <div class="actions">
            <button type="button" class="resume-alert">Resume</button>
            <button type="button" class="danger discard">Discard</button>
            <button type="button" class="primary save">Save and end</button>
          </div>
        </dialog>
        <pre class="transcript" role="log" aria-label="Notes so far"></pre>
      </div>`;
  },

  wire(view) {
    const on = (selector, event, handler) => app.querySelector(selector)?.addEventListener(event, handler);
    const send = (action) => view.send(action);
    on(".next", "click", (event) => pressNext(view, event));
    on(".end", "click", () => send({ type: "meeting.endMeetingButtonTapped" }));
    on(".save", "click", () => send({ type: "meeting.alert.saveAndEnd" }));
    on(".discard", "click", () => send({ type: "meeting.alert.discard" }));
    on(".resume-alert", "click", () => send({ type: "meeting.alert.resume" }));
    on(".end-alert", "cancel", (event) => {
      event.preventDefault();
      send({ type: "meeting.alert.resume" });
    });
    on(".resume", "click", () => send({ type: "meeting.resumeButtonTapped" }));
    wireToggles(on);
    showToggles();
    view.lastSpeaker = null;
    view.nextFrom = null;
    view.nextLost = null;
    view.speakerChangedAt = -Infinity;
    view.finishCameAt = -Infinity;
    // The note being typed outlives a reload, a dropped connection or its tab being closed
    // (`keepTabTyping`: the next tab to open the room has it); it goes
    // once sent, or when the meeting ends (the ended notice offers it then).
    const input = app.querySelector("#note");
    input.value = sessionStorage.getItem(noteDraftKey(view.id)) ?? "";
    const from = notesFromClosedTabs.get(view.id);
    if (notesFromClosedTabs.delete(view.id) && input.value.trim()) toast(`Your note ${from} is back in its field.`);
    // Notes sent and not answered yet stay in the field, ahead of what is typed on
    // (`NotesAhead`); after a reload, the transcript tells whether they arrived.
    let saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(notesAheadKey(view.id)) ?? "null");
    } catch {
      // not a record this page wrote
    }
    view.notesAhead = NotesAhead.restore(saved, input.value);
    view.noteOfClosedTab = null;
    offerNoteOfClosedTab(view);
    view.noteComposition = compositionGuard(input);
    on("#note", "input", () => {
      if (input.value) {
        sessionStorage.setItem(noteDraftKey(view.id), input.value);
        // NB: and which meeting it is for, should the page be away when it ends.
        keepNoteFor(view.id, view.meetingsBefore, view.state);
      } else {
        sessionStorage.removeItem(noteDraftKey(view.id));
      }
      if (!input.value.trim()) takeTheKeyboard();
    });
    on(".note-form", "submit", async (event) => {
      event.preventDefault();
      const author = view.state.participants.find(({ id }) => id === view.you)?.name ?? "";
      // NB: Enter again on a note on its way adds nothing new; one kept (refused, or lost
      // with the connection) goes again, on its own.
      const { meeting, standup } = view.state;
      const speaker = standup.attendees[meeting.speakerIndex]?.name ?? null;
      const names = standup.attendees.map(({ name }) => name);
      const notes = view.notesAhead.send(input.value, meeting.transcript, author, speaker, names);
      if (!notes.length) return;
      // What is typed next is another note: it starts after a space, not run into this one.
      if (!/\s$/.test(input.value)) {
        input.value += " ";
        input.dispatchEvent(new Event("input", { bubbles: true }));
      }
      await sendNotes(view, input, notes);
    });
  },

  /** Back in the room after a drop (`welcome`): a note whose answer the drop hid is looked
   * for once a request is answered, after the patches a resumed welcome is followed by. */
  backInTheRoom(view, { whole = false } = {}) {
    const input = app.querySelector("#note");
    if (!input || !view.notesAhead?.notes.some(({ state }) => state === "unsure")) return;
    view.connection.history(0, 1).then(
      () => view.state.meeting && notesArrived(view, input, view.state.meeting.transcript, whole),
      // NB: dropped again: the next welcome looks.
      () => {});
  },

  /** The room as of the welcome after a drop: says whether a press lost with it was taken. */
  caughtUp: nextCaughtUp,

  render(view, state) {
    // NB: only someone among the attendees is ever up: the others are offered no notice, and
    // told why (a name typed otherwise than the attendee's, "Ana M." for "Ana", is not one).
    const attending = state.standup.attendees.some(({ name }) => isMe(name));
    app.querySelector(".notify-toggle").hidden = !globalThis.Notification || !attending;
    const why = app.querySelector(".notify-why");
    why.hidden = !globalThis.Notification || attending;
    const because = `Turn notices are for attendees: “${isolated(myName())}” is not one.`;
    if (!why.hidden && why.textContent !== because) why.textContent = because;
    const facts = meetingFacts(state.meeting, state.standup, state.participants);
    const speakerLine = app.querySelector(".speaker");
    if (speakerLine.textContent !== facts.speakerLine) {
      speakerLine.textContent = facts.speakerLine;
      speakerLine.title = facts.speakerLine;
    }
    app.querySelector(".turn-left").textContent = facts.turnLeft;
    Object.assign(app.querySelector(".up-next"), { textContent: facts.upNext, title: facts.upNext });
    app.querySelector(".meeting").classList.toggle("warning", facts.warning);
    const speaker = state.standup.attendees[state.meeting.speakerIndex]?.name;
    // NB: the room files a note under the speaker shown as it is sent: said by the field.
    const noteFor = app.querySelector(".note-for");
    const forTurn = noteForTurn(speaker, isMe(speaker));
    if (noteFor.textContent !== forTurn) noteFor.textContent = forTurn;
    const first = view.lastSpeaker === null;
    const changed = !first && view.lastSpeaker !== state.meeting.speakerIndex;
    view.lastSpeaker = state.meeting.speakerIndex;
    const activity = state.activity;
    const ownSkip = activity?.kind === "skippedToSpeaker" && activity.by?.id === view.you
      && activity.seq !== view.lastSkipSeq;
    if (activity?.kind === "skippedToSpeaker") view.lastSkipSeq = activity.seq;
    // NB: who is up is said as the meeting shows (it started, or this page came to it) and as
    // it changes — someone else's Next once, by its notice ("Ben moved on to Dan"), when there
    // was one (not for a whole state after a reconnect) and it names who is up now.
    const saidByNotice = activity?.kind === "skippedToSpeaker" && view.noticeSaid === activity.seq
      && activity.detail === speaker;
    const { speakerIndex } = state.meeting;
    if ((first || changed) && !saidByNotice) {
      say(`${facts.speakerLine}${isMe(speaker) ? ", your turn" : ""}`);
    }
    // NB: the turn's last 15 s, shown in colour, are said to the one speaking, once a turn.
    if (facts.warning && isMe(speaker) && view.warnedFor !== speakerIndex) {
      say(`${facts.turnLeft} left in your turn.`);
    }
    view.warnedFor = facts.warning ? speakerIndex : null;
    // NB: a press this page is waiting on is answered by the meeting moving on, or by the
    // question to end it (a Finish), or is moot in another meeting.
    if (changed || state.meeting.alert === "endMeeting" || (view.nextLost && view.nextLost.meeting !== state.meeting.id)) {
      nextWaiting(view, null);
    }
    if (changed) {
      // NB: not when this person's own press changed it: pressing twice on purpose skips two.
      if (!ownSkip) view.speakerChangedAt = performance.now();
      else if (facts.nextLabel === "Finish") view.finishCameAt = performance.now();
      speakerChanged(speaker, state.standup.title);
    }
    app.querySelector(".elapsed").textContent = facts.elapsed;
    app.querySelector(".remaining").textContent = facts.remaining;
    app.querySelector(".ring").innerHTML =
      `<circle cx="110" cy="110" r="96" class="track"/>` +
      facts.slices.map((slice) =>
        `<path d="${arcPath(110, 96, slice.start + 0.004, slice.end - 0.004)}" class="slice ${slice.state}"/>`).join("") +
      (facts.done > 0 ? progressLine(arcPath(110, 96, 0, Math.min(facts.done, 0.9999))) : "");
    const paused = app.querySelector(".paused");
    // NB: Resume pressed (here or by anyone) goes with its line: the keyboard on it goes to
    // Next speaker, not to the page's top.
    if (facts.paused === null && !paused.hidden && paused.contains(document.activeElement)) {
      app.querySelector(".next").focus({ preventScroll: true });
    }
    paused.hidden = facts.paused === null;
    const reason = app.querySelector(".pause-reason");
    // NB: said as it comes (not with each change in the room, nor with its button's name).
    if (reason.textContent !== (facts.paused ?? "")) {
      reason.textContent = facts.paused ?? "";
      if (facts.paused) say(facts.paused);
    }
    app.querySelector(".next").textContent = facts.nextLabel;
    drawTranscript(view);
    const alert = app.querySelector(".end-alert");
    const open = state.meeting.alert === "endMeeting";
    if (open && !alert.open) showEndAlert(alert, state, view.you);
    if (!open && alert.open) {
      alert.close();
      alert.classList.remove("aside");
      forgetFinishNote();
    }
  },
};
