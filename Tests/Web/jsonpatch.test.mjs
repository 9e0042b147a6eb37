import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { applyPatch, PatchError, parsePointer } from "../../public/js/jsonpatch.mjs";

// RFC 6902, appendix A.
const appendix = [
  ["A.1 add an object member", { foo: "bar" }, [{ op: "add", path: "/baz", value: "qux" }], { baz: "qux", foo: "bar" }],
  ["A.2 add an array element", { foo: ["bar", "baz"] }, [{ op: "add", path: "/foo/1", value: "qux" }], { foo: ["bar", "qux", "baz"] }],
  ["A.3 remove an object member", { baz: "qux", foo: "bar" }, [{ op: "remove", path: "/baz" }], { foo: "bar" }],
  ["A.4 remove an array element", { foo: ["bar", "qux", "baz"] }, [{ op: "remove", path: "/foo/1" }], { foo: ["bar", "baz"] }],
  ["A.5 replace a value", { baz: "qux", foo: "bar" }, [{ op: "replace", path: "/baz", value: "boo" }], { baz: "boo", foo: "bar" }],
  ["A.6 move a value", { foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } }, [{ op: "move", from: "/foo/waldo", path: "/qux/thud" }], { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } }],
  ["A.7 move an array element", { foo: ["all", "grass", "cows", "eat"] }, [{ op: "move", from: "/foo/1", path: "/foo/3" }], { foo: ["all", "cows", "eat", "grass"] }],
  ["A.8 test a value: success", { baz: "qux", foo: ["a", 2, "c"] }, [{ op: "test", path: "/baz", value: "qux" }, { op: "test", path: "/foo/1", value: 2 }], { baz: "qux", foo: ["a", 2, "c"] }],
  ["A.9 test a value: error", { baz: "qux" }, [{ op: "test", path: "/baz", value: "bar" }], null],
  ["A.10 add a nested member object", { foo: "bar" }, [{ op: "add", path: "/child", value: { grandchild: {} } }], { foo: "bar", child: { grandchild: {} } }],
  ["A.11 ignore unrecognized elements", { foo: "bar" }, [{ op: "add", path: "/baz", value: "qux", xyz: 123 }], { foo: "bar", baz: "qux" }],
  ["A.12 add to a nonexistent target", { foo: "bar" }, [{ op: "add", path: "/baz/bat", value: "qux" }], null],
  ["A.14 ~ escape ordering", { "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: 10 }], { "/": 9, "~1": 10 }],
  ["A.15 comparing strings and numbers", { "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: "10" }], null],
  ["A.16 add an array value", { foo: ["bar"] }, [{ op: "add", path: "/foo/-", value: ["abc", "def"] }], { foo: ["bar", ["abc", "def"]] }],
  ["copy", { foo: { a: 1 } }, [{ op: "copy", from: "/foo", path: "/bar" }], { foo: { a: 1 }, bar: { a: 1 } }],
  ["replace the root", { a: 1 }, [{ op: "replace", path: "", value: [1] }], [1]],
];

for (const [name, document, patch, expected] of appendix) {
  test(`RFC 6902 ${name}`, () => {
    const before = structuredClone(document);
    if (expected === null) {
      assert.throws(() => applyPatch(document, patch), PatchError);
    } else {
      assert.deepEqual(applyPatch(document, patch), expected);
    }
    assert.deepEqual(document, before, "the input is never modified");
  });
}

test("pointers unescape ~1 and ~0 in that order", () => {
  assert.deepEqual(parsePointer("/a~1b/c~0d/~01"), ["a/b", "c~d", "~1"]);
  assert.throws(() => parsePointer("no-slash"), PatchError);
});

// Welcomes and patches a real server sent (captured by StandupsServerTests, see
// CapturedSessionTests): replaying them gives the state a fresh welcome showed.
const captured = new URL("../../build/fixtures/captured-session.json", import.meta.url);
// `make test` runs the Swift tests first and sets STANDUPS_REQUIRE_CAPTURE, so there the
// capture must exist; alone, `node --test` skips it until it does.
const required = process.env.STANDUPS_REQUIRE_CAPTURE === "1";
test("patches captured from the real server rebuild its state", { skip: !required && !existsSync(captured) && "run the Swift tests first" }, () => {
  const session = JSON.parse(readFileSync(captured, "utf8"));
  let state = session.welcome.state;
  let version = session.welcome.version;
  assert.ok(session.patches.length > 10);
  for (const patch of session.patches) {
    assert.equal(patch.version, version + 1);
    state = applyPatch(state, patch.ops);
    version = patch.version;
  }
  assert.deepEqual(state, session.final.state);
  assert.equal(version, session.final.version);
});
