// Fields with a length limit (`maxlength`) refuse what would not fit, and say so. A browser
// cuts a paste to the limit without a word: half a pasted note would be taken for the whole.
// Here a paste or an insertion that would go over the limit changes nothing, and the page
// says how much fits; typing at the limit says so once.

/**
 * The length a field would have after an insertion, if that goes over `max`; else null.
 * `length` is the field's, the selection is what the insertion replaces.
 */
export function overflowAfter({ length, selectionStart, selectionEnd, inserted, max }) {
  if (!(max >= 0)) return null;
  const replaced = Math.abs((selectionEnd ?? length) - (selectionStart ?? length));
  const result = length - replaced + inserted;
  return result > max ? result : null;
}

/** What a field holding at most `max` characters says to an insertion that would make `wanted`. */
export function limitMessage(max, wanted) {
  return wanted > max + 1
    ? `That would make ${wanted} characters; this field holds ${max} at most. Nothing was added.`
    : `This field holds ${max} characters at most.`;
}

function isLimited(field) {
  return (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)
    && field.maxLength >= 0;
}

/**
 * Guards every limited field under `root`, now and later. `fallback(message)` shows what a
 * field says when its form has no `.form-error` (the app's toasts).
 */
export function guardLengths(root, fallback) {
  const said = new WeakMap();
  function refuse(event, field, inserted) {
    const wanted = overflowAfter({
      length: field.value.length,
      selectionStart: field.selectionStart,
      selectionEnd: field.selectionEnd,
      inserted,
      max: field.maxLength,
    });
    if (wanted === null) return;
    event.preventDefault();
    const message = limitMessage(field.maxLength, wanted);
    const error = field.closest("form")?.querySelector(".form-error");
    if (error) {
      error.textContent = message;
      said.set(field, error);
    } else {
      fallback(message);
    }
  }
  root.addEventListener("paste", (event) => {
    if (!isLimited(event.target)) return;
    refuse(event, event.target, (event.clipboardData?.getData("text/plain") ?? "").length);
  }, true);
  root.addEventListener("drop", (event) => {
    if (!isLimited(event.target)) return;
    refuse(event, event.target, (event.dataTransfer?.getData("text/plain") ?? "").length);
  }, true);
  root.addEventListener("beforeinput", (event) => {
    // NB: pastes and drops were looked at above (their text is not in `data` for a field).
    if (!isLimited(event.target) || typeof event.data !== "string") return;
    if (event.inputType === "insertFromPaste" || event.inputType === "insertFromDrop") return;
    // NB: a composition (an input method) is left to the browser: refusing part of one
    // would leave it half-done.
    if (event.isComposing || event.inputType === "insertCompositionText") return;
    refuse(event, event.target, event.data.length);
  }, true);
  // What a field said goes once it changes again.
  root.addEventListener("input", (event) => {
    const error = said.get(event.target);
    if (!error) return;
    said.delete(event.target);
    if (error.textContent.includes("at most")) error.textContent = "";
  }, true);
}
