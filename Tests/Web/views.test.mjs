import { readFileSync } from "node:fs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { activitySentence, attendeeLabels, lostPressLine, NEXT_LINES, undoTakenSentence, whoAsked, historyItem, meetingFacts, meetingNote, noteForTurn, notesBySpeaker, transcriptShown, presenceItems, themeStyle, themeSwatches, undoGoneNotice, undoGoneSentence, whoIsHere } from "../../public/js/views.mjs";
import { DARK_TRACK, LIGHT_TRACK, RING_WAITING, THEME_NAMES, contrast, ringColor } from "../../public/js/format.mjs";

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

test("an empty meeting's notes say where this person's note is when the room does not have it", () => {
  assert.equal(transcriptShown("", false), "No notes yet.");
  // Refused, never sent (no connection), or its answer lost: still in its field.
  assert.equal(transcriptShown("", true), "No notes yet: yours is still in its field.");
  assert.equal(transcriptShown("Ben: shipped", true), "Ben: shipped");
});

test("the note field says whose turn a note typed now is for", () => {
  assert.equal(noteForTurn("Ben"), "for Ben's turn");
  assert.equal(noteForTurn("Ana", true), "for your turn");
  // A name written right to left is kept apart from the words around it.
  assert.equal(noteForTurn("سارة"), "for \u2068سارة\u2069's turn");
  // Nobody (an index past the list): nothing said.
  assert.equal(noteForTurn(undefined), "");
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

test("a name here on several connections shows once, with how many; a bot of that name apart", () => {
  const html = presenceItems([
    { id: "a1", name: "Ana", isBot: false },
    { id: "b", name: "Ben", isBot: false },
    { id: "a2", name: "Ana", isBot: false },
    { id: "c", name: "Ana", isBot: true },
  ], "a2");
  assert.equal((html.match(/<li/g) ?? []).length, 3);
  assert.match(html, /<li class="person me">Ana \(you\) <span class="count" aria-hidden="true">×2<\/span><span class="visually-hidden">, on 2 connections<\/span><\/li>/);
  assert.match(html, /<li class="person">Ben<\/li>/);
  assert.match(html, /<li class="person bot">Ana<span class="badge">bot<\/span><\/li>/);
});

test("a name without a session is one name however its accents were typed, as in the lobby", () => {
  const html = presenceItems([
    { id: "a", name: "Jos\u00e9", isBot: false },
    { id: "b", name: "Jose\u0301", isBot: false },
    { id: "c", name: "jose", isBot: false },
  ], "c");
  assert.equal((html.match(/<li/g) ?? []).length, 2);
  assert.match(html, /<li class="person">José <span class="count" aria-hidden="true">×2<\/span>/);
});

test("one sign-in's tabs are one person; two sign-ins of one name are two, and only yours is you", () => {
  const html = presenceItems([
    { id: "b1", name: "Ben", person: "k-ben", isBot: false },
    { id: "a1", name: "Ben", person: "k-ana", isBot: false },
    { id: "b2", name: "Ben", person: "k-ben", isBot: false },
  ], "b2");
  assert.equal((html.match(/<li/g) ?? []).length, 2);
  assert.match(html, /<li class="person me">Ben \(you\) <span class="count" aria-hidden="true">×2<\/span>/);
  assert.match(html, /<li class="person">Ben<\/li>/);
  // Seen from the other Ben's page: the two tabs are somebody else.
  const theirs = presenceItems([
    { id: "b1", name: "Ben", person: "k-ben", isBot: false },
    { id: "a1", name: "Ben", person: "k-ana", isBot: false },
    { id: "b2", name: "Ben", person: "k-ben", isBot: false },
  ], "a1");
  assert.match(theirs, /<li class="person">Ben <span class="count" aria-hidden="true">×2<\/span>/);
  assert.match(theirs, /<li class="person me">Ben \(you\)<\/li>/);
});

test("presence keeps one order whoever reconnects: you, the others by name, then the bots", () => {
  const order = (participants, you) => [...presenceItems(participants, you).matchAll(/<li[^>]*>([^<(]+)/g)]
    .map(([, name]) => name.trim());
  const cy = { id: "c", name: "cy", isBot: false };
  const ana = { id: "a", name: "Ana", isBot: false };
  const ci = { id: "b", name: "CI", isBot: true };
  const ben = { id: "n", name: "Ben", isBot: false };
  assert.deepEqual(order([cy, ci, ana, ben], "n"), ["Ben", "Ana", "cy", "CI"]);
  // Ana's page reloaded (she is last in the room's list now): nothing moves.
  assert.deepEqual(order([cy, ci, ben, { ...ana, id: "a2" }], "n"), ["Ben", "Ana", "cy", "CI"]);
  // Two people of one name keep theirs too, by who they are.
  const alex = { id: "x1", name: "Alex", person: "k1", isBot: false };
  const otherAlex = { id: "x2", name: "alex", person: "k2", isBot: false };
  const html = (participants) => presenceItems(participants, "n");
  assert.equal(html([otherAlex, alex, ben]), html([alex, ben, { ...otherAlex, id: "x3" }]));
});

test("themes set the colour pair; unknown themes fall back", () => {
  assert.match(themeStyle("navy"), /^--theme:#1c2c5b;--on-theme:#ffffff;--ring:#1c2c5b;--ring-dark:#[0-9a-f]{6}$/);
  assert.doesNotMatch(themeStyle("navy"), /--ring-dark:#1c2c5b/);
  assert.match(themeStyle("buttercup"), /--ring:#(?!f7e08a)[0-9a-f]{6};--ring-dark:#f7e08a$/);
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
  // A bot that stayed is no one to say "everyone" of: the clock stops for people.
  const bot = { id: "b", name: "CI", isBot: true };
  assert.equal(meetingFacts({ ...meeting, isPaused: true, pausedBecause: "everyoneLeft" }, standup,
    [bot, { id: "p", name: "Ana", isBot: false }]).paused,
  "Paused: every person had left (a bot does not keep a meeting going).");
  assert.equal(meetingFacts({ ...meeting, isPaused: true, pausedBecause: "everyoneLeft" }, standup,
    [{ id: "p", name: "Ana", isBot: false }]).paused, "Paused: everyone had left.");
  assert.equal(meetingFacts({ ...meeting, isPaused: true, pausedBecause: "serverRestarted" }, standup).paused,
    "Paused: the server restarted.");
  assert.equal(meetingFacts({ ...meeting, isPaused: true, pausedBecause: "moved" }, standup).paused,
    "Paused: the meeting moved to another server.");
});

test("a lobby card says who is in the room", () => {
  assert.equal(whoIsHere({ participants: 1, people: ["Ana"] }), "Ana here");
  assert.equal(whoIsHere({ participants: 2, people: ["Ana", "Ben"] }), "Ana, Ben here");
  assert.equal(whoIsHere({ participants: 5, people: ["A", "B", "C", "D", "E"] }), "A, B, C and 2 more here");
  assert.equal(whoIsHere({ participants: 0, people: [] }), "Nobody here");
});

test("names written right to left are kept apart from the words and numbers around them", () => {
  // Unisolated, "سارة, محمد علي 2 here" shows the two names swapped and the comma on the "2".
  assert.equal(whoIsHere({ participants: 3, people: ["سارة", "محمد علي 2", "Ana"] }),
    "\u2068سارة\u2069, \u2068محمد علي 2\u2069, Ana here");
  const rtl = { duration: 300, attendees: [{ name: "Blob" }, { name: "סמי" }, { name: "محمد 2" }] };
  const facts = meetingFacts({ speakerIndex: 1, secondsElapsed: 100, transcript: "" }, rtl);
  assert.equal(facts.speakerLine, "Speaker 2 of 3: \u2068סמי\u2069");
  assert.equal(facts.upNext, "Up next: \u2068محمد 2\u2069");
  const html = presenceItems([{ id: "a", name: "سارة", isBot: false }], "a");
  assert.match(html, /<li class="person me">\u2068سارة\u2069 \(you\)<\/li>/);
});

test("a lobby card's meeting is paused only when the server says so", () => {
  assert.equal(meetingNote({ participants: 2, meetingRunning: false, meetingPaused: false }), "");
  assert.equal(meetingNote({ participants: 2, meetingRunning: true, meetingPaused: false }), " · meeting on");
  assert.equal(meetingNote({ participants: 0, meetingRunning: true, meetingPaused: true }), " · meeting paused");
  // A bot started it over HTTP in an empty room: it runs until someone ends it.
  assert.equal(meetingNote({ participants: 0, meetingRunning: true, meetingPaused: false }), " · meeting on");
});

test("activities read as who did what, 'You' for your own", () => {
  const ben = { id: "p2", name: "Ben" };
  assert.equal(activitySentence({ seq: 1, kind: "endedMeeting", by: ben, detail: null }, "p1"), "Ben ended the meeting");
  assert.equal(activitySentence({ seq: 2, kind: "skippedToSpeaker", by: ben, detail: "Dan" }, "p1"), "Ben moved on to Dan");
  assert.equal(activitySentence({ seq: 2, kind: "skippedToSpeaker", by: ben, detail: "Ben" }, "p1"), "Ben moved on to their own turn");
  assert.equal(activitySentence({ seq: 2, kind: "skippedToSpeaker", by: ben, detail: "Ben" }, "p2"), "You moved on to your turn");
  assert.equal(activitySentence({ seq: 2, kind: "skippedToSpeaker", by: ben, detail: null }, "p2"), "You moved on to the next speaker");
  // Every kind the protocol has (docs/asyncapi.yaml, ActivityKind) has a sentence of its own.
  const yaml = readFileSync(new URL("../../docs/asyncapi.yaml", import.meta.url), "utf8");
  const kinds = /ActivityKind:[\s\S]*?enum: \[([^\]]*)\]/.exec(yaml)[1].split(",").map((kind) => kind.trim());
  assert.ok(kinds.length >= 16 && kinds.includes("addedLateNote"), kinds.join());
  for (const kind of kinds) {
    assert.doesNotMatch(activitySentence({ seq: 3, kind, by: ben, detail: null }, "p1"), /changed something/, kind);
  }
  assert.equal(activitySentence({ seq: 3, kind: "cancelledEditing", by: ben, detail: null }, "p2"), "You cancelled editing");
});

test("what this person did in another tab is theirs too, and another's of their name is not", () => {
  // Ana in two tabs (p1, p3: one sign-in); another Ana (p4) and Ben; bots have no person.
  const participants = [
    { id: "p1", name: "Ana", person: "k-ana" }, { id: "p2", name: "Ben", person: "k-ben" },
    { id: "p3", name: "Ana", person: "k-ana" }, { id: "p4", name: "Ana", person: "k-other" },
    { id: "p5", name: "CI (bot)", person: null }, { id: "p6", name: "CD (bot)", person: null },
  ];
  const by = (id) => ({ id, name: participants.find((person) => person.id === id).name });
  const said = (id, kind, detail = null, you = "p1") =>
    activitySentence({ seq: 1, kind, by: by(id), detail }, you, participants);
  assert.equal(said("p3", "skippedToSpeaker", "Dan"), "You, in another tab, moved on to Dan");
  assert.equal(said("p3", "skippedToSpeaker", "Ana"), "You, in another tab, moved on to your turn");
  assert.equal(said("p1", "endedMeeting"), "You ended the meeting");
  assert.equal(said("p4", "endedMeeting"), "Ana ended the meeting");
  assert.equal(said("p2", "deletedStandup"), "Ben deleted this standup");
  // Moved on to this person's turn: "you", as the one whose turn it is hears it.
  assert.equal(said("p2", "skippedToSpeaker", "ana"), "Ben moved on to you");
  assert.equal(said("p2", "skippedToSpeaker", "Ben"), "Ben moved on to their own turn");
  // Without a sign-in (a bot, an --open server) no two connections are known to be one.
  assert.equal(said("p6", "endedMeeting", null, "p5"), "CD (bot) ended the meeting");
  assert.equal(whoAsked({ seq: 1, kind: "askedToDelete", by: by("p3"), detail: null }, "askedToDelete", "p1", participants),
    "You, in another tab, asked to delete this standup.");
  assert.equal(undoTakenSentence({ seq: 1, kind: "discardedMeeting" }, null,
    { seq: 2, kind: "startedMeeting", by: by("p3"), detail: null }, "p1", participants),
  "You, in another tab, started the meeting: the discarded meeting can no longer be brought back.");
});

test("a past meeting shows its date, length, who was there and notes by speaker, escaped", () => {
  const html = historyItem({
    id: "m1", date: "2026-11-22T09:00:00Z", transcript: "", seconds: 725, present: ["Ana", "<b>"],
    notes: [
      { author: "Ana", text: "Shipped", speaker: "Dan" },
      { author: "Ben", text: "a < b", speaker: "Eve" },
      { author: "CI (bot)", text: "green", speaker: "Dan" },
    ],
  }, "en-GB");
  assert.match(html, /12 min 5 s · 2 people/);
  assert.match(html, /Present: <bdi>Ana<\/bdi>, <bdi>&lt;b&gt;<\/bdi>/);
  assert.match(html, /<h4><bdi>Dan<\/bdi><\/h4><ul class="notes"><li><strong><bdi>Ana<\/bdi><\/strong>: <bdi>Shipped<\/bdi><\/li><li><strong><bdi>CI \(bot\)<\/bdi><\/strong>: <bdi>green<\/bdi><\/li><\/ul><h4><bdi>Eve<\/bdi><\/h4>/);
  assert.match(html, /a &lt; b/);
});

test("a late note sent under no speaker, beside notes under one, has a heading of its own", () => {
  const html = historyItem({
    id: "m2", date: "2026-11-22T09:00:00Z", transcript: "", seconds: 60, present: ["Ana"],
    notes: [
      { author: "Ana", text: "Shipped", speaker: "Dan" },
      { author: "CI (bot)", text: "late, for the meeting", speaker: "" },
    ],
  }, "en-GB");
  assert.match(html, /<h4><bdi>Dan<\/bdi><\/h4><ul class="notes"><li><strong><bdi>Ana<\/bdi><\/strong>: <bdi>Shipped<\/bdi><\/li><\/ul><h4>Other notes<\/h4><ul class="notes"><li><strong><bdi>CI \(bot\)<\/bdi><\/strong>: <bdi>late, for the meeting/);
  // Notes all under no speaker (an old meeting's transcript) need none.
  assert.doesNotMatch(historyItem({ date: "2026-11-22T09:00:00Z", transcript: "Ana: one", seconds: 0 }), /<h4>/);
});

test("an old meeting (no notes recorded) shows its transcript, unattributed to speakers", () => {
  const groups = notesBySpeaker({ transcript: "Ana: one\nBen: two", notes: [] });
  assert.deepEqual(groups, [{ speaker: "", notes: [
    { author: "Ana", text: "one", speaker: "" }, { author: "Ben", text: "two", speaker: "" }] }]);
  assert.match(historyItem({ date: "2026-11-22T09:00:00Z", transcript: "", seconds: 0 }), /No notes\./);
});

test("the ring's arcs stand out from the track they lie on, and the page, at 3:1 on every theme", () => {
  // NB: the pages and tracks as app.css paints them (--ground, --line), light and dark.
  const modes = [
    { track: LIGHT_TRACK, page: "#f5f5f7", waiting: RING_WAITING.light },
    { track: DARK_TRACK, page: "#131316", waiting: RING_WAITING.dark },
  ];
  for (const { track, page, waiting } of modes) {
    for (const theme of THEME_NAMES) {
      const color = ringColor(theme, track);
      assert.ok(contrast(color, track) >= 3, `${theme} on ${track}: ${contrast(color, track).toFixed(2)}`);
      assert.ok(contrast(color, page) >= 3, `${theme} on ${page}: ${contrast(color, page).toFixed(2)}`);
    }
    assert.ok(contrast(waiting, track) >= 3 && contrast(waiting, page) >= 3);
  }
  // app.css paints what these were computed for: --line and --ring-waiting, light then dark.
  const css = readFileSync(new URL("../../public/app.css", import.meta.url), "utf8");
  const values = (name) => [...css.matchAll(new RegExp(`--${name}: (#[0-9a-f]{6});`, "g"))].map((m) => m[1]);
  assert.deepEqual(values("line"), [LIGHT_TRACK, DARK_TRACK]);
  assert.deepEqual(values("ring-waiting"), [RING_WAITING.light, RING_WAITING.dark]);
  assert.deepEqual(values("ground"), modes.map(({ page }) => page));
  // A dark theme keeps its own colour on the light track, a light one on the dark track.
  assert.equal(ringColor("navy"), "#1c2c5b");
  assert.equal(ringColor("buttercup", DARK_TRACK), "#f7e08a");
});

test("each attendee's row is told apart by its place: a screen reader does not hear the same label twice", () => {
  assert.deepEqual(attendeeLabels(0), { name: "Attendee 1 name", remove: "Remove attendee 1" });
  assert.deepEqual(attendeeLabels(2), { name: "Attendee 3 name", remove: "Remove attendee 3" });
});

test("a dialog says who asked its question, unless it was you or the room did more since", () => {
  const asked = { kind: "askedToEndMeeting", by: { id: "b", name: "Ben" }, seq: 3 };
  assert.equal(whoAsked(asked, "askedToEndMeeting", "a"), "Ben asked to end the meeting.");
  assert.equal(whoAsked(asked, "askedToEndMeeting", "b"), "");
  assert.equal(whoAsked(asked, "askedToDelete", "a"), "");
  assert.equal(whoAsked(null, "askedToDelete", "a"), "");
  assert.equal(whoAsked({ kind: "askedToDelete", by: { id: "b", name: "Ben" } }, "askedToDelete", "a"),
    "Ben asked to delete this standup.");
});

test("an undo a room opened afresh no longer offers says what went with it", () => {
  assert.equal(undoGoneSentence({ kind: "deletedStandup" }),
    "The room was reopened while you were away, before the deletion was carried out: the standup stays.");
  assert.equal(undoGoneSentence({ kind: "discardedMeeting" }),
    "The room was reopened while you were away: the discarded meeting can no longer be brought back.");
  assert.equal(undoGoneSentence({ kind: "cancelledEditing" }),
    "The room was reopened while you were away: the cancelled changes can no longer be brought back.");
});

test("an Undo is said to be gone only from a room opened afresh, within its window", () => {
  const discard = { seq: 4, kind: "discardedMeeting" };
  const shown = { seq: 4, at: 1000 };
  const afresh = { undo: null, activity: null, meeting: null };
  assert.equal(undoGoneNotice(discard, afresh, true, shown, 5000), undoGoneSentence(discard));
  // Past its window: it would have gone anyway.
  assert.equal(undoGoneNotice(discard, afresh, true, shown, 11_000), null);
  // …but a deletion not carried out is worth saying whenever the page is back.
  assert.equal(undoGoneNotice({ seq: 4, kind: "deletedStandup" }, afresh, true, shown, 60_000),
    undoGoneSentence({ kind: "deletedStandup" }));
  // A room that went on: someone undid it, or started another meeting, while the page was away.
  assert.equal(undoGoneNotice(discard, { ...afresh, activity: { seq: 5, kind: "restoredMeeting" } }, true, shown, 5000), null);
  // Patches (the room went on), an Undo still there, or one this page never showed.
  assert.equal(undoGoneNotice(discard, afresh, false, shown, 5000), null);
  assert.equal(undoGoneNotice(discard, { ...afresh, undo: { seq: 1 } }, true, shown, 5000), null);
  assert.equal(undoGoneNotice(discard, afresh, true, { seq: 3, at: 1000 }, 5000), null);
});

test("a name written right to left is kept apart from the sentence and the note around it", () => {
  const sara = { id: "p2", name: "سارة" };
  assert.equal(activitySentence({ seq: 1, kind: "endedMeeting", by: sara, detail: null }, "p1"),
    "\u2068سارة\u2069 ended the meeting");
  assert.equal(activitySentence({ seq: 1, kind: "skippedToSpeaker", by: { id: "p3", name: "Ana" }, detail: "سارة" }, "p1"),
    "Ana moved on to \u2068سارة\u2069");
  // Names in letters written left to right stay as they are (tests and screen readers read them).
  assert.equal(activitySentence({ seq: 1, kind: "endedMeeting", by: { id: "p3", name: "Ana" }, detail: null }, "p1"),
    "Ana ended the meeting");
  const html = historyItem({ date: "2026-11-22T09:00:00Z", transcript: "", seconds: 60, present: ["سارة"],
    notes: [{ author: "سارة", text: "12 tickets closed", speaker: "" }] }, "en-GB");
  assert.match(html, /<strong><bdi>سارة<\/bdi><\/strong>: <bdi>12 tickets closed<\/bdi>/);
});

test("a past meeting counts its people and its bots apart", () => {
  const summary = (present) => historyItem({ date: "2026-11-22T09:00:00Z", transcript: "", seconds: 60, present, notes: [] }, "en-GB");
  assert.match(summary(["Ana", "Ben", "CI (bot)"]), /· 2 people and a bot</);
  assert.match(summary(["Ana", "CI (bot)", "Deploy (bot)"]), /· 1 person and 2 bots</);
  assert.match(summary(["CI (bot)"]), /· a bot</);
  assert.match(summary(["Ana", "Ben"]), /· 2 people</);
  assert.doesNotMatch(summary([]), /people|person|bot/);
});

test("an Undo that a new meeting or form took the place of is said to go, with what it held", () => {
  const discarded = { seq: 4, kind: "discardedMeeting", by: { id: "a", name: "Ana" } };
  const started = { seq: 5, kind: "startedMeeting", by: { id: "b", name: "Ben" } };
  assert.equal(undoTakenSentence(discarded, null, started, "c"),
    "Ben started the meeting: the discarded meeting can no longer be brought back.");
  assert.equal(undoTakenSentence(discarded, null, started, "b"),
    "You started the meeting: the discarded meeting can no longer be brought back.");
  const cancelled = { seq: 7, kind: "cancelledEditing", by: { id: "a", name: "Ana" } };
  assert.equal(undoTakenSentence(cancelled, null, { ...started, seq: 8, kind: "startedEditing" }, "c"),
    "Ben started editing: the cancelled changes can no longer be brought back.");
  assert.equal(undoTakenSentence(discarded, null, { ...started, kind: "askedToDelete" }, "c"),
    "Ben asked to delete this standup: the discarded meeting can no longer be brought back.");
  // Not for the undo itself, nor for one still showing, nor for anything else done meanwhile.
  assert.equal(undoTakenSentence(discarded, null, { ...started, kind: "restoredMeeting" }, "c"), null);
  assert.equal(undoTakenSentence(discarded, discarded, started, "c"), null);
  assert.equal(undoTakenSentence(discarded, null, discarded, "c"), null);
  assert.equal(undoTakenSentence(null, null, started, "c"), null);
  assert.equal(undoTakenSentence({ ...discarded, kind: "deletedStandup" }, null, started, "c"), null);
});

test("a Next lost with the connection is said not taken only while its meeting runs on with the speaker it named up", () => {
  // Ana pressed Next on speaker 1 of meeting m1; the connection dropped before the room answered.
  const lost = { meeting: "m1", from: 1, label: "Next speaker" };
  const meeting = { id: "m1", speakerIndex: 1, alert: null };
  assert.equal(lostPressLine(meeting, lost), "The room has not taken your “Next speaker”: press it again if you still mean it.");
  // The room took it (or someone else's Next did): nothing more to say.
  assert.equal(lostPressLine({ ...meeting, speakerIndex: 2 }, lost), null);
  // A Finish the room took asks everyone whether to end: the speaker is the same, but it was taken.
  assert.equal(lostPressLine({ ...meeting, alert: "endMeeting" }, { ...lost, label: "Finish" }), null);
  // The meeting ended meanwhile, or another one runs, on the same speaker: not this press's.
  assert.equal(lostPressLine(undefined, lost), null);
  assert.equal(lostPressLine({ ...meeting, id: "m2" }, lost), null);
  // The lines name the button pressed, and never tell the person that their press went through.
  assert.equal(NEXT_LINES.waiting("Finish"), "“Finish”: waiting for the room to answer…");
  assert.match(NEXT_LINES.dropped("Next speaker"), /^Your “Next speaker” left .* may still take effect/);
});
