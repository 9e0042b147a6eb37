// Next speaker pressed: the presses it takes for a slip (the speaker just changed), and what
// it says while the room has not answered one (a slow or frozen link, an answer a drop lost).
import { isolated } from "./format.mjs";
import { say } from "./said.mjs";
import { app, toast } from "./shell.mjs";
import { isMe } from "./turns.mjs";
import { lostPressLine, NEXT_LINES } from "./views.mjs";

/** The line under the Next button (`text`), or none; `lost` is a press whose answer was lost
 * with the connection (its meeting, speaker and label), until the room is caught up. Said
 * too, where a screen reader hears it (`say`: in the question to end, when it is open). */
export function nextWaiting(view, text, lost = null) {
  view.nextLost = lost;
  const line = app.querySelector(".next-waiting");
  if (!line || line.textContent === (text ?? "")) return;
  line.textContent = text ?? "";
  line.hidden = !text;
  if (text) say(text);
}

/** The room as of the welcome after a drop (`caughtUp`): whether a press lost with it was taken. */
export function nextCaughtUp(view) {
  if (!view.nextLost) return;
  const line = lostPressLine(view.state.meeting, view.nextLost);
  nextWaiting(view, line, line ? view.nextLost : null);
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
  // lost may still move the meeting on once the room is back, and says that. Not once the page
  // closed this connection itself (it left the room): the line on screen is another room's.
  const label = app.querySelector(".next")?.textContent || "Next speaker";
  const here = () => !view.connection.closed;
  const slow = setTimeout(() => here() && nextWaiting(view, NEXT_LINES.waiting(label)), 1000);
  view.connection.send({ type: "meeting.nextButtonTapped", from }).then(
    () => here() && nextWaiting(view, null),
    (error) => {
      if (!here()) return;
      const lost = { meeting: view.state.meeting?.id, from, label };
      if (error.code === "offline" && error.sent !== false) {
        // NB: one the server could not tell the fate of says the server's own words; either
        // way the room, once caught up, tells whether it was taken.
        if (error.said === "outcome_unknown") toast(error.message);
        nextWaiting(view, error.said === "outcome_unknown" ? null : NEXT_LINES.dropped(label), lost);
        return;
      }
      // NB: a press that never left (no connection yet) leaves the line of one lost before it.
      if (error.sent !== false || !view.nextLost) nextWaiting(view, null);
      toast(error.message);
    },
  ).finally(() => {
    clearTimeout(slow);
    if (view.nextFrom === from) view.nextFrom = null;
  });
}
