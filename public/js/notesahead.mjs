// The notes a meeting's note field holds ahead of what is typed on: each sent and not yet
// answered, or whose answer a dropped connection hid, or refused (or not found in the room
// after a drop) and kept to be sent again, in the order they sit at the start of the field. A
// note stays in the field until the room has it, so that nothing typed is lost; what the
// person types on goes after it, and leaves with nothing but the note. Each stays a note of
// its own: one kept is sent again by the next Enter, apart from what was typed after it. Pure
// (tested by node): meeting.mjs does the page's part.

/** A note's id (`meeting.noteSubmitted`'s `id`): random, so that the note sent again is
 * taken once. (`crypto.randomUUID` is for secure pages only; a server on plain http is not.) */
export function noteID() {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Whether `transcript` got `note`'s line after the lines it had when the note was sent. */
export function reached(transcript, note) {
  if (!transcript.startsWith(note.before)) return false;
  return transcript.slice(note.before.length).split("\n").includes(note.line);
}

export class NotesAhead {
  /** `notes`: `{ text, before, line, state, id, speaker }`, `state` one of "sent", "unsure",
   * "kept"; `speaker`: who was speaking as it was sent (the room files it under them). */
  constructor(notes = []) {
    this.notes = notes;
  }

  /** Kept in the tab across a reload: whatever was on its way is unsure then, and only if the
   * field still starts with it. */
  static restore(saved, field) {
    const notes = (Array.isArray(saved) ? saved : []).map((note) => ({
      ...note, state: note.state === "kept" ? "kept" : "unsure",
    }));
    const ahead = new NotesAhead(notes);
    if (!field.startsWith(ahead.prefix)) ahead.notes = [];
    return ahead;
  }

  get prefix() {
    return this.notes.map(({ text }) => text).join("");
  }

  /**
   * Enter on `field`: the notes to send, in order — each kept ahead to send again, then what
   * follows the notes ahead, if anything — tracked from now on (`before`: the transcript as it
   * is; `author`: who sends it; `speaker`: who speaks now, for the note to stay theirs though
   * it arrives, or goes again, after Next; `attendees`: the meeting's names). None when nothing is new: Enter again on notes on
   * their way adds nothing. A field changed inside the notes ahead is sent whole: their places
   * are lost.
   */
  send(field, before, author, speaker = null, attendees = null) {
    if (!field.startsWith(this.prefix)) this.notes = [];
    const again = this.notes.filter(({ state }) => state === "kept");
    for (const note of again) Object.assign(note, { before, state: "sent" });
    // NB: one kept from another meeting (a drop hid that it ended) may be about someone who
    // attends no more (`attendees`, the names): the room would refuse it every time; it is
    // filed under who speaks now.
    for (const note of again) if (attendees && !attendees.includes(note.speaker)) note.speaker = speaker;
    const text = field.slice(this.prefix.length);
    if (this.notes.length && !text.trim()) return again;
    const note = { text, before, line: `${author}: ${text.trim()}`, state: "sent", id: noteID(), speaker };
    this.notes.push(note);
    return [...again, note];
  }

  /**
   * `note` reached the meeting: the field without it, what was typed after it staying (its
   * leading spaces aside once nothing is ahead of it any more); null when the field was changed
   * inside the notes ahead, and is left as it is.
   */
  arrived(field, note) {
    const at = this.notes.indexOf(note);
    if (at < 0) return null;
    if (!field.startsWith(this.prefix)) {
      this.notes = [];
      return null;
    }
    const offset = this.notes.slice(0, at).reduce((sum, { text }) => sum + text.length, 0);
    this.notes.splice(at, 1);
    const rest = field.slice(0, offset) + field.slice(offset + note.text.length);
    return this.notes.length ? rest : rest.replace(/^\s+/, "");
  }

  /** `note` was refused, or never left: it stays in the field, as typed, to be sent again. */
  refused(note) {
    note.state = "kept";
  }

  /** `note`'s answer went with the connection: the room's transcript will tell. */
  unsure(note) {
    note.state = "unsure";
  }

  /**
   * Back in the room: each note whose answer a drop hid goes from the field if `transcript`
   * has it (`arrived`: sent again all the same, as the room takes a note's id once, should
   * the line be someone else's alike); the others stay, as typed. The field, the notes
   * `arrived`, how many were found, the notes `missing`
   * (the transcript still has every line it had when they were sent, and not theirs: they
   * never arrived, and go again) and how many are `unknown` (lines it had are gone — a
   * note taken back, say — so it cannot tell: kept for Enter).
   */
  lookFor(field, transcript) {
    let found = 0;
    const missing = [];
    const arrived = [];
    let unknown = 0;
    for (const note of this.notes.filter(({ state }) => state === "unsure")) {
      if (!reached(transcript, note)) {
        note.state = "kept";
        if (transcript.startsWith(note.before)) missing.push(note);
        else unknown += 1;
        continue;
      }
      found += 1;
      arrived.push(note);
      field = this.arrived(field, note) ?? field;
    }
    return { field, found, arrived, missing, unknown };
  }

  /** `notes`, kept, go again now, after `transcript`. */
  again(notes, transcript) {
    for (const note of notes) Object.assign(note, { before: transcript, state: "sent" });
  }

  /** Who the first note ahead that `transcript` lacks was sent about (null when none was: the
   * field's typing was never sent), for it to stay theirs though it goes as a late note. */
  unsentSpeaker(field, transcript) {
    if (!field.startsWith(this.prefix)) return null;
    return this.notes.find((note) => note.state === "kept" || !reached(transcript, note))?.speaker ?? null;
  }

  /** The field without the notes ahead that `transcript` holds: what a meeting that ended
   * under them did not get (these notes are not changed). The blank Enter left after the last
   * note (for the next to start after it) is no part of them: with nothing typed after it, it
   * goes too. */
  unsentIn(field, transcript) {
    const typedAfter = !field.startsWith(this.prefix) || field.slice(this.prefix.length).trim() !== "";
    if (!typedAfter) field = field.trimEnd();
    const copy = new NotesAhead(this.notes.map((note) => ({ ...note })));
    let taken = false;
    for (const note of [...copy.notes]) {
      if (note.state === "kept" || !reached(transcript, note)) continue;
      taken = true;
      field = copy.arrived(field, note) ?? field;
    }
    return taken ? field.replace(/^\s+/, "") : field;
  }
}
