// Two people typing in one text field at once, both kept: the same three-way merge as the
// server's (`TextMerge` in Sources/StandupsFeatures/TextMerge.swift), so that a field being
// typed in can take someone else's typing the way the room does, without losing its own.
//
// `base` is the text an edit started from, `mine` this side's text, `theirs` the other side's.
// Each side's change is one splice of `base` (a range replaced by new text), in characters as
// people see them (grapheme clusters), never half of one.
// - Changes to different parts are both made.
// - Two insertions at the same place keep theirs first (it reached the room first).
// - The same change on both sides is made once.
// - Changes to the same characters keep theirs, and what was typed here goes right after.

const graphemes = typeof Intl.Segmenter === "function"
  ? new Intl.Segmenter(undefined, { granularity: "grapheme" })
  : null;

/** `text` as characters people see (what Swift's `Array(string)` gives). */
export function characters(text) {
  return graphemes ? Array.from(graphemes.segment(text), (part) => part.segment) : [...text];
}

/** The one splice that turns `old` into `next` (arrays of characters). */
function splice(old, next) {
  let prefix = 0;
  while (prefix < old.length && prefix < next.length && old[prefix] === next[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < old.length - prefix && suffix < next.length - prefix
    && old[old.length - 1 - suffix] === next[next.length - 1 - suffix]) suffix += 1;
  return { start: prefix, end: old.length - suffix, text: next.slice(prefix, next.length - suffix) };
}

/**
 * Merges `mine` and `theirs`, both changed from `base`. With `caret` (a UTF-16 offset into
 * `mine`, as an input's `selectionStart` is), also says where that caret is in the result.
 */
export function mergeText(base, mine, theirs, caret = null) {
  const same = (value) => ({ value, caret });
  if (mine === theirs || theirs === base) return same(mine);
  const mineChars = characters(mine);
  const at = caret === null ? null : characters(mine.slice(0, caret)).length;
  const done = (parts, index) => {
    const value = parts.flat().join("");
    if (at === null) return { value, caret: null };
    const position = Math.max(0, Math.min(parts.flat().length, index));
    return { value, caret: parts.flat().slice(0, position).join("").length };
  };
  const old = characters(base);
  const their = splice(old, characters(theirs));
  if (mine === base) {
    // Only theirs changed: the caret keeps its place, or its distance from the end after it.
    return done([characters(theirs)],
      at <= their.start ? at : at + their.text.length - (their.end - their.start));
  }
  const my = splice(old, mineChars);
  const delta = their.text.length - (their.end - their.start);
  if (my.start === their.start && my.end === their.end && my.text.join("") === their.text.join("")) {
    return done([characters(theirs)], at);
  }
  const bothInsertHere = my.start === my.end && their.start === their.end && my.start === their.start;
  if (!bothInsertHere && my.end <= their.start) {
    const theirStartInMine = their.start + my.text.length - (my.end - my.start);
    return done([old.slice(0, my.start), my.text, old.slice(my.end, their.start), their.text,
      old.slice(their.end)], at <= theirStartInMine ? at : at + delta);
  }
  if (their.end <= my.start) {
    return done([old.slice(0, their.start), their.text, old.slice(their.end, my.start), my.text,
      old.slice(my.end)], at <= their.start ? at : at + delta);
  }
  // The same characters changed on both sides: theirs, then what was typed here.
  const end = Math.max(my.end, their.end);
  const parts = [old.slice(0, their.start), their.text, old.slice(their.end, end), my.text,
    old.slice(end)];
  const length = parts.flat().length;
  return done(parts, at <= Math.min(my.start, their.start) ? at : length - (mineChars.length - at));
}
