// What the screens show, computed from the state: pure functions, no DOM (tested by node).
import { THEMES, THEME_NAMES, clock, escapeHTML, speakerSlices } from "./format.mjs";

export function themeStyle(theme) {
  const [background, foreground] = THEMES[theme] ?? THEMES.bubblegum;
  return `--theme:${background};--on-theme:${foreground}`;
}

export function themeSwatches(group, selected) {
  return THEME_NAMES.map((theme) => `
    <label class="swatch" style="${themeStyle(theme)}" title="${theme}">
      <input type="radio" name="${group}" value="${theme}" ${theme === selected ? "checked" : ""}>
      <span class="visually-hidden">${theme}</span>
    </label>`).join("");
}

/** Who is in a room, for its lobby card: "Ana, Ben and 3 more here", or a count. */
export function whoIsHere(live) {
  const people = live.people ?? [];
  if (people.length === 0) return live.participants > 0 ? `${live.participants} here` : "Nobody here";
  const shown = people.slice(0, 3).join(", ");
  const more = people.length - 3;
  return more > 0 ? `${shown} and ${more} more here` : `${shown} here`;
}

/** The people in a room as list items: you, bots marked, names escaped. */
export function presenceItems(participants, you) {
  return participants.map((person) => {
    const classes = ["person", person.isBot ? "bot" : "", person.id === you ? "me" : ""].filter(Boolean);
    return `<li class="${classes.join(" ")}">${escapeHTML(person.name)}${person.id === you ? " (you)" : ""}`
      + `${person.isBot ? `<span class="badge">bot</span>` : ""}</li>`;
  }).join("");
}

/** A running meeting as the meeting screen shows it. */
export function meetingFacts(meeting, standup) {
  const duration = standup.duration;
  const count = standup.attendees.length;
  const speaker = standup.attendees[meeting.speakerIndex]?.name ?? "—";
  return {
    speakerLine: `Speaker ${meeting.speakerIndex + 1} of ${count}: ${speaker}`,
    elapsed: clock(meeting.secondsElapsed),
    remaining: clock(duration - meeting.secondsElapsed),
    done: meeting.secondsElapsed / duration,
    slices: speakerSlices(duration, count).map((slice) => ({
      ...slice,
      state: slice.index < meeting.speakerIndex ? "spoken"
        : slice.index === meeting.speakerIndex ? "speaking" : "waiting",
    })),
    nextLabel: meeting.speakerIndex >= count - 1 ? "Finish" : "Next speaker",
    paused: meeting.isPaused ? pauseText(meeting.pausedBecause) : null,
    transcript: meeting.transcript || "No notes yet.",
    ...speakerTurn(meeting, standup),
  };
}

/** Why a meeting is paused, as the page says it. */
export function pauseText(reason) {
  switch (reason) {
    case "serverRestarted": return "Paused: the server restarted.";
    case "everyoneLeft": return "Paused: everyone had left.";
    default: return "Paused.";
  }
}

/** The seconds at which a speaker's turn ends: equal slices, the last takes the remainder. */
function turnEnd(index, standup, perSpeaker) {
  return index >= standup.attendees.length - 1 ? standup.duration : (index + 1) * perSpeaker;
}

/** The current speaker's turn: time left, who is next, and whether to warn (last 15 s). */
export function speakerTurn(meeting, standup) {
  const perSpeaker = meeting.secondsPerSpeaker ?? Math.floor(standup.duration / Math.max(1, standup.attendees.length));
  const left = Math.max(0, turnEnd(meeting.speakerIndex, standup, perSpeaker) - meeting.secondsElapsed);
  const next = standup.attendees[meeting.speakerIndex + 1]?.name ?? null;
  return {
    turnLeft: clock(left),
    turnSecondsLeft: left,
    warning: left > 0 && left <= 15,
    upNext: next ? `Up next: ${next}` : "Last speaker",
    nextSpeaker: next,
  };
}
