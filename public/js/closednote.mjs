// A note a tab closed beside another tab of its meeting kept: said in the tab in view at once
// (`waitingNoteOfClosedTab`), not left for the next page to open the room.
import { NotesAhead } from "./notesahead.mjs";
import { app, currentRoomView, dismissToast, keepSaying, offerInToast, toast } from "./shell.mjs";
import { KEPT_FROM, waitingNoteOfClosedTab } from "./tabtyping.mjs";

/**
 * A note for this meeting kept by a tab closed while this one held a note of its own (it
 * waits in the browser, `takeClosedTabs`): into the field if it is empty now, else offered to
 * add to it — said at once, not left for the next page to open the room.
 */
export function offerNoteOfClosedTab(view) {
  const meetingID = view.state.meeting?.id;
  // NB: in the tab in view (of two in the room, the one the person looks at): a hidden one
  // asks again as it is shown.
  const waiting = app.querySelector("#note") && !document.hidden && waitingNoteOfClosedTab(view.id, meetingID);
  // NB: less the notes sent ahead in it that the meeting has (their answer was lost).
  const text = waiting && NotesAhead.restore(waiting.ahead, waiting.text).unsentIn(waiting.text, view.state.meeting.transcript).trim();
  if (!waiting || view.noteOfClosedTab === text) return;
  // NB: taken first (another tab may have taken it meanwhile: it is in one tab only), into
  // the field of the meeting it is for, as it is when asked.
  const add = () => {
    const input = currentRoomView(view.id) === view && view.state.meeting?.id === meetingID && app.querySelector("#note");
    if (!input || !waiting.take()) return null;
    if (text) {
      input.value = input.value.trim() ? `${input.value.trimEnd()} ${text}` : text;
      input.dispatchEvent(new Event("input", { bubbles: true }));
    }
    return input;
  };
  if (!text) {
    waiting.take();
    return;
  }
  if (!app.querySelector("#note").value.trim()) {
    if (add()) toast(`Your note ${KEPT_FROM.closed} is back in its field.`);
    return;
  }
  view.noteOfClosedTab = text;
  const item = keepSaying(`A tab you closed held a note for this meeting too: “${text}”.`,
    { room: view.id, moot: (state) => state.meeting?.id !== meetingID });
  const button = Object.assign(document.createElement("button"), { type: "button", textContent: "Add it to your note" });
  button.onclick = () => {
    const input = add();
    dismissToast(item, item.textContent);
    if (input) input.focus();
    else toast("That note went on in another tab of this browser.");
  };
  offerInToast(item, button);
}
