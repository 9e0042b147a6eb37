// A standup's room: the header everyone shares (title, presence) and one of three parts —
// the detail, the shared edit form, or the meeting — as the room's state says.
import { escapeHTML } from "./format.mjs";
import { renderUndo } from "./undobar.mjs";
import { typedHere } from "./typed.mjs";
import { takeLeftTyping, takeTyping, whatTheRoomLacks } from "./comeback.mjs";
import { detail, discardedNoteKey } from "./detail.mjs";
import { edit } from "./edit.mjs";
import { lateNote } from "./latenote.mjs";
import { meeting, unsentNote, unsentNoteSpeaker } from "./meeting.mjs";
import {
  forgetNote, keepNoteFor, keepNoteFromDiscarded, keptForRoom, noteDraftKey, noteFromAway, notesFromClosedTabs,
} from "./notekept.mjs";
import { sayUnsentTyping, takeEditAgainOnArrival } from "./sharedtext.mjs";
import {
  act, app, connect, dismissToastOfKind, dismissToasts, isShowing, keepSaying, reroute, showSignIn, toast, whoAmI,
} from "./shell.mjs";
import { activitySentence, presenceItems, themeStyle, undoGoneNotice, undoTakenSentence } from "./views.mjs";

const PARTS = { detail, edit, meeting };

/** Every saved meeting of the standup: the recent ones in the state and the older ones. */
const meetingCount = (state) => state.standup.meetings.length + (state.standup.olderMeetingCount ?? 0);

/**
 * How a meeting the page was showing ended (and who ended it), and the note being typed.
 * `countBefore`: the standup's meetings when the page began showing it.
 */
function meetingEnded(before, after, you, countBefore, note, noteSpeaker = null) {
  const saved = meetingCount(after) > countBefore;
  const timeUp = before.meeting.secondsElapsed >= before.standup.duration - 1;
  const activity = after.activity?.seq !== before.activity?.seq ? after.activity : null;
  const by = activity && ["endedMeeting", "discardedMeeting"].includes(activity.kind)
    ? activitySentence(activity, you, after.participants) : null;
  let message = saved ? "Meeting saved." : "Meeting discarded.";
  if (saved && timeUp) message = "Time's up — meeting saved.";
  else if (by) message = saved ? `${by} — saved.` : `${by}.`;
  const input = app.querySelector("#note");
  const unsent = note.trim();
  // A discard that can be undone is said by the undo bar: no second notice for nothing.
  if (!saved && after.undo?.kind === "discardedMeeting" && !unsent) return null;
  // NB: the notes on their way that the meeting got went from the front of the note (a blank
  // Enter left, from its end: `unsentIn`).
  const cut = input ? input.value.trimEnd().length - note.trimEnd().length : 0;
  const typing = input && document.activeElement === input
    ? [Math.max(0, input.selectionStart - cut), Math.max(0, input.selectionEnd - cut)] : null;
  if (!saved) return { message: unsent ? "Meeting discarded." : message, unsent: unsent ? note : "", typing };
  // Saved: the note being typed may still join it (`history.noteSubmitted`), as typed, under
  // the speaker it was sent about (an Enter that did not reach the room), else whose turn it
  // was; a person typing goes on typing where they were.
  // NB: the meeting on the wire has no id: the one saved is the newest in the history.
  const late = unsent ? {
    meeting: after.standup.meetings[0]?.id,
    speaker: noteSpeaker ?? before.standup.attendees[before.meeting.speakerIndex]?.name ?? null,
    text: note,
    typing,
  } : null;
  return { message, unsent: "", late };
}

/** Kinds the page says another way (the ended notice, the dialog asked), not as a toast. */
const SAID_ELSEWHERE = new Set(["endedMeeting", "discardedMeeting", "askedToEndMeeting", "askedToDelete"]);

export async function showRoom(id, screen) {
  app.innerHTML = `<section class="room"><p class="loading">Joining…</p></section>`;
  const name = await whoAmI();
  if (!isShowing(screen)) return;
  if (name === null) return showSignIn();
  const view = new RoomView(id);
  view.connection = connect(`/ws/rooms/${id}`, name, view);
}

/**
 * Says the room is not there to be in: deleted (4410), no such standup (`"missing"`: also a
 * link cut short), or the connection closed for `reason`, with a Reconnect button.
 */
export function showGone(code, reason = "", typed = []) {
  const deleted = code === 4410;
  const missing = code === "missing";
  // NB: the server's reason for a deletion is the heading already: say it once.
  const heading = deleted ? "This standup was deleted." : missing ? "There is no such standup." : "Disconnected";
  const detail = deleted ? "Its meeting history went with it."
    : missing ? "It may have been deleted, or the link is not whole: open it from the list of standups."
    : reason || "";
  // NB: what was typed here and never reached the room is shown, to be copied: it has nowhere
  // else to go.
  const lost = typed.length
    ? `<p class="typed-here">What you had typed here did not reach it: ${escapeHTML(typed.join(", "))}.</p>` : "";
  app.innerHTML = `<section class="room gone"><h1 tabindex="-1">${heading}</h1>
    <p>${escapeHTML(detail)}</p>${lost}
    <p>${deleted || missing ? "" : `<button type="button" class="reconnect primary">Reconnect</button> `}<a href="#/">Back to all standups</a></p></section>`;
  // Closed for a reason (too slow, too many messages): the person decides when to come back.
  app.querySelector(".reconnect")?.addEventListener("click", reroute);
  app.querySelector("h1").focus();
}

/** The part of the room a state shows. */
function modeOf(state) {
  return state.meeting ? "meeting" : state.destination?.edit ? "edit" : "detail";
}

class RoomView {
  constructor(id) {
    this.id = id;
    this.mode = null;
  }

  /** Sends an action; a refusal shows as a toast. */
  send(action) {
    return act(this.connection, action);
  }

  gone(code, reason) {
    // NB: a page that never drew the room (back to it after it went) shows what the tab keeps.
    showGone(code, reason, typedHere(this.typingToKeep() ?? keptForRoom(this.id)));
  }

  /** What was typed here that the room never got (its form's fields, a note), for the sign-in
   * page to keep when the session ends under it. */
  typingToKeep() {
    // NB: nothing drawn yet (no state since the page opened): nothing typed here, and what
    // an earlier visit kept in the tab is not to be replaced by nothing.
    if (!this.mode) return null;
    const unsent = this.mode === "edit" ? this.text?.unsent() ?? [] : [];
    // NB: a discarded meeting's note is in its box between meetings, and kept in the tab while
    // the room shows the edit form.
    const note = this.mode === "meeting" ? unsentNote(this, this.state.meeting.transcript).trim()
      : this.mode === "detail" ? detail.discardedNote() : (sessionStorage.getItem(discardedNoteKey(this.id)) ?? "").trim();
    return { room: this.id, unsent, note, late: lateNote.kept(this), by: this.myName() };
  }

  /** A page opened afresh (a reload) offers the late notes this tab kept, once, once it knows
   * who this person is in the room (a page shown from its kept state may not yet). */
  restoreLateNote() {
    if (this.lateNoteRestored || !this.myName()) return;
    this.lateNoteRestored = true;
    if (!this.lateNote) lateNote.restore(this);
  }

  /** The name this page is in the room under. */
  myName() {
    return this.state?.participants.find(({ id }) => id === this.you)?.name ?? null;
  }

  /**
   * Back after signing in again: the typing kept then (`comeback.mjs`) goes back into the
   * note, or is offered as when the form closes under typing (`sayUnsentTyping`). Only a page
   * in view takes it: of two tabs back in the room at once, the one the person looks at.
   */
  bringBackTyping() {
    if (document.hidden) {
      document.addEventListener("visibilitychange", () => this.bringBackTyping(), { once: true });
      return;
    }
    // NB: what the room lacks is read from the room as it is: after the patches a resumed
    // welcome is followed by (typing sent as the page left is among them).
    if (!this.caughtUp) {
      this.whenCaughtUp = () => this.bringBackTyping();
      return;
    }
    // NB: asked first, whatever follows: "Edit again with it" pressed elsewhere is for this
    // arrival only.
    const editNow = takeEditAgainOnArrival(this.id);
    if (this.connection.closed) return;
    const left = whatTheRoomLacks(takeLeftTyping(this.id), this.state);
    if (left.length) sayUnsentTyping(this, left, "Your typing had not reached the room when you left it", { editNow });
    const kept = takeTyping(this.id, this.myName());
    if (!kept) return;
    if (kept.unsent.length) {
      sayUnsentTyping(this, kept.unsent, "Your typing had not reached the room when you had to sign in again");
    }
    // NB: offered again for the meeting it was for (the server says if it is too late now).
    if (kept.late) lateNote.offer(this, { ...kept.late, typing: null });
    const input = this.mode === "meeting" ? app.querySelector("#note") : null;
    if (!kept.note || input?.value.trim() === kept.note) return;
    if (input && !input.value.trim()) {
      input.value = kept.note;
      sessionStorage.setItem(noteDraftKey(this.id), kept.note);
      toast("Your note from before you signed in again is back in its field.");
    } else {
      keepSaying(`Your note from before you signed in again is not in the meeting: “${kept.note}”.`);
    }
  }

  render(state, you, arrival = {}) {
    // What happened while this page was away, replayed after a resumed welcome, is drawn
    // once, at its end: a reload alone in the room would flash "Paused: everyone had left."
    // A change of screen is drawn (a meeting that ended says how), and the edit form's
    // typing takes every version of the room's text, so it sees each.
    if (arrival.replaying && this.mode !== "edit" && modeOf(state) === this.mode) {
      this.skipped = state;
      // NB: a welcome in the middle of a replay (dropped again): its note is still looked for.
      if (arrival.welcome && this.mode === "meeting") meeting.backInTheRoom(this);
      return;
    }
    // NB: a welcome that a replay follows is not caught up until its last patch.
    if (arrival.welcome || arrival.caughtUp) this.caughtUp = Boolean(arrival.caughtUp);
    // NB: compared with the last state seen, drawn or not (a meeting whose time ran out
    // while the page was away ends with "Time's up").
    const previous = this.skipped ?? this.state;
    this.skipped = null;
    // A whole state says nothing new (and a room opened afresh numbers from 1 again).
    if (arrival.whole) this.seenSeq = state.activity?.seq ?? 0;
    this.state = state;
    this.you = you;
    const mode = modeOf(state);
    if (mode !== this.mode) {
      // NB: read before the form goes: what this person typed that the room never got — not
      // typing whose answer a drop hid that the standup saved holds (it did get it).
      // NB: when someone else's Cancel closed it, what this person typed in it, whether or not
      // it reached the draft: it went with it (the Undo brings it back for a few seconds; this
      // toast, for good).
      const cancelled = this.mode === "edit" && state.activity?.kind === "cancelledEditing"
        && state.activity.by.id !== you
        && (arrival.whole || state.activity.seq > (previous?.activity?.seq ?? 0));
      const thrownAway = cancelled ? whatTheRoomLacks(this.text?.typedIn(state.standup) ?? [], state) : [];
      const unsent = this.mode === "edit"
        ? whatTheRoomLacks(this.text?.unsent() ?? [], state)
          .filter(({ path }) => !thrownAway.some((typing) => typing.path === path))
        : [];
      // NB: and before the detail goes: a note kept from a discarded meeting.
      const discarded = this.mode === "detail" ? detail.discardedNote() : "";
      if (this.mode === "meeting" && previous?.meeting) {
        // NB: notes on their way that the meeting got are not offered again: looked for in the
        // meeting as saved, when it was (a whole state after a drop, with no patches between,
        // says only that), else as last seen.
        const saved = meetingCount(state) > this.meetingsBefore ? state.standup.meetings[0] : null;
        const transcript = saved?.transcript ?? previous.meeting.transcript;
        this.ended = meetingEnded(previous, state, you, this.meetingsBefore, unsentNote(this, transcript),
          unsentNoteSpeaker(this, transcript));
        forgetNote(this.id);
        // The ended notice says how it ended: "Ana asked to end the meeting" is past.
        dismissToasts();
      }
      // NB: counted as the meeting starts: one saved (Save & End, its time up) is in the
      // history of the state that ends it.
      if (mode === "meeting") this.meetingsBefore = meetingCount(state);
      // The note kept from a discarded meeting goes back into the meeting brought back, or
      // into the next one (said so: it is in no meeting yet); else it is shown to keep.
      if (mode === "meeting") sessionStorage.removeItem(discardedNoteKey(this.id));
      if (mode === "meeting" && discarded && !sessionStorage.getItem(noteDraftKey(this.id))) {
        sessionStorage.setItem(noteDraftKey(this.id), discarded);
        if (state.activity?.kind !== "restoredMeeting") {
          keepSaying("Your note from the discarded meeting is in the note field: add it to this one, or clear it.");
        }
      } else if (discarded) {
        keepSaying(`Your note from the discarded meeting: “${discarded}”.`,
          { kind: "discarded-note", room: this.id, moot: () => detail.discardedNote() === discarded });
      }
      // NB: a meeting that ended saved came back (its save failed, and was undone): the note
      // offered for it goes back into its field.
      const cameBack = mode === "meeting" && previous && !previous.meeting
        && meetingCount(state) < meetingCount(previous);
      const unsaved = cameBack ? lateNote.unsaved(this, previous, state) : null;
      if (unsaved) {
        const draft = sessionStorage.getItem(noteDraftKey(this.id)) ?? "";
        sessionStorage.setItem(noteDraftKey(this.id), draft.trim() ? `${draft} ${unsaved.text}` : unsaved.text);
        keepNoteFor(this.id, this.meetingsBefore, state);
      }
      if (cameBack) {
        toast(`The meeting could not be saved, so it goes on${unsaved ? ": your note is back in its field" : ""}.`);
      }
      // NB: read before the meeting's field takes the note kept in the tab.
      const away = previous ? null : noteFromAway(this.id, state, meetingCount(state));
      // NB: said as a note from away, not as one "back in its field" (a closed tab's).
      if (away) notesFromClosedTabs.delete(this.id);
      const keptAway = away?.discarded ? keepNoteFromDiscarded(this.id, mode, away.lost, state, this.meetingsBefore) : null;
      // The draft is gone (saved, cancelled): typing still waiting for it would only be refused.
      this.text?.close();
      this.text = null;
      this.mode = mode;
      this.layout();
      // NB: typing the note as the meeting came back: the keyboard goes on in its field (and
      // the meeting's end alert, back with it, opens beside it, not over it).
      if (unsaved?.typing) {
        const note = app.querySelector("#note");
        note?.focus();
        note?.setSelectionRange(note.value.length, note.value.length);
      }
      if (this.ended?.late?.meeting) lateNote.offer(this, this.ended.late);
      // NB: after the late notes this tab kept, which it does not take the place of.
      if (away?.late) {
        this.restoreLateNote();
        lateNote.offer(this, away.late);
      }
      if (keptAway === "field") {
        keepSaying("Your note from the discarded meeting is in the note field: add it to this one, or clear it.");
      } else if (away?.lost && !keptAway) {
        keepSaying(`The meeting your note was for was ${away.discarded ? "discarded" : "ended"} while you were away: “${away.lost}”.`,
          { kind: "discarded-note" });
      }
      if (unsent.length) sayUnsentTyping(this, unsent);
      if (thrownAway.length) {
        sayUnsentTyping(this, thrownAway, `${activitySentence(state.activity, you, state.participants)}, with your typing in it`);
      }
      if (!previous) this.bringBackTyping();
    }
    this.restoreLateNote();
    document.title = `${state.standup.title} · Standups`;
    const section = app.querySelector(".room");
    section.setAttribute("style", themeStyle(state.standup.theme));
    section.querySelector(".room-title bdi").textContent = state.standup.title;
    section.querySelector(".presence").innerHTML = presenceItems(state.participants, you);
    this.announce(previous, state, you);
    renderUndo(state, you);
    this.sayIfUndoWent(previous, state, arrival);
    PARTS[mode].render(this, state);
    if (arrival.welcome && mode === "edit") this.text?.backInTheRoom(!arrival.whole);
    if (arrival.welcome && mode === "meeting") meeting.backInTheRoom(this, { whole: Boolean(arrival.whole) });
    // NB: typing brought back once the room is caught up (a late note kept through a sign-in
    // with it is looked for just below).
    if (this.caughtUp && this.whenCaughtUp) {
      const then = this.whenCaughtUp;
      this.whenCaughtUp = null;
      then();
    }
    // NB: once caught up: a late note that arrived before the drop is among the patches a
    // resumed welcome is followed by.
    if (arrival.caughtUp) lateNote.backInTheRoom(this);
    if (arrival.caughtUp && mode === "meeting") meeting.caughtUp(this);
    if (arrival.caughtUp && mode === "edit") this.text?.caughtUp();
  }

  /** An Undo bar a room opened afresh took down is said to be gone (`undoGoneNotice`). */
  sayIfUndoWent(previous, state, arrival) {
    const undo = state.undo;
    if (undo && undo.seq !== this.undoShown?.seq) this.undoShown = { seq: undo.seq, at: Date.now() };
    const notice = undoGoneNotice(previous?.undo, state, arrival.whole, this.undoShown, Date.now());
    if (notice) toast(notice, { kind: "undo-gone" });
  }

  /** Says what someone else just did ("Ben moved on to Dan"); each activity once. */
  announce(previous, state, you) {
    const activity = state.activity;
    // NB: the highest number seen since the last whole state, not the previous one.
    const seen = this.seenSeq ?? 0;
    this.seenSeq = Math.max(seen, activity?.seq ?? 0);
    if (!previous || !activity || activity.seq <= seen) return;
    // NB: one toast a person: what they did last overtakes what they did before it ("Ben
    // asked to delete" goes once Ben deleted it).
    const kind = `activity:${activity.by.id}`;
    // NB: an Undo bar that went because of it is said to go, to its doer too (notes were in it).
    const taken = undoTakenSentence(previous.undo, state.undo, activity, you, state.participants);
    if (taken) return toast(taken, { kind });
    if (activity.by.id === you || SAID_ELSEWHERE.has(activity.kind)) return;
    if (state.undo?.seq === activity.seq) return dismissToastOfKind(kind); // the undo bar says it
    toast(`${activitySentence(activity, you, state.participants)}.`, { kind });
    this.noticeSaid = activity.seq; // the meeting's line need not say it again (a new speaker)
  }

  /** The room's frame (its header, the undo bar, a late note) once; then the part its state
   * shows, each time that changes. */
  layout() {
    // NB: the keyboard stays where it is in the frame (a late note being typed) as the part
    // changes; what had it in the part is gone.
    const keepsFocus = this.frame?.isConnected && this.frame.contains(document.activeElement);
    if (!this.frame?.isConnected) this.layoutFrame();
    app.querySelector(".room-body").innerHTML = PARTS[this.mode].template();
    PARTS[this.mode].wire(this);
    // A new screen: focus its heading, so that keyboards and screen readers start there
    // (also when what had the keyboard went with the part: a button pressed to get here).
    if (!keepsFocus || !this.frame.contains(document.activeElement)) {
      app.querySelector(".room-title").focus({ preventScroll: true });
    }
  }

  layoutFrame() {
    app.innerHTML = `<section class="room">
      <header class="room-head">
        <a href="#/" class="back">← Standups</a>
        <h1 class="room-title" tabindex="-1"><bdi></bdi></h1>
        <button type="button" class="copy-link">Copy link</button>
        <ul class="presence" aria-label="In this room"></ul>
      </header>
      <div class="undo-bar" hidden><span class="undo-text"></span>
        <button type="button" class="undo">Undo</button></div>
      ${lateNote.template()}
      <div class="room-body"></div>
    </section>`;
    this.frame = app.querySelector(".room");
    lateNote.wire(this);
    app.querySelector(".undo").addEventListener("click", (event) => {
      this.send({ type: "undoButtonTapped", seq: Number(event.currentTarget.dataset.seq) });
    });
    app.querySelector(".copy-link").addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(location.href);
        toast("Link copied: anyone on your team can open it.");
      } catch {
        toast(`Copy this link: ${location.href}`);
      }
    });
  }
}
