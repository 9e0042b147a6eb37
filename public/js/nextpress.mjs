// Next speaker pressed: the presses it takes for a slip (the speaker just changed), and what
// it says while the room has not answered one (a slow or frozen link, an answer a drop lost).
import { isolated } from "./format.mjs";
import { app, toast } from "./shell.mjs";
import { isMe } from "./turns.mjs";
import { lostPressLine, NEXT_LINES } from "./views.mjs";

/** The line under Next speaker (`text`), or none; `dropped` is the speaker a press was lost
 * with the connection from, until the room is caught up. */
export function nextWaiting(view, text, dropped = null) {
  view.nextDropped = dropped;
  const line = app.querySelector(".next-waiting");
  if (!line) return;
  line.textContent = text ?? "";
  line.hidden = !text;
}

/** The room as of the welcome after a drop (`caughtUp`): whether a press lost with it was taken. */
export function nextCaughtUp(view) {
  if (view.nextDropped === null || view.nextDropped === undefined) return;
  nextWaiting(view, lostPressLine(view.state.meeting?.speakerIndex, view.nextDropped));
}

export function pressNext(view, event) {
  // NB: a double click is one press: its second click (`detail` 2) skips nobody more.
  if (event.detail > 1) return;
  // NB: within a second of the speaker changing (someone else pressed Next, the time ran
  // out), a press was most likely meant for the speaker before: it would skip the one who
  // just came up. It asks for another press instead.
  if (performance.now() - view.speakerChangedAt < 1000) {
    view.speakerChangedAt = -Infinity;
    const { speakerIndex } = view.state.meeting;
    const speaker = view.state.standup.attendees[speakerIndex]?.name ?? "The next speaker";
    toast(isMe(speaker) ? "You just came up: press Next again to skip your turn."
      : `${isolated(speaker)} just came up: press Next again to skip them.`, { kind: "next" });
    return;
  }
  // NB: nor one on Finish within a second of this person's own Next bringing the last
  // speaker up: a second Enter meant for Next would ask everyone to end the meeting.
  if (performance.now() - view.finishCameAt < 1000) {
    view.finishCameAt = -Infinity;
    toast("The last speaker just came up: press Finish again to end the meeting.", { kind: "next" });
    return;
  }
  // NB: nor a second press while this page's Next for this speaker is on its way: it
  // would only be refused ("the speaker already changed").
  const from = view.state.meeting.speakerIndex;
  if (view.nextFrom === from) return;
  view.nextFrom = from;
  // NB: a press the room has not answered within a second says so; one whose answer a drop
  // lost may still move the meeting on once the room is back, and says that.
  const slow = setTimeout(() => nextWaiting(view, NEXT_LINES.waiting), 1000);
  view.connection.send({ type: "meeting.nextButtonTapped", from }).then(
    () => nextWaiting(view, null),
    (error) => {
      if (error.code === "offline" && error.sent !== false) {
        nextWaiting(view, NEXT_LINES.dropped, from);
        return;
      }
      nextWaiting(view, null);
      // NB: a refusal, as `act` shows it (not once the page closed the connection itself).
      if (!view.connection.closed) toast(error.message);
    },
  ).finally(() => {
    clearTimeout(slow);
    if (view.nextFrom === from) view.nextFrom = null;
  });
}
