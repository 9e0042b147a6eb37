// An input method's composition in a field: what writes into the field waits for it to end
// (writing into a composition cancels it, and most typing on a phone is one). Tested by node.

/** Watches `input`'s compositions. `after(step)` runs `step` now, or once the composition
 * under way ends (steps in the order they came); `composing` says whether one is. */
export function compositionGuard(input) {
  const waiting = [];
  const guard = {
    composing: false,
    after(step) {
      if (guard.composing) waiting.push(step);
      else step();
    },
  };
  input.addEventListener("compositionstart", () => (guard.composing = true));
  input.addEventListener("compositionend", () => {
    guard.composing = false;
    // NB: a step may start a composition again (focus, a key): the rest wait for its end.
    while (!guard.composing && waiting.length > 0) waiting.shift()();
  });
  return guard;
}
