import { test } from "node:test";
import assert from "node:assert/strict";
import { meetingFacts, presenceItems, themeStyle, themeSwatches, whoIsHere } from "../js/views.mjs";

const standup = {
  duration: 300,
  attendees: [{ name: "Blob" }, { name: "Blob Jr" }, { name: "Blob Sr" }],
};

test("a meeting shows its speaker, clock and ring", () => {
  const facts = meetingFacts({ speakerIndex: 1, secondsElapsed: 75, transcript: "" }, standup);
  assert.equal(facts.speakerLine, "Speaker 2 of 3: Blob Jr");
  assert.equal(facts.elapsed, "1:15");
  assert.equal(facts.remaining, "3:45");
  assert.equal(facts.done, 0.25);
  assert.deepEqual(facts.slices.map((slice) => slice.state), ["spoken", "speaking", "waiting"]);
  assert.equal(facts.nextLabel, "Next speaker");
  assert.equal(facts.transcript, "No notes yet.");
});

test("the last speaker's button finishes, and an index past the list reads as nobody", () => {
  assert.equal(meetingFacts({ speakerIndex: 2, secondsElapsed: 0, transcript: "x" }, standup).nextLabel, "Finish");
  assert.equal(meetingFacts({ speakerIndex: 5, secondsElapsed: 0, transcript: "" }, standup).speakerLine, "Speaker 6 of 3: —");
});

test("presence marks you and bots, and escapes names", () => {
  const html = presenceItems([
    { id: "a", name: "Ana <3", isBot: false },
    { id: "b", name: "CI", isBot: true },
  ], "a");
  assert.match(html, /<li class="person me">Ana &lt;3 \(you\)<\/li>/);
  assert.match(html, /<li class="person bot">CI<span class="badge">bot<\/span><\/li>/);
});

test("themes set the colour pair; unknown themes fall back", () => {
  assert.equal(themeStyle("navy"), "--theme:#1c2c5b;--on-theme:#ffffff");
  assert.equal(themeStyle("nonsense"), themeStyle("bubblegum"));
  const swatches = themeSwatches("group", "teal");
  assert.equal((swatches.match(/type="radio"/g) ?? []).length, 16);
  assert.match(swatches, /value="teal" checked/);
});

test("the speaking timer counts down the speaker's turn and names who is next", () => {
  const meeting = { speakerIndex: 0, secondsElapsed: 30, secondsPerSpeaker: 100, transcript: "" };
  const turn = meetingFacts(meeting, standup);
  assert.equal(turn.turnLeft, "1:10");
  assert.equal(turn.upNext, "Up next: Blob Jr");
  assert.equal(turn.warning, false);
  assert.equal(meetingFacts({ ...meeting, secondsElapsed: 86 }, standup).warning, true);
  assert.equal(meetingFacts({ ...meeting, secondsElapsed: 100 }, standup).warning, false);
  // The last speaker's turn runs to the end of the meeting, and nobody is next.
  const last = meetingFacts({ ...meeting, speakerIndex: 2, secondsElapsed: 250 }, standup);
  assert.equal(last.turnLeft, "0:50");
  assert.equal(last.upNext, "Last speaker");
  assert.equal(last.nextSpeaker, null);
});

test("a paused meeting says why", () => {
  const meeting = { speakerIndex: 0, secondsElapsed: 5, secondsPerSpeaker: 100, transcript: "" };
  assert.equal(meetingFacts({ ...meeting, isPaused: false, pausedBecause: null }, standup).paused, null);
  assert.equal(meetingFacts({ ...meeting, isPaused: true, pausedBecause: "everyoneLeft" }, standup).paused,
    "Paused: everyone had left.");
  assert.equal(meetingFacts({ ...meeting, isPaused: true, pausedBecause: "serverRestarted" }, standup).paused,
    "Paused: the server restarted.");
});

test("a lobby card says who is in the room", () => {
  assert.equal(whoIsHere({ participants: 1, people: ["Ana"] }), "Ana here");
  assert.equal(whoIsHere({ participants: 2, people: ["Ana", "Ben"] }), "Ana, Ben here");
  assert.equal(whoIsHere({ participants: 5, people: ["A", "B", "C", "D", "E"] }), "A, B, C and 2 more here");
  assert.equal(whoIsHere({ participants: 0, people: [] }), "Nobody here");
});
