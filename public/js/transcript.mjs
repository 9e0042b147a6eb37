// The running meeting's notes so far, as its screen shows them (a log: what is added is read).
import { transcriptLines } from "./format.mjs";
import { app } from "./shell.mjs";
import { transcriptShown } from "./views.mjs";

/** The transcript: new notes added at its end (it is a log: a screen reader reads what is
 * added), the whole of it again only when it changed otherwise (a note taken back, or what
 * shows while there is none). */
function showTranscript(element, transcript, text) {
  const shown = element.standupsTranscript ?? null;
  if (element.standupsText === text) return;
  element.standupsText = text;
  element.standupsTranscript = transcript;
  if (shown && transcript.startsWith(`${shown}\n`)) {
    element.insertAdjacentHTML("beforeend", `\n${transcriptLines(transcript.slice(shown.length + 1)).join("\n")}`);
  } else {
    element.innerHTML = transcriptLines(text).join("\n");
  }
}

/** Draws the meeting's notes; with none yet, says so, and that this person's note is still in
 * its field when it is held back there (refused, never sent, or its answer lost), not on its
 * way. */
export function drawTranscript(view) {
  const element = app.querySelector(".transcript");
  if (!element || !view.state?.meeting) return;
  const held = Boolean(view.notesAhead?.notes.some(({ state }) => state !== "sent"));
  const { transcript } = view.state.meeting;
  showTranscript(element, transcript, transcriptShown(transcript, held));
}
