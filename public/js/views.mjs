// What the screens show, computed from the state: pure functions, no DOM (tested by node).
import {
  DARK_TRACK, THEMES, THEME_NAMES, clock, escapeHTML, isolated, meetingDate, ringColor, speakerSlices,
} from "./format.mjs";

export function themeStyle(theme) {
  const [background, foreground] = THEMES[theme] ?? THEMES.bubblegum;
  return `--theme:${background};--on-theme:${foreground};--ring:${ringColor(theme)};`
    + `--ring-dark:${ringColor(theme, DARK_TRACK)}`;
}

/** Who asked the question a dialog puts to everyone in the room ("Ana asked to end the
 * meeting."): said in the dialog itself, not in a notice under its backdrop. Nothing when it
 * was this person, or when what the room did last is something else. */
export function whoAsked(activity, kind, you, participants = []) {
  return activity?.kind === kind && activity.by.id !== you
    ? `${activitySentence(activity, you, participants)}.` : "";
}

/** How long the server keeps an Undo (`Room.undoWindow`). */
const UNDO_WINDOW_MS = 10_000;

/**
 * What to say when a state comes without the Undo (`gone`) the last one had, or null. Only a
 * room opened afresh keeps no undo (a `whole` state with no `activity` yet); one that went on
 * (someone undid it, or did something since) is said otherwise. Said when the Undo's window
 * (first `shown` at `shown.at`) was still running; a deletion not carried out whenever the
 * page is back, as the standup is there still.
 */
export function undoGoneNotice(gone, state, whole, shown, now) {
  if (!whole || !gone || state.undo || state.activity || shown?.seq !== gone.seq) return null;
  if (gone.kind !== "deletedStandup" && now - shown.at >= UNDO_WINDOW_MS) return null;
  return undoGoneSentence(gone);
}

/** What went with an undo that a room opened afresh (its server restarted, another node took
 * it over, or everyone had left) no longer offers, though its window was still running. */
export function undoGoneSentence(undo) {
  const reopened = "The room was reopened while you were away";
  switch (undo.kind) {
    case "deletedStandup": return `${reopened}, before the deletion was carried out: the standup stays.`;
    case "discardedMeeting": return `${reopened}: the discarded meeting can no longer be brought back.`;
    case "cancelledEditing": return `${reopened}: the cancelled changes can no longer be brought back.`;
    default: return `${reopened}: what was just done can no longer be undone.`;
  }
}

/** What someone did that took the place of a loss others could still undo (a meeting started
 * over a discarded one, a form or the delete question opened over cancelled changes),
 * said with what can no longer be brought back; null for anything else. */
export function undoTakenSentence(gone, undo, activity, you, participants = []) {
  if (!gone || undo || !activity || activity.seq <= gone.seq) return null;
  const lost = {
    discardedMeeting: "the discarded meeting can no longer be brought back",
    cancelledEditing: "the cancelled changes can no longer be brought back",
  }[gone.kind];
  // NB: what opens the room's one place for a meeting, a form or a question (the delete
  // question too: kept or not, the Undo went as it opened).
  const tookItsPlace = ["startedMeeting", "startedEditing", "askedToDelete"].includes(activity.kind);
  return lost && tookItsPlace ? `${activitySentence(activity, you, participants)}: ${lost}.` : null;
}

/** What someone did, as the page says it: "Ben ended the meeting", "You ended the meeting";
 * "You, in another tab, ended the meeting" when it was this person's sign-in on another of
 * the room's connections (`participants`: the room's, whose `person` says whose). */
export function activitySentence(activity, you, participants = []) {
  const isYou = activity.by.id === you;
  const yourName = participants.find(({ id }) => id === you)?.name;
  const yours = participants.find(({ id }) => id === you)?.person;
  const yoursElsewhere = !isYou && yours != null
    && participants.some(({ id, person }) => id === activity.by.id && person === yours);
  const who = isYou || yoursElsewhere ? "You" : isolated(activity.by.name);
  // NB: moving on to one's own turn is not "Ben moved on to Ben".
  const movedTo = activity.detail === activity.by.name
    ? (isYou || yoursElsewhere ? "your turn" : "their own turn")
    : activity.detail && activity.detail.trim().toLowerCase() === yourName?.trim().toLowerCase() ? "you"
      : activity.detail ? isolated(activity.detail) : "the next speaker";
  const sentences = {
    startedMeeting: "started the meeting",
    // NB: the wire's name for any Next, which moves the meeting on to the next speaker; the
    // room does not say whether the speaker before had had their say (a skip), so the page
    // says only what it knows.
    skippedToSpeaker: `moved on to ${movedTo}`,
    askedToEndMeeting: "asked to end the meeting",
    resumedMeeting: "resumed the meeting",
    endedMeeting: "ended the meeting",
    discardedMeeting: "discarded the meeting",
    startedEditing: "started editing",
    savedChanges: "saved the changes",
    cancelledEditing: "cancelled editing",
    askedToDelete: "asked to delete this standup",
    keptStandup: "kept the standup",
    deletedStandup: "deleted this standup",
    restoredMeeting: "brought the meeting back",
    restoredDraft: "brought the draft back",
    restoredStandup: "undid the deletion",
    addedLateNote: "added a note to a meeting that ended",
  };
  return `${who}${yoursElsewhere ? ", in another tab," : ""} ${sentences[activity.kind] ?? "changed something"}`;
}

/** "12 min 5 s"; 0 (not recorded) is null. */
export function meetingLength(seconds) {
  if (!seconds) return null;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  if (minutes === 0) return `${rest} s`;
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

/** A meeting's notes grouped by the speaker whose turn it was (old ones: its transcript). */
export function notesBySpeaker(meeting) {
  const notes = meeting.notes?.length ? meeting.notes
    : (meeting.transcript || "").split("\n").filter(Boolean).map((line) => {
      const colon = line.indexOf(":");
      return colon > 0
        ? { author: line.slice(0, colon), text: line.slice(colon + 1).trim(), speaker: "" }
        : { author: "", text: line, speaker: "" };
    });
  const groups = [];
  for (const note of notes) {
    let group = groups.find((candidate) => candidate.speaker === note.speaker);
    if (!group) groups.push(group = { speaker: note.speaker, notes: [] });
    group.notes.push(note);
  }
  return groups;
}

/** One past meeting for the history list: date, length, who was there, notes by speaker. */
export function historyItem(meeting, locale = undefined) {
  const length = meetingLength(meeting.seconds);
  const present = meeting.present ?? [];
  const groups = notesBySpeaker(meeting);
  // NB: bots (present as "CI (bot)") are counted apart: "2 people and a bot" were there.
  const bots = present.filter((name) => name.endsWith(" (bot)")).length;
  const humans = present.length - bots;
  const people = [humans === 1 ? "1 person" : humans ? `${humans} people` : null,
    bots === 1 ? "a bot" : bots ? `${bots} bots` : null].filter(Boolean).join(" and ");
  const summary = [meetingDate(meeting.date, locale), length, present.length ? people : null]
    .filter(Boolean).map(escapeHTML).join(" · ");
  // NB: notes under no speaker (a late note a bot sent without one) beside notes under one get
  // a heading of their own: without one they read as the last speaker's (as in history.md).
  const headed = groups.some((group) => group.speaker);
  const heading = (group) => !headed ? "" : `<h4>${group.speaker ? `<bdi>${escapeHTML(group.speaker)}</bdi>` : "Other notes"}</h4>`;
  // NB: names and notes each kept apart (`<bdi>`): a name written right to left does not
  // take the note's first number, or the list's commas, into its own order.
  const body = groups.length === 0 ? `<p class="empty">No notes.</p>` : groups.map((group) =>
    `${heading(group)}<ul class="notes">${group.notes.map((note) =>
      `<li>${note.author ? `<strong><bdi>${escapeHTML(note.author)}</bdi></strong>: ` : ""}<bdi>${escapeHTML(note.text)}</bdi></li>`).join("")}</ul>`).join("");
  const names = present.map((name) => `<bdi>${escapeHTML(name)}</bdi>`).join(", ");
  return `<li><details><summary>${summary}</summary>
    ${present.length ? `<p class="present">Present: ${names}</p>` : ""}${body}</details></li>`;
}

export function themeSwatches(group, selected) {
  return THEME_NAMES.map((theme) => `
    <label class="swatch" style="${themeStyle(theme)}" title="${theme}">
      <input type="radio" name="${group}" value="${theme}" ${theme === selected ? "checked" : ""}>
      <span class="visually-hidden">${theme}</span>
    </label>`).join("");
}

/** Who is in a room, for its lobby card: "Ana, Ben and 3 more here", or a count. Names
 * written right to left are kept apart (`isolated`): "سارة" and "محمد علي 2" side by side do
 * not swap places, nor take the comma between them. */
export function whoIsHere(live) {
  const people = live.people ?? [];
  if (people.length === 0) return live.participants > 0 ? `${live.participants} here` : "Nobody here";
  const shown = people.slice(0, 3).map(isolated).join(", ");
  const more = people.length - 3;
  return more > 0 ? `${shown} and ${more} more here` : `${shown} here`;
}

/**
 * A meeting under way in a room, for its lobby card: paused when the server says so (everyone
 * left, a restart, a move), on otherwise, also with nobody in the room (a bot started it over
 * HTTP and it runs until someone ends it).
 */
export function meetingNote(live) {
  if (!live.meetingRunning) return "";
  return live.meetingPaused ? " · meeting paused" : " · meeting on";
}

/**
 * The people in a room as list items: you, bots marked, names escaped. A sign-in here on
 * more than one connection (the same person in two tabs) shows once, with how many: a room
 * does not look fuller than it is. Two sign-ins that chose one name show apart, and only
 * yours says "(you)": a room does not fold two people into one either. In an order that
 * nobody's reconnecting changes: you, the others by name, then the bots.
 */
export function presenceItems(participants, you) {
  const people = [];
  for (const person of participants) {
    // NB: one sign-in is one person (`person`, the same on each of its connections); two
    // people who chose one name are two. Without a session (bots, an --open server), the
    // name is all there is to go by, compared as the server compares it (and the lobby's
    // `people` is folded): "José" typed as é or as e + ◌́ is one name.
    const key = person.person
      ? `person:${person.person}` : `name:${person.isBot}:${person.name.normalize("NFC")}`;
    const same = people.find((seen) => seen.key === key);
    if (same) {
      same.count += 1;
      same.isYou ||= person.id === you;
    } else {
      people.push({ key, name: person.name, isBot: person.isBot, isYou: person.id === you, count: 1 });
    }
  }
  // NB: not the room's order (who came when): a reload or a dropped connection would move
  // someone to the end. Sorted stably: two of one name keep the room's order.
  const rank = (person) => (person.isYou ? 0 : person.isBot ? 2 : 1);
  // NB: names alike but for case or accents ("Ana", "ana"), or one name of two people, by
  // their key: who they are, not when they came.
  people.sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name, undefined, { sensitivity: "base" })
    || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return people.map((person) => {
    const classes = ["person", person.isBot ? "bot" : "", person.isYou ? "me" : ""].filter(Boolean);
    // NB: "×2" is read "times 2": a screen reader hears the words instead.
    const count = person.count > 1
      ? ` <span class="count" aria-hidden="true">×${person.count}</span><span class="visually-hidden">, on ${person.count} connections</span>` : "";
    // NB: a name written right to left is kept apart from " (you)" (`isolated`).
    return `<li class="${classes.join(" ")}">${escapeHTML(isolated(person.name))}${person.isYou ? " (you)" : ""}`
      + `${count}${person.isBot ? `<span class="badge">bot</span>` : ""}</li>`;
  }).join("");
}

/** A running meeting as the meeting screen shows it. */
export function meetingFacts(meeting, standup, participants = []) {
  const duration = standup.duration;
  const count = standup.attendees.length;
  const speaker = standup.attendees[meeting.speakerIndex]?.name ?? "—";
  return {
    speakerLine: `Speaker ${meeting.speakerIndex + 1} of ${count}: ${isolated(speaker)}`,
    elapsed: clock(meeting.secondsElapsed),
    remaining: clock(duration - meeting.secondsElapsed),
    done: meeting.secondsElapsed / duration,
    slices: speakerSlices(duration, count).map((slice) => ({
      ...slice,
      state: slice.index < meeting.speakerIndex ? "spoken"
        : slice.index === meeting.speakerIndex ? "speaking" : "waiting",
    })),
    nextLabel: meeting.speakerIndex >= count - 1 ? "Finish" : "Next speaker",
    paused: meeting.isPaused
      ? pauseText(meeting.pausedBecause, participants.some(({ isBot }) => isBot)) : null,
    transcript: transcriptShown(meeting.transcript),
    ...speakerTurn(meeting, standup),
  };
}

/** A meeting's notes as its screen shows them; none yet, said so — and, with this person's
 * note `held` back in its field (refused, never sent, or its answer lost), where it is. */
export function transcriptShown(transcript, held = false) {
  if (transcript) return transcript;
  return held ? "No notes yet: yours is still in its field." : "No notes yet.";
}

/** Whose turn a note typed now is for, as the note field says it: "for Ben's turn", "for your
 * turn" (`mine`); nothing for nobody (an index past the attendees). */
export function noteForTurn(speaker, mine = false) {
  if (!speaker) return "";
  return mine ? "for your turn" : `for ${isolated(speaker)}'s turn`;
}

/** Why a meeting is paused, as the page says it; with a bot in the room, that its being there
 * did not keep the meeting going (the server stops the clock when the last person leaves). */
export function pauseText(reason, botHere = false) {
  switch (reason) {
    case "serverRestarted": return "Paused: the server restarted.";
    case "moved": return "Paused: the meeting moved to another server.";
    case "everyoneLeft":
      return botHere ? "Paused: every person had left (a bot does not keep a meeting going)."
        : "Paused: everyone had left.";
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
    upNext: next ? `Up next: ${isolated(next)}` : "Last speaker",
    nextSpeaker: next,
  };
}

/** What a screen reader says for an attendee's row: "Attendee 2 name", "Remove attendee 2". */
export function attendeeLabels(index) {
  return { name: `Attendee ${index + 1} name`, remove: `Remove attendee ${index + 1}` };
}

/** Labels an attendee's row (its name field and its remove button) by its place in the list. */
export function numberRow(row, index) {
  const { name, remove } = attendeeLabels(index);
  const input = row.querySelector("input");
  const button = row.querySelector("button");
  if (input.getAttribute("aria-label") !== name) input.setAttribute("aria-label", name);
  if (button.getAttribute("aria-label") !== remove) button.setAttribute("aria-label", remove);
}

/** What the line under the Next button says of this page's press of it (`label`: "Next
 * speaker" or "Finish"), by where the press stands: `waiting` (sent, unanswered for a second),
 * `dropped` (its answer lost with the connection), `notTaken` (back in the room, and it has not
 * moved the meeting on). */
export const NEXT_LINES = {
  waiting: (label) => `“${label}”: waiting for the room to answer…`,
  dropped: (label) => `Your “${label}” left as the connection dropped: it may still take effect once the room is back.`,
  notTaken: (label) => `The room has not taken your “${label}”: press it again if you still mean it.`,
};

/** What a press lost with the connection (`lost`: the meeting it was pressed in, the speaker
 * it named, the button's label) comes to once the room is caught up again: not taken while
 * that meeting runs on with that speaker up and no question to end it (a Finish taken asks
 * it); else nothing to say. Pressed again, it is safe either way: it names its speaker, and
 * the room refuses it if that one is gone. */
export function lostPressLine(meeting, lost) {
  const standing = meeting && meeting.id === lost.meeting && meeting.speakerIndex === lost.from
    && meeting.alert !== "endMeeting";
  return standing ? NEXT_LINES.notTaken(lost.label) : null;
}
