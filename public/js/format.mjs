// Small pure helpers for the views (no DOM).

/** The 16 themes: background and the text colour that reads on it (Scrumdinger's). */
export const THEMES = {
  bubblegum: ["#f4a1c4", "#1b1b1f"],
  buttercup: ["#f7e08a", "#1b1b1f"],
  indigo: ["#3d2c8d", "#ffffff"],
  lavender: ["#cdb4f0", "#1b1b1f"],
  magenta: ["#a2277a", "#ffffff"],
  navy: ["#1c2c5b", "#ffffff"],
  orange: ["#f5923e", "#1b1b1f"],
  oxblood: ["#6b1d1d", "#ffffff"],
  periwinkle: ["#9aa7f0", "#1b1b1f"],
  poppy: ["#f25c4f", "#1b1b1f"],
  purple: ["#7a3fb3", "#ffffff"],
  seafoam: ["#b2e6d4", "#1b1b1f"],
  sky: ["#8ccbf2", "#1b1b1f"],
  tan: ["#d6b88d", "#1b1b1f"],
  teal: ["#227a7a", "#ffffff"],
  yellow: ["#f7d031", "#1b1b1f"],
};

export const THEME_NAMES = Object.keys(THEMES);

/** WCAG relative luminance of `#rrggbb`. */
export function luminance(hex) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio between two `#rrggbb` colours (1 to 21). */
export function contrast(a, b) {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}

/** Mixes `#rrggbb` toward `toward` by `amount` (0 to 1). */
function mix(hex, toward, amount) {
  const channel = (color, i) => parseInt(color.slice(i, i + 2), 16);
  return "#" + [1, 3, 5].map((i) => Math.round(channel(hex, i) + (channel(toward, i) - channel(hex, i)) * amount)
    .toString(16).padStart(2, "0")).join("");
}

/** The track the meeting's ring's arcs lie on (app.css, `--line`), light and dark. */
export const LIGHT_TRACK = "#e3e3e8";
export const DARK_TRACK = "#3a3a43";

/**
 * The colour a theme's meeting ring is drawn in: the theme itself where it stands out from
 * the track it lies on at 3:1 (WCAG's rule for graphics; the page is further from it), else
 * the theme darkened (on the light track) or lightened (on the dark one) just enough.
 */
export function ringColor(theme, track = LIGHT_TRACK) {
  const [background] = THEMES[theme] ?? THEMES.bubblegum;
  const toward = luminance(track) > 0.2 ? "#1b1b1f" : "#ffffff";
  let color = background;
  for (let step = 1; contrast(color, track) < 3 && step <= 20; step += 1) {
    color = mix(background, toward, step * 0.05);
  }
  return color;
}

/** The ring's arcs still to come: a grey that stands out from the track at 3:1 too (app.css,
 * `--ring-waiting`). */
export const RING_WAITING = { light: "#74747e", dark: "#9a9aa4" };

/** `75` → `"1:15"`; negative numbers clamp to 0. */
export function clock(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
}

/** `"2026-11-22T09:00:00Z"` → a short local date and time. */
export function meetingDate(iso, locale = undefined) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(locale, { dateStyle: "medium", timeStyle: "short" });
}

/**
 * When the meeting `id` of `meetings` ended, as a sentence names it among the others: its
 * time ("at 3:48 PM"), with its day when that is not `now`'s ("on Nov 29, 2026, at 3:48 PM"),
 * and to the second when another ended in the same minute. Undefined for a meeting not listed.
 */
export function meetingEnded(meetings, id, now = new Date(), locale = undefined) {
  const meeting = meetings.find((candidate) => candidate.id === id);
  const date = meeting && new Date(meeting.date);
  if (!date || Number.isNaN(date.getTime())) return undefined;
  const minute = (when) => Math.floor(when.getTime() / 60000);
  const sameMinute = meetings.some((other) => other.id !== id && minute(new Date(other.date)) === minute(date));
  const time = date.toLocaleTimeString(locale, { hour: "numeric", minute: "2-digit", second: sameMinute ? "2-digit" : undefined });
  if (date.toDateString() === now.toDateString()) return `at ${time}`;
  return `on ${date.toLocaleDateString(locale, { dateStyle: "medium" })}, at ${time}`;
}

/**
 * The slices of a meeting's ring, one per speaker, as fractions of the whole:
 * equal slices, the last also gets the remainder (as the server counts).
 */
export function speakerSlices(durationSeconds, attendeeCount) {
  const count = Math.max(1, attendeeCount);
  const per = Math.floor(durationSeconds / count);
  return Array.from({ length: count }, (_, index) => {
    const start = index * per;
    const end = index === count - 1 ? durationSeconds : start + per;
    return { index, start: start / durationSeconds, end: end / durationSeconds };
  });
}

/** An SVG arc path on a circle of radius `r` centred at (`c`,`c`), from and to fractions. */
export function arcPath(c, r, from, to) {
  const angle = (fraction) => fraction * 2 * Math.PI - Math.PI / 2;
  const point = (fraction) => [c + r * Math.cos(angle(fraction)), c + r * Math.sin(angle(fraction))];
  const [x1, y1] = point(from);
  const [x2, y2] = point(Math.min(to, from + 0.99999));
  const large = to - from > 0.5 ? 1 : 0;
  return `M ${x1.toFixed(2)} ${y1.toFixed(2)} A ${r} ${r} 0 ${large} 1 ${x2.toFixed(2)} ${y2.toFixed(2)}`;
}

/** Escapes text for innerHTML. */
export function escapeHTML(text) {
  return String(text ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Letters of the scripts written right to left. */
const RIGHT_TO_LEFT = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Adlam}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Hanifi_Rohingya}]/u;

/**
 * A name as it goes into a sentence of plain text (a toast): one written right to left is
 * kept apart from the words around it (Unicode's first-strong isolate), so that "سارة ended
 * the meeting." keeps its full stop at its end and a number after the name stays after it.
 */
export function isolated(name) {
  return RIGHT_TO_LEFT.test(name) ? `\u2068${name}\u2069` : name;
}

/**
 * A meeting's transcript as HTML, a line each: its author and its note each kept apart
 * (`<bdi>`), so that "سارة: 12 tickets closed" does not read "12 :سارة tickets closed".
 */
export function transcriptLines(transcript) {
  return transcript.split("\n").map((line) => {
    const colon = line.indexOf(": ");
    return colon < 0 ? `<bdi>${escapeHTML(line)}</bdi>`
      : `<bdi>${escapeHTML(line.slice(0, colon))}</bdi>: <bdi>${escapeHTML(line.slice(colon + 2))}</bdi>`;
  });
}

/** `text` with each lone half of a surrogate pair (a broken character) as U+FFFD. */
export function wellFormed(text) {
  return text.replace(/[\uD800-\uDFFF]/gu, "\uFFFD");
}

/** The invisible marks the server refuses in text (`Standup.isPlainText`): direction
 * marks, overrides and isolates, zero-width spaces. The joiners emoji need stay. */
const INVISIBLE_MARKS = /[\u061C\u180E\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]/gu;
/** Control characters and line separators, which a one-line field cannot show. */
const CONTROLS = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/gu;

/**
 * `text` as the server takes it, as it is typed or pasted: well formed (`wellFormed`), a
 * control character (a tab pasted from a spreadsheet) a space, and without the invisible
 * marks that text pasted from a mail or a chat in Arabic or Hebrew brings along unseen.
 */
export function plainText(text) {
  return wellFormed(text).replace(CONTROLS, " ").replace(INVISIBLE_MARKS, "");
}

/**
 * JSON for the server: a lone half of a surrogate pair (a broken character, pasted, or an
 * emoji cut in two) becomes U+FFFD, as the server cannot take text that is not Unicode (it
 * refuses the whole message, and a field would wait on typing it never takes).
 */
export function wireJSON(value) {
  return JSON.stringify(value, (key, item) =>
    typeof item === "string" ? wellFormed(item) : item);
}

/** What `promise` (if any) settles with, or undefined after `ms`: an answer that stalls (a
 * proxy holding it, a half-dead network) is waited for no longer. */
export function within(promise, ms) {
  return promise && Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);
}

/** Backoff before reconnect attempt `n` (0-based): 0.5 s doubling to 10 s, with jitter. */
export function backoff(attempt, random = Math.random) {
  const base = Math.min(10000, 500 * 2 ** attempt);
  return Math.round(base * (0.75 + random() * 0.5));
}

/** What a name prompt says when the name is blank (or only spaces). */
export const BLANK_NAME = "Type your name: it is how your team sees you in the room.";
