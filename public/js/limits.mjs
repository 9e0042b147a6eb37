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

/**
 * What a field holding at most `max` characters says to an insertion that would make `wanted`;
 * `name` (its label) says which field, since the message may show away from it.
 */
export function limitMessage(max, wanted, name = null) {
  const field = name ? `“${name}”` : "this field";
  return wanted > max + 1
    ? `That would make ${wanted} characters; ${field} holds ${max} at most. Nothing was added.`
    : `${name ? field : "This field"} holds ${max} characters at most.`;
}

/** A field's name as its label or `aria-label` gives it, or null. */
function fieldName(field) {
  const name = field.getAttribute("aria-label") ?? field.labels?.[0]?.textContent;
  return name?.trim() || null;
}

function isLimited(field) {
  return (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)
    && field.maxLength >= 0;
}

/**
 * Guards every limited field under `root`, now and later. `fallback(message, field)` shows what
 * a field says when its form has no `.form-error` (the app's toasts), naming the field.
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
    const error = field.closest("form")?.querySelector(".form-error");
    if (error) {
      // NB: beside the form's own fields: which field is plain.
      error.textContent = limitMessage(field.maxLength, wanted);
      said.set(field, error);
    } else {
      fallback(limitMessage(field.maxLength, wanted, fieldName(field)), field);
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
