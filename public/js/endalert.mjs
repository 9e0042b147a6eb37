// The question to end the meeting, as it opens: modal, or — for someone typing a note —
// beside the meeting until the note is added or emptied.
import { afterLateNote } from "./latenote.mjs";
import { say } from "./said.mjs";
import { app } from "./shell.mjs";
import { activitySentence, whoAsked } from "./views.mjs";

/**
 * Someone asked to end the meeting. A person typing a note keeps the keyboard: the alert
 * shows beside the meeting without taking it (what they type goes on into the note), and
 * takes it once the note is added or emptied (`takeTheKeyboard`).
 */
export function showEndAlert(alert, state, you) {
  const asked = alert.querySelector(".asked");
  asked.textContent = whoAsked(state.activity, "askedToEndMeeting", you, state.participants);
  asked.hidden = !asked.textContent;
  // NB: the meeting's note, or a late note for the meeting before (shown above this one).
  const input = document.activeElement;
  if (!input?.matches("#note, #late-note") || !input.value.trim()) return alert.showModal();
  // NB: who asked, as the toast beside it says it.
  const who = state.activity?.kind === "askedToEndMeeting"
    ? activitySentence(state.activity, you, state.participants) : "Someone asked to end the meeting";
  const where = input.id === "note" ? "to the meeting" : "to the meeting it is for";
  alert.querySelector(".finish-note").textContent =
    `${who}. Your note is still being typed: Enter adds it ${where} first.`;
  // NB: said too: the field keeps the keyboard, and a description it gets is not read again.
  say(`${who}. Enter adds your note ${where} first.`);
  // The late note has no part in this meeting's form: once it is added, set aside or left,
  // the alert takes the keyboard.
  if (input.id === "late-note") afterLateNote(input, alert, takeTheKeyboard);
  const { selectionStart, selectionEnd, selectionDirection } = input;
  alert.classList.add("aside");
  describeWithFinishNote(input, true);
  alert.show();
  // NB: `show()` moves the focus to the alert (its autofocus heading) too.
  input.focus();
  input.setSelectionRange(selectionStart, selectionEnd, selectionDirection);
  alert.scrollIntoView({ block: "nearest" });
  // NB: and then the field being typed in, should both not fit (a phone's keyboard up).
  input.scrollIntoView({ block: "nearest" });
}

/** The end-meeting alert shown aside while a note was typed becomes the modal it is. */
export function takeTheKeyboard() {
  const alert = app.querySelector(".end-alert");
  if (!alert?.open || !alert.classList.contains("aside")) return;
  alert.close();
  alert.classList.remove("aside");
  forgetFinishNote();
  alert.showModal();
}

/** The field being typed in as the alert waits is described by the alert's line too, after
 * what describes it already (the meeting's note: whose turn it is for). */
function describeWithFinishNote(input, described) {
  const ids = (input.getAttribute("aria-describedby") ?? "").split(/\s+/)
    .filter((id) => id && id !== "finish-note");
  if (described) ids.push("finish-note");
  if (ids.length) input.setAttribute("aria-describedby", ids.join(" "));
  else input.removeAttribute("aria-describedby");
}

/** The alert waits no more for the note: its line no longer describes the field. */
export function forgetFinishNote() {
  const input = app.querySelector('[aria-describedby~="finish-note"]');
  if (input) describeWithFinishNote(input, false);
}

