// The room's Undo bar: who did what can still be undone, and its button, for everyone there.
import { say } from "./said.mjs";
import { app } from "./shell.mjs";
import { activitySentence } from "./views.mjs";

/** While a loss can be undone: who did it, and an Undo button for everyone in the room. */
export function renderUndo(state, you) {
  const bar = app.querySelector(".undo-bar");
  const undo = state.undo;
  // NB: the bar goes with the keyboard on its button (Undo pressed): the keyboard goes to
  // what came back — the draft's title, the meeting's note — or else the room's heading,
  // not to nowhere.
  if (!undo && !bar.hidden && bar.contains(document.activeElement)) {
    const back = (state.destination?.edit && app.querySelector(".edit-form .title"))
      || (state.meeting && app.querySelector("#note")) || app.querySelector(".room-title");
    back.focus({ preventScroll: true });
  }
  bar.hidden = !undo;
  if (!undo) return;
  const deleting = undo.kind === "deletedStandup";
  const text = `${activitySentence(undo, you, state.participants)}.`
    + (deleting ? " It goes in a few seconds unless someone undoes it." : "");
  const [shown, button] = [bar.querySelector(".undo-text"), bar.querySelector(".undo")];
  // NB: said as a new Undo shows (not with each change in the room, nor its button's name).
  if (button.dataset.seq !== String(undo.seq)) say(text);
  if (shown.textContent !== text) shown.textContent = text;
  button.dataset.seq = undo.seq;
}
