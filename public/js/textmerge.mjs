// Two people typing in one text field at once, both kept: the same three-way merge as the
// server's, step for step (`TextMerge` in Sources/StandupsFeatures/TextMerge.swift), so that a
// field being typed in takes someone else's typing the way the room does, keeping its own.
//
// `base` is the text an edit started from, `mine` this side's text, `theirs` the other side's.
// Each side's changes to `base` are found by a character diff (characters as people see
// them, grapheme clusters; where a browser cannot tell them, code points), as hunks: ranges
// of `base` replaced by new text. Characters compare as Swift's do, by canonical equivalence
// (é is é however it was typed).
// - Hunks that touch different characters are all made.
// - Where hunks of both sides touch the same characters, or insert at the same place: the
//   same change on both sides is made once; otherwise a character either side took out is
//   out, and the text each side put in stays where it put it, theirs first (it reached the
//   room first) where both put text at one place.

/** Texts longer than this are not merged: `mine` is taken as it is (as on the server). */
export const MAX_LENGTH = 1000;

const graphemes = typeof Intl.Segmenter === "function"
  ? new Intl.Segmenter(undefined, { granularity: "grapheme" })
  : null;

/** `text` as characters people see (what Swift's `Array(string)` gives). */
export function characters(text) {
  return graphemes ? Array.from(graphemes.segment(text), (part) => part.segment) : [...text];
}

const same = (a, b) => a === b || a.normalize() === b.normalize();

/** The hunks `{ start, end, text }` that turn `old` into `next` (arrays of characters), by a
 * longest common subsequence, ties broken as on the server. */
export function hunks(old, next) {
  const width = next.length + 1;
  const common = new Int32Array((old.length + 1) * width);
  for (let i = old.length - 1; i >= 0; i -= 1) {
    for (let j = next.length - 1; j >= 0; j -= 1) {
      common[i * width + j] = same(old[i], next[j])
        ? common[(i + 1) * width + j + 1] + 1
        : Math.max(common[(i + 1) * width + j], common[i * width + j + 1]);
    }
  }
  const found = [];
  let i = 0;
  let j = 0;
  let start = null;
  const close = () => {
    if (start) found.push({ start: start[0], end: i, text: next.slice(start[1], j) });
    start = null;
  };
  while (i < old.length || j < next.length) {
    if (i < old.length && j < next.length && same(old[i], next[j])) {
      close();
      i += 1;
      j += 1;
      continue;
    }
    start ??= [i, j];
    if (j === next.length || (i < old.length && common[(i + 1) * width + j] >= common[i * width + j + 1])) {
      i += 1;
    } else {
      j += 1;
    }
  }
  close();
  return aligned(found, old);
}

/** Each hunk that only takes out or only puts in text, slid to where it starts and ends at
 * word boundaries, where the text around it lets it ("one two three" less "two " is also less
 * "wo t"); ties to the leftmost place; clear of its neighbours — as on the server. */
function aligned(found, old) {
  return found.map((hunk, index) => {
    if ((hunk.start === hunk.end) === (hunk.text.length === 0)) return hunk;
    const floor = index === 0 ? 0 : found[index - 1].end + 1;
    const ceiling = index === found.length - 1 ? old.length : found[index + 1].start - 1;
    let { start, end, text } = hunk;
    const first = () => (text.length ? text[0] : old[start]);
    const last = () => (text.length ? text[text.length - 1] : old[end - 1]);
    const score = () => boundary(start > 0 ? old[start - 1] : null, first())
      + boundary(last(), end < old.length ? old[end] : null);
    while (start > floor && same(old[start - 1], last())) {
      if (text.length) text = [old[start - 1], ...text.slice(0, -1)];
      start -= 1;
      end -= 1;
    }
    let best = { start, end, text, score: score() };
    while (end < ceiling && same(old[end], first())) {
      if (text.length) text = [...text.slice(1), old[start]];
      start += 1;
      end += 1;
      const now = score();
      if (now > best.score) best = { start, end, text, score: now };
    }
    return { start: best.start, end: best.end, text: best.text };
  });
}

const BLANKS = new Set([0x20, 0x09, 0x0a, 0x0d, 0xa0, 0x3000]);
const isBlank = (character) => BLANKS.has(character.codePointAt(0));
const isWordy = (character) => /^[\p{L}\p{N}]/u.test(character);

/** How well a change fits between `before` and `after` (null: the text's edge), as on the
 * server: at the text's edge best, then at a space, then at punctuation, inside a word worst. */
function boundary(before, after) {
  if (before === null || after === null) return 3;
  if (isBlank(before) || isBlank(after)) return 2;
  return isWordy(before) && isWordy(after) ? 0 : 1;
}

const precedes = (a, b) => a.start < b.start || (a.start === b.start && a.end < b.end);
const overlaps = (hunk, [start, end]) => (hunk.start < end && start < hunk.end)
  || (hunk.start === hunk.end && start === end && hunk.start === start);

/** `base[start..<end]` with `inside` (hunks within it, in order) made. */
function apply(inside, base, [start, end]) {
  const result = [];
  let position = start;
  for (const hunk of inside) {
    result.push(...base.slice(position, hunk.start), ...hunk.text);
    position = hunk.end;
  }
  return result.concat(base.slice(position, end));
}

/** `base[start..<end]` with both sides' hunks made where they touch the same characters: a
 * character either side took out is out, and what each side put in stays where it put it,
 * theirs first where both put text at one place. */
function both(theirs, mine, base, [start, end]) {
  const result = [];
  const all = theirs.concat(mine);
  for (let position = start; position <= end; position += 1) {
    for (const hunk of all) if (hunk.start === position) result.push(...hunk.text);
    const isKept = position < end && !all.some((hunk) => hunk.start <= position && position < hunk.end);
    if (isKept) result.push(base[position]);
  }
  return result;
}

/**
 * Merges `mine` and `theirs`, both changed from `base`. With `caret` (a UTF-16 offset into
 * `mine`, as an input's `selectionStart` is), also says where that caret is in the result:
 * where it was among unchanged text, and after the text of a change it is in or at the end of.
 */
export function mergeText(base, mine, theirs, caret = null) {
  if (same(mine, theirs) || same(theirs, base)) return { value: mine, caret };
  // NB: in the server's order: only theirs changed, then too long to merge.
  const onlyTheirs = same(mine, base);
  const tooLong = [base, mine, theirs].some((text) => characters(text).length > MAX_LENGTH);
  if (tooLong) return { value: onlyTheirs ? theirs : mine, caret };
  const old = characters(base);
  const my = onlyTheirs ? [] : hunks(old, characters(mine));
  const their = hunks(old, characters(theirs));
  const at = caret === null ? null : characters(mine.slice(0, caret)).length;
  const merged = [];
  let placed = null;
  let position = 0;
  let minePosition = 0;
  /** Copies `part` (this much of `mine`): a caret in it keeps its place, or goes to its end. */
  const put = (part, mineLength, keep) => {
    if (placed === null && at !== null && at <= minePosition + mineLength) {
      const offset = at - minePosition;
      placed = merged.length + (keep || offset === 0 ? Math.min(offset, part.length) : part.length);
    }
    merged.push(...part);
    minePosition += mineLength;
  };
  let nextMine = 0;
  let nextTheirs = 0;
  while (nextMine < my.length || nextTheirs < their.length) {
    const takeMine = nextTheirs === their.length
      || (nextMine < my.length && precedes(my[nextMine], their[nextTheirs]));
    const first = takeMine ? my[nextMine] : their[nextTheirs];
    let region = [first.start, first.end];
    const mineIn = [];
    const theirsIn = [];
    for (;;) {
      if (nextMine < my.length && overlaps(my[nextMine], region)) {
        region = [Math.min(region[0], my[nextMine].start), Math.max(region[1], my[nextMine].end)];
        mineIn.push(my[nextMine++]);
      } else if (nextTheirs < their.length && overlaps(their[nextTheirs], region)) {
        region = [Math.min(region[0], their[nextTheirs].start), Math.max(region[1], their[nextTheirs].end)];
        theirsIn.push(their[nextTheirs++]);
      } else {
        break;
      }
    }
    const before = old.slice(position, region[0]);
    put(before, before.length, true);
    const myVersion = apply(mineIn, old, region);
    const theirVersion = apply(theirsIn, old, region);
    if (theirsIn.length === 0) {
      put(myVersion, myVersion.length, true);
    } else if (mineIn.length === 0 || same(myVersion.join(""), theirVersion.join(""))) {
      put(theirVersion, myVersion.length, false);
    } else {
      put(both(theirsIn, mineIn, old, region), myVersion.length, false);
    }
    position = region[1];
  }
  const rest = old.slice(position);
  put(rest, rest.length, true);
  // NB: only theirs changed: theirs exactly, as the server gives it (the same characters as
  // `merged`, but written as theirs writes them: é as one scalar or two).
  const result = onlyTheirs ? characters(theirs) : merged;
  return { value: result.join(""), caret: placed === null ? null : result.slice(0, placed).join("").length };
}

/**
 * Whether `room` holds the change from `base` to `value` already (it arrived, and only its
 * answer was lost): each of the change's hunks lies inside one of the room's, with its text
 * in that hunk's text.
 */
export function holds(base, value, room) {
  if (same(value, room)) return true;
  const old = characters(base);
  const roomHunks = hunks(old, characters(room));
  return hunks(old, characters(value)).every((hunk) => roomHunks.some((other) =>
    other.start <= hunk.start && hunk.end <= other.end
    && other.text.join("").includes(hunk.text.join(""))));
}
