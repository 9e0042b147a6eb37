// Fields with a length limit (`data-max-chars`) refuse what would not fit, and say so. A
// browser's own `maxlength` would cut a paste to the limit without a word (half a pasted note
// would be taken for the whole), and it counts UTF-16 units: a family emoji is eight of them.
// The server counts characters as people see them (grapheme clusters), and so does this.
// Here a paste or an insertion that would go over the limit changes nothing, and the page
// says how much fits; typing at the limit says so once.

const graphemes = typeof Intl.Segmenter === "function"
  ? new Intl.Segmenter(undefined, { granularity: "grapheme" })
  : null;

/** How many characters `text` holds as people see them: "👨‍👩‍👧" and "é" (e + ◌́) are one each. */
export function characterCount(text) {
  if (!graphemes) return [...text].length;
  let count = 0;
  for (const _ of graphemes.segment(text)) count += 1;
  return count;
}

/**
 * The characters a field would hold after `inserted` replaces its selection, if that goes over
 * `max`; else null. A selection made backwards counts the same.
 */
export function overflowAfter({ value, selectionStart, selectionEnd, inserted, max }) {
  if (!(max >= 0)) return null;
  const start = Math.min(selectionStart ?? value.length, selectionEnd ?? value.length);
  const end = Math.max(selectionStart ?? value.length, selectionEnd ?? value.length);
  const result = characterCount(value.slice(0, start) + inserted + value.slice(end));
  return result > max ? result : null;
}

/**
 * What a field holding at most `max` characters says to an insertion that would make `wanted`:
 * a key typed at the limit (`typed`), or a paste or insertion, refused whole. `name` (its
 * label) says which field, since the message may show away from it.
 */
export function limitMessage(max, wanted, name = null, { typed = false } = {}) {
  const field = name ? `“${name}”` : "this field";
  return typed
    ? `${name ? field : "This field"} holds ${max} characters at most.`
    : `That would make ${wanted} characters; ${field} holds ${max} at most. Nothing was added.`;
}

/**
 * What a field holding at most `max` characters says when it holds `count` (a composition or
 * the browser's autofill went over): nothing is cut, and it cannot be sent until it fits.
 */
export function overLimitMessage(max, count, name = null) {
  const field = name ? `“${name}”` : "This field";
  return `${field} has ${count} characters; it holds ${max} at most.`;
}

/** A field's name as its label or `aria-label` gives it, or null. */
export function fieldName(field) {
  const name = field.getAttribute("aria-label") ?? field.labels?.[0]?.textContent;
  return name?.trim() || null;
}

/** The characters a field holds at most, or null if it has no limit. */
function limitOf(field) {
  if (!(field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)) return null;
  const max = Number.parseInt(field.dataset.maxChars ?? "", 10);
  return Number.isInteger(max) && max >= 0 ? max : null;
}

/** Whether a field holds more characters than its limit (it is then not sent). */
export function isOverLimit(field) {
  const max = limitOf(field);
  return max !== null && characterCount(field.value) > max;
}

/**
 * Guards every limited field under `root`, now and later. `fallback(message, field)` shows what
 * a field says when its form has no `.form-error` (the app's toasts); `changed(field)` is told
 * when such a field changed again and fits, so that what it said can go.
 */
export function guardLengths(root, fallback, changed = () => {}) {
  const said = new WeakMap();
  /** Shows `message`: in the field's form's `.form-error`, or else with `fallback`. */
  function say(field, message) {
    const error = field.closest("form")?.querySelector(".form-error");
    if (error) {
      error.textContent = message;
      said.set(field, error);
    } else {
      fallback(message, field);
    }
  }
  function refuse(event, field, inserted) {
    const max = limitOf(field);
    if (max === null) return;
    const wanted = overflowAfter({
      value: field.value,
      selectionStart: field.selectionStart,
      selectionEnd: field.selectionEnd,
      inserted,
      max,
    });
    if (wanted === null) return;
    event.preventDefault();
    // NB: named even beside its form: a form's message shows under all of its fields.
    const typed = event.type === "beforeinput" && characterCount(inserted) === 1;
    say(field, limitMessage(max, wanted, fieldName(field), { typed }));
  }
  /** After a change: a field over its limit says so and cannot be submitted until it fits. */
  function check(field) {
    const max = limitOf(field);
    if (max === null) return;
    const count = characterCount(field.value);
    if (count > max) {
      // NB: nothing is cut (the text is the person's); the form will not submit it.
      const message = overLimitMessage(max, count, fieldName(field));
      field.setCustomValidity(message);
      say(field, message);
      return;
    }
    field.setCustomValidity("");
    // What a field said goes once it changes again.
    const error = said.get(field);
    if (!error) return changed(field);
    said.delete(field);
    if (error.textContent.includes("at most")) error.textContent = "";
  }
  root.addEventListener("paste", (event) => {
    refuse(event, event.target, event.clipboardData?.getData("text/plain") ?? "");
  }, true);
  root.addEventListener("drop", (event) => {
    refuse(event, event.target, event.dataTransfer?.getData("text/plain") ?? "");
  }, true);
  root.addEventListener("beforeinput", (event) => {
    // NB: pastes and drops were looked at above (their text is not in `data` for a field).
    if (typeof event.data !== "string") return;
    if (event.inputType === "insertFromPaste" || event.inputType === "insertFromDrop") return;
    // NB: a composition (an input method, and most typing on a phone) is left to the
    // browser: refusing part of one would leave it half-done. Where it ends is checked.
    if (event.isComposing || event.inputType === "insertCompositionText") return;
    refuse(event, event.target, event.data);
  }, true);
  root.addEventListener("input", (event) => {
    if (!event.isComposing) check(event.target);
  }, true);
  root.addEventListener("compositionend", (event) => check(event.target), true);
}
