import { test } from "node:test";
import assert from "node:assert/strict";
import { clock, speakerSlices, escapeHTML, backoff, THEMES, THEME_NAMES, arcPath, isolated, transcriptLines, wellFormed, wireJSON, within, meetingEnded, plainText } from "../../public/js/format.mjs";

test("clock formats minutes and seconds", () => {
  assert.equal(clock(0), "0:00");
  assert.equal(clock(75), "1:15");
  assert.equal(clock(1800), "30:00");
  assert.equal(clock(-3), "0:00");
});

test("the last speaker's slice takes the remainder, as the server counts", () => {
  const slices = speakerSlices(300, 7);
  assert.equal(slices.length, 7);
  assert.equal(slices[0].end, 42 / 300);
  assert.equal(slices[6].start, 252 / 300);
  assert.equal(slices[6].end, 1);
});

test("all 16 themes", () => {
  assert.equal(THEME_NAMES.length, 16);
  assert.ok(THEME_NAMES.includes("oxblood") && THEME_NAMES.includes("periwinkle"));
});

test("text is escaped for HTML", () => {
  assert.equal(escapeHTML(`<b a="1">&'`), "&lt;b a=&quot;1&quot;&gt;&amp;&#39;");
});

test("backoff grows to 10 s", () => {
  assert.equal(backoff(0, () => 0.5), 500);
  assert.equal(backoff(3, () => 0.5), 4000);
  assert.equal(backoff(10, () => 0.5), 10000);
});

test("arcs are valid SVG paths", () => {
  assert.match(arcPath(50, 40, 0, 0.25), /^M [\d.]+ [\d.]+ A 40 40 0 0 1 [\d.]+ [\d.]+$/);
});

test("every theme's text reads on it at 4.5:1 or more (WCAG AA)", () => {
  const luminance = (hex) => {
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (light + 0.05) / (dark + 0.05);
  };
  for (const [name, [background, text]] of Object.entries(THEMES)) {
    assert.ok(ratio(background, text) >= 4.5, `${name}: ${ratio(background, text).toFixed(2)}:1`);
  }
});

test("a broken character goes to the server as U+FFFD; whole ones as they are", () => {
  const message = { type: "action", action: { path: "/title", value: "Daily \uD83D", base: "\uDE80 🎉 é" } };
  assert.equal(wireJSON(message), JSON.stringify({
    type: "action", action: { path: "/title", value: "Daily \uFFFD", base: "\uFFFD 🎉 é" },
  }));
  assert.equal(wireJSON({ text: "🎉".slice(0, 1) + "🎉".slice(1) }), '{"text":"🎉"}');
  assert.equal(wireJSON({ text: "\uDE80\uD83D" }), '{"text":"\uFFFD\uFFFD"}');
  assert.equal(wireJSON({ n: 5, list: ["\uD83D", null] }), '{"n":5,"list":["\uFFFD",null]}');
});

test("a field's broken character is mended in place, one code unit for one", () => {
  assert.equal(wellFormed("Stand\uD83Dup"), "Stand\uFFFDup");
  assert.equal(wellFormed("Stand\uD83Dup").length, "Stand\uD83Dup".length);
  assert.equal(wellFormed("🎉 ok"), "🎉 ok");
});

test("a transcript's lines keep each author and note apart, escaped", () => {
  assert.deepEqual(transcriptLines("سارة: 12 tickets closed\nAna: a < b: c\nNo notes yet."), [
    "<bdi>سارة</bdi>: <bdi>12 tickets closed</bdi>",
    "<bdi>Ana</bdi>: <bdi>a &lt; b: c</bdi>",
    "<bdi>No notes yet.</bdi>",
  ]);
  assert.equal(isolated("עדי"), "\u2068עדי\u2069");
  assert.equal(isolated("Ana 🌮"), "Ana 🌮");
});

test("an answer is waited for a while, then no longer; no question, no wait", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const answered = within(Promise.resolve({ ok: true }), 5000);
  assert.deepEqual(await answered, { ok: true });
  const stalled = within(new Promise(() => {}), 5000);
  let settled = false;
  stalled.then(() => (settled = true));
  t.mock.timers.tick(4999);
  await Promise.resolve();
  assert.equal(settled, false);
  t.mock.timers.tick(1);
  assert.equal(await stalled, undefined);
  assert.equal(within(null, 5000), null);
});

test("a meeting is named by when it ended: the time today, the day too before, seconds when two share a minute", () => {
  const local = (day, hour, minute, second) => new Date(2026, 10, day, hour, minute, second).toISOString();
  const now = new Date(2026, 10, 30, 18, 0, 0);
  const meetings = [
    { id: "a", date: local(30, 15, 48, 12) },
    { id: "b", date: local(30, 16, 5, 0) },
    { id: "c", date: local(30, 16, 5, 41) },
    { id: "d", date: local(29, 9, 30, 0) },
  ];
  assert.match(meetingEnded(meetings, "a", now, "en-US"), /^at 3:48\sPM$/u);
  assert.match(meetingEnded(meetings, "b", now, "en-US"), /^at 4:05:00\sPM$/u);
  assert.match(meetingEnded(meetings, "c", now, "en-US"), /^at 4:05:41\sPM$/u);
  assert.match(meetingEnded(meetings, "d", now, "en-US"), /^on Nov 29, 2026, at 9:30\sAM$/u);
  assert.equal(meetingEnded(meetings, "gone", now, "en-US"), undefined);
  assert.equal(meetingEnded([{ id: "x", date: "not a date" }], "x", now, "en-US"), undefined);
});

test("text is made plain as the server takes it: invisible marks go, a tab is a space, joiners stay", () => {
  assert.equal(plainText("צוות\u200f 2026"), "צוות 2026");
  assert.equal(plainText("\u202eevil\u202c\u2066x\u2069\u200b\ufeff"), "evilx");
  assert.equal(plainText("a\tb\u0000c\u2028d"), "a b c d");
  const family = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}";
  assert.equal(plainText(family + "\u200c"), family + "\u200c");
  assert.equal(plainText("half \uD83D"), "half \uFFFD");
});
