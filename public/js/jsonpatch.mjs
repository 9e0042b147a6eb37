// RFC 6902 JSON Patch: apply a list of operations to a JSON document.
// Pure: the input document is never modified; a failed patch throws and changes nothing.

/** Splits an RFC 6901 pointer into unescaped tokens ("" is the whole document). */
export function parsePointer(pointer) {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new PatchError(`Invalid pointer "${pointer}".`);
  return pointer
    .slice(1)
    .split("/")
    .map((token) => {
      if (/~[^01]|~$/.test(token)) throw new PatchError(`Invalid escape in "${pointer}".`);
      return token.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

export class PatchError extends Error {}

const clone = (value) => (value === undefined ? undefined : structuredClone(value));

function isIndex(token) {
  return /^(0|[1-9][0-9]*)$/.test(token);
}

/** The value at `tokens`, or undefined. */
function get(document, tokens) {
  let current = document;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!isIndex(token) || Number(token) >= current.length) return undefined;
      current = current[Number(token)];
    } else if (current !== null && typeof current === "object") {
      if (!Object.prototype.hasOwnProperty.call(current, token)) return undefined;
      current = current[token];
    } else {
      return undefined;
    }
  }
  return current;
}

function parentOf(document, tokens, pointer) {
  const parent = get(document, tokens.slice(0, -1));
  if (parent === null || typeof parent !== "object") {
    throw new PatchError(`The path ${pointer} does not exist.`);
  }
  return parent;
}

function add(document, pointer, value) {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens, pointer);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : isIndex(last) ? Number(last) : NaN;
    if (!(index >= 0 && index <= parent.length)) {
      throw new PatchError(`Index ${last} is out of range at ${pointer}.`);
    }
    parent.splice(index, 0, value);
  } else {
    parent[last] = value;
  }
  return document;
}

function remove(document, pointer) {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new PatchError("Cannot remove the whole document.");
  const parent = parentOf(document, tokens, pointer);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    if (!isIndex(last) || Number(last) >= parent.length) {
      throw new PatchError(`Index ${last} is out of range at ${pointer}.`);
    }
    return parent.splice(Number(last), 1)[0];
  }
  if (!Object.prototype.hasOwnProperty.call(parent, last)) {
    throw new PatchError(`Nothing at ${pointer} to remove.`);
  }
  const value = parent[last];
  delete parent[last];
  return value;
}

/** Deep equality as RFC 6902's `test` defines it. */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((value, index) => jsonEqual(value, b[index]));
  }
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && jsonEqual(a[key], b[key]));
  }
  return false;
}

/** Applies `operations` to a copy of `document` and returns it. */
export function applyPatch(document, operations) {
  let result = clone(document);
  for (const operation of operations) {
    const { op, path } = operation;
    switch (op) {
      case "add":
        result = add(result, path, clone(operation.value));
        break;
      case "remove":
        remove(result, path);
        break;
      case "replace":
        if (parsePointer(path).length === 0) {
          result = clone(operation.value);
        } else {
          if (get(result, parsePointer(path)) === undefined) {
            throw new PatchError(`Nothing at ${path} to replace.`);
          }
          remove(result, path);
          result = add(result, path, clone(operation.value));
        }
        break;
      case "move": {
        if (path.startsWith(operation.from + "/")) {
          throw new PatchError(`Cannot move ${operation.from} into its own child.`);
        }
        const value = remove(result, operation.from);
        result = add(result, path, value);
        break;
      }
      case "copy": {
        const value = get(result, parsePointer(operation.from));
        if (value === undefined) throw new PatchError(`Nothing at ${operation.from} to copy.`);
        result = add(result, path, clone(value));
        break;
      }
      case "test":
        if (!jsonEqual(get(result, parsePointer(path)), operation.value)) {
          throw new PatchError(`Test failed at ${path}.`);
        }
        break;
      default:
        throw new PatchError(`Unknown operation "${op}".`);
    }
  }
  return result;
}
