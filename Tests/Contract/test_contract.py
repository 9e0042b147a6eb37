"""The machine-readable contract, docs/asyncapi.yaml, against the docs and real frames.

- The document is a sane AsyncAPI 3 document whose references all resolve.
- Its lists (error codes, actions, themes, query parameters) match PROTOCOL.md's tables.
- Every fenced ```json example in PROTOCOL.md and BOTS.md validates against the schema of
  its message (or, for a bare state or action, of that part); the document's own examples
  validate too.
- Every frame in the JSON-lines file named by STANDUPS_FRAMES validates, one line each:
  {"direction": "server" | "client", "frame": <message>, "connection": <optional key>}.
  Server states are also rebuilt from each connection's welcome and patches, and every
  rebuilt state validates. Unset or missing, that test is skipped, unless
  STANDUPS_REQUIRE_FRAMES=1 (then it fails).

Run: .venv/bin/python -m pytest -q Tests/Contract
(needs: .venv/bin/pip install pytest jsonschema pyyaml)
"""

from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7, DRAFT202012

ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = ROOT / "docs" / "asyncapi.yaml"
PROTOCOL = ROOT / "docs" / "PROTOCOL.md"
EXAMPLE_DOCS = [PROTOCOL, ROOT / "docs" / "BOTS.md"]
SPEC_URI = "urn:standups:asyncapi"
MAX_REPORTED = 20

SPEC: dict = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
SCHEMAS: dict = SPEC.get("components", {}).get("schemas", {})


# --------------------------------------------------------------------------- validation


def _registry(specification) -> Registry:
    resource = Resource.from_contents(SPEC, default_specification=specification)
    return Registry().with_resource(SPEC_URI, resource)


REGISTRY_2020 = _registry(DRAFT202012)
REGISTRY_7 = _registry(DRAFT7)


def validator(name: str, draft: int = 2020):
    """A validator for components.schemas[name], resolving $refs within the document."""
    assert name in SCHEMAS, f"docs/asyncapi.yaml has no components.schemas.{name}"
    schema = {"$ref": f"{SPEC_URI}#/components/schemas/{name}"}
    if draft == 7:
        return Draft7Validator(schema, registry=REGISTRY_7)
    return Draft202012Validator(schema, registry=REGISTRY_2020)


def resolve_pointer(pointer: str) -> Any:
    """A local reference ('#/a/b') in docs/asyncapi.yaml."""
    assert pointer.startswith("#"), f"not a local reference: {pointer}"
    node: Any = SPEC
    for token in pointer[1:].split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(token)]
        else:
            node = node[token]
    return node


def schema_location(root: str, schema_path) -> str:
    """Where in docs/asyncapi.yaml an error's keyword is: follows the $refs on the way."""
    location = f"#/components/schemas/{root}"
    node: Any = SCHEMAS[root]
    for key in schema_path:
        # NB: jsonschema leaves `$ref` (and `if`) out of schema paths; a `$ref` here never
        # has validating siblings (test_schemas_read_alike_in_draft_07_and_2020_12).
        while isinstance(node, dict) and "$ref" in node:
            location = node["$ref"].removeprefix(SPEC_URI)
            node = resolve_pointer(location)
        node = node[key]
        location += f"/{key}"
    return location


def _branch_is_plausible(errors: list[ValidationError]) -> bool:
    """False when a oneOf branch failed on what tells the branches apart: a `const`
    (a message's or action's `type`, an op, a path) or the kind of value at its root."""
    for error in errors:
        if error.validator == "const":
            return False
        if error.validator in ("type", "enum") and not error.relative_path:
            return False
    return True


def leaf_errors(error: ValidationError) -> list[ValidationError]:
    """The errors worth reporting: inside a oneOf, those of the one branch that was meant."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        plausible = [errs for errs in branches.values() if _branch_is_plausible(errs)]
        if not plausible:
            return [error]
        # Several could be meant: the one the instance matched furthest (its shallowest error
        # deepest), then the one with fewest errors, then the first.
        closest = min(plausible, key=lambda errs: (-min(len(e.relative_path) for e in errs), len(errs)))
        return [leaf for sub in closest for leaf in leaf_errors(sub)]
    return [error]


def validate(name: str, instance: Any, draft: int = 2020) -> list[str]:
    """Problems with `instance` as components.schemas[name], one line each."""
    found = []
    seen = set()
    for error in validator(name, draft).iter_errors(instance):
        for leaf in leaf_errors(error):
            line = (
                f"at {leaf.json_path}: {_short(leaf.message)} "
                f"[schema {schema_location(name, leaf.absolute_schema_path)}]"
            )
            if line not in seen:
                seen.add(line)
                found.append(line)
    return sorted(found)


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _enum(name: str, key: str = "type") -> list[str]:
    schema = SCHEMAS[name]
    return list(schema["properties"][key]["enum"]) if "properties" in schema else list(schema["enum"])


ROOM_ACTIONS = set(_enum("RoomAction"))
LOBBY_ACTIONS = set(_enum("LobbyAction"))


def schema_for(value: Any, direction: str | None = None) -> str | None:
    """Which schema a message, or a bare part of one, is checked against; None if unknown.
    A `history` frame is the server's answer or a client's request: `direction` tells,
    else its members do."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "history":
        if direction is None:
            direction = "server" if "total" in value or "meetings" in value else "client"
        return "HistoryPage" if direction == "server" else "HistoryRequest"
    if kind == "welcome":
        return "LobbyWelcome" if value.get("room") == "lobby" else "RoomWelcome"
    if kind == "patch":
        return "Patch"
    if kind == "ack":
        return "Ack"
    if kind == "ping":
        return "Ping"
    if kind == "pong":
        return "Pong"
    if kind == "error":
        return "Error"
    if kind == "action":
        action = value.get("action")
        action_type = action.get("type") if isinstance(action, dict) else None
        if action_type in LOBBY_ACTIONS:
            return "LobbyActionMessage"
        if action_type in ROOM_ACTIONS:
            return "RoomActionMessage"
        return "ActionMessage"
    if kind in ROOM_ACTIONS:
        return "RoomAction"
    if kind in LOBBY_ACTIONS:
        return "LobbyAction"
    if kind is None and "standup" in value and "participants" in value:
        return "RoomState"
    if kind is None and "standups" in value:
        return "LobbyState"
    return None


# --------------------------------------------------------------------------- the document


def all_refs(node: Any, where: str = "#") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield where, value
            else:
                yield from all_refs(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from all_refs(value, f"{where}/{index}")


def test_the_document_is_asyncapi_3():
    assert re.fullmatch(r"3\.\d+\.\d+", str(SPEC.get("asyncapi"))), "asyncapi: must be 3.x.y"
    assert SPEC["info"]["title"] and SPEC["info"]["version"]
    for name, server in SPEC["servers"].items():
        assert server["host"] and server["protocol"] in ("ws", "wss"), name
    for name in ("channels", "operations", "components"):
        assert isinstance(SPEC.get(name), dict) and SPEC[name], f"{name} is missing or empty"
    for name in ("messages", "schemas"):
        assert SPEC["components"].get(name), f"components.{name} is missing or empty"


def test_every_reference_resolves():
    problems = []
    for where, ref in all_refs(SPEC):
        if not ref.startswith("#/"):
            problems.append(f"{where}: {ref} is not a local reference")
            continue
        try:
            resolve_pointer(ref)
        except (KeyError, IndexError, ValueError):
            problems.append(f"{where}: {ref} does not resolve")
    assert not problems, "\n".join(problems)


def test_the_two_channels_and_their_parameters():
    addresses = {channel["address"]: name for name, channel in SPEC["channels"].items()}
    assert set(addresses) == {"/ws/lobby", "/ws/rooms/{standupId}"}
    for name, channel in SPEC["channels"].items():
        named = set(re.findall(r"\{(\w+)\}", channel["address"]))
        assert named == set(channel.get("parameters", {})), f"{name}: parameters != address"
        expected = {"welcome", "patch", "ack", "error", "action", "ping", "pong"}
        if name == "room":
            expected |= {"historyRequest", "history"}
        assert set(channel["messages"]) == expected, name
        # NB: inline (a YAML alias in the room channel): AsyncAPI's own JSON Schema refuses a
        # $ref there (it matches both its Reference and its Schema).
        query = channel["bindings"]["ws"]["query"]
        assert query["type"] == "object"
        assert set(query["properties"]) == {"name", "since", "replaces", "token"}, name


def test_messages_reference_schemas():
    messages = SPEC["components"]["messages"]
    used = {ref for _, ref in all_refs(SPEC["channels"])}
    for name, message in messages.items():
        assert f"#/components/messages/{name}" in used, f"message {name} is in no channel"
        payload = message["payload"]
        assert set(payload) == {"$ref"}, f"{name}: the payload should reference a schema"
        assert payload["$ref"].startswith("#/components/schemas/"), name
        resolve_pointer(payload["$ref"])


def test_operations_use_their_channels_messages():
    actions = set()
    for name, operation in SPEC["operations"].items():
        assert operation["action"] in ("send", "receive"), name
        channel_ref = operation["channel"]["$ref"]
        assert channel_ref.startswith("#/channels/"), name
        actions.add((channel_ref, operation["action"]))
        parts = [("", operation["messages"])]
        if "reply" in operation:
            reply = operation["reply"]
            assert reply["channel"]["$ref"] == channel_ref, f"{name}: reply on another channel"
            parts.append(("reply ", reply["messages"]))
        for label, refs in parts:
            assert refs, f"{name}: no {label}messages"
            for ref in refs:
                assert ref["$ref"].startswith(channel_ref + "/messages/"), (
                    f"{name}: {label}message {ref['$ref']} is not one of {channel_ref}'s")
                resolve_pointer(ref["$ref"])
    for channel in SPEC["channels"]:
        for action in ("send", "receive"):
            assert (f"#/channels/{channel}", action) in actions, f"no {action} on {channel}"


def test_the_action_unions_are_keyed_by_type():
    for union, prefix in (("RoomAction", "RoomAction."), ("LobbyAction", "LobbyAction.")):
        schema = SCHEMAS[union]
        consts = []
        for branch in schema["oneOf"]:
            name = branch["$ref"].removeprefix("#/components/schemas/")
            const = SCHEMAS[name]["properties"]["type"]["const"]
            assert name == prefix + const, f"{name} holds the action {const}"
            assert SCHEMAS[name].get("additionalProperties") is False, name
            assert "type" in SCHEMAS[name]["required"], name
            consts.append(const)
        assert len(consts) == len(set(consts)), f"{union}: a type appears twice"
        assert set(consts) == set(schema["properties"]["type"]["enum"]), (
            f"{union}: the type enum and the oneOf branches differ")
    assert not ROOM_ACTIONS & LOBBY_ACTIONS


# Keywords whose meaning differs between draft-07 (AsyncAPI's default) and 2020-12, or that
# exist in only one of them.
NOT_PORTABLE = {"$defs", "definitions", "prefixItems", "unevaluatedProperties", "unevaluatedItems",
                "dependentRequired", "dependentSchemas", "dependencies", "$anchor",
                "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "additionalItems"}
SCHEMA_MAPS = {"properties", "patternProperties"}
SCHEMA_LISTS = {"oneOf", "anyOf", "allOf"}
SCHEMA_VALUES = {"items", "not", "if", "then", "else", "additionalProperties", "contains",
                 "propertyNames"}
REF_SIBLINGS = {"$ref", "description", "title", "examples", "$comment"}


def subschemas(schema: Any, where: str) -> Iterator[tuple[str, Any]]:
    yield where, schema
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key in SCHEMA_MAPS:
            for name, sub in value.items():
                yield from subschemas(sub, f"{where}/{key}/{name}")
        elif key in SCHEMA_LISTS:
            for index, sub in enumerate(value):
                yield from subschemas(sub, f"{where}/{key}/{index}")
        elif key in SCHEMA_VALUES:
            yield from subschemas(value, f"{where}/{key}")


def test_schemas_read_alike_in_draft_07_and_2020_12():
    problems = []
    for name, schema in SCHEMAS.items():
        Draft7Validator.check_schema(schema)
        Draft202012Validator.check_schema(schema)
        for where, sub in subschemas(schema, name):
            if not isinstance(sub, dict):
                continue
            if NOT_PORTABLE & set(sub):
                problems.append(f"{where}: {sorted(NOT_PORTABLE & set(sub))}")
            if "$ref" in sub and set(sub) - REF_SIBLINGS:
                problems.append(f"{where}: $ref with {sorted(set(sub) - REF_SIBLINGS)} (ignored by draft-07)")
            if isinstance(sub.get("items"), list):
                problems.append(f"{where}: items as a list")
    assert not problems, "\n".join(problems)


def test_against_the_official_asyncapi_schema():
    """Optional: ASYNCAPI_SPEC_SCHEMA names AsyncAPI's JSON Schema for 3.0.0 (the
    `schemas/3.0.0-without-$id.json` of asyncapi/spec-json-schemas)."""
    path = os.environ.get("ASYNCAPI_SPEC_SCHEMA")
    if not path:
        pytest.skip("ASYNCAPI_SPEC_SCHEMA is not set: the official AsyncAPI schema check is optional")
    official = json.loads(Path(path).read_text(encoding="utf-8"))
    errors = sorted(Draft7Validator(official).iter_errors(SPEC), key=lambda e: list(e.path))
    assert not errors, "\n".join(
        f"{e.json_path}: {_short(best_match([e]).message)}" for e in errors[:MAX_REPORTED])


# --------------------------------------------------------------------------- the lists in PROTOCOL.md


def protocol_section(title: str) -> str:
    text = PROTOCOL.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"PROTOCOL.md has no section {title!r}"
    return match.group(1)


def table_names(section: str) -> list[str]:
    """The backticked names in the first column of a section's tables (before any
    parenthesised fields), header rows excluded."""
    names = []
    lines = section.splitlines()
    for index, line in enumerate(lines):
        is_header = index + 1 < len(lines) and lines[index + 1].startswith("| ---")
        if not line.startswith("| ") or line.startswith("| ---") or is_header:
            continue
        first = line.split("|")[1].split("(")[0]
        names += re.findall(r"`([^`]+)`", first)
    return names


def test_error_codes_match_protocol():
    documented = table_names(protocol_section("Server → client"))
    assert documented, "found no error code table in PROTOCOL.md"
    assert sorted(documented) == sorted(_enum("ErrorCode")), "ErrorCode differs from PROTOCOL.md"


def test_room_and_lobby_actions_match_protocol():
    assert sorted(table_names(protocol_section("Room actions"))) == sorted(ROOM_ACTIONS)
    assert sorted(table_names(protocol_section("Lobby state (`/ws/lobby`)"))) == sorted(LOBBY_ACTIONS)


def test_themes_match_protocol():
    match = re.search(r"`theme` is one of\s+([a-z,\s]+)\.", PROTOCOL.read_text(encoding="utf-8"))
    assert match, "PROTOCOL.md no longer lists the themes as '`theme` is one of …'"
    themes = [theme.strip() for theme in match.group(1).split(",")]
    assert themes == _enum("Theme")


def test_query_parameters_match_protocol():
    section = protocol_section("Endpoints")
    documented = re.findall(r"^\| `(\w+)` \|", section, re.M)
    for name, channel in SPEC["channels"].items():
        assert sorted(documented) == sorted(channel["bindings"]["ws"]["query"]["properties"]), name


# --------------------------------------------------------------------------- examples in the docs

# Placeholders the docs write where a real value would stand. Each one used is listed in
# the example's id; a rule no example needs any more fails test_every_placeholder_is_used.
SAMPLE_ID = "00000000-0000-4000-8000-{:012d}"
STRING_PLACEHOLDERS = {"UUID": "an upper-case UUID"}
WELCOME_PLACEHOLDER = ("<standupId or lobby>", {})
USED_PLACEHOLDERS: set[str] = set()


@dataclass
class Example:
    doc: str
    line: int
    index: int
    value: Any
    variants: list[tuple[str, Any]] = field(default_factory=list)
    problem: str | None = None

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}" + (f"#{self.index}" if self.index else "")


def fenced_json(path: Path) -> Iterator[tuple[int, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = None
    for number, line in enumerate(lines, 1):
        if start is None and line.strip() == "```json":
            start, body = number, []
        elif start is not None and line.strip() == "```":
            yield start, "\n".join(body)
            start = None
        elif start is not None:
            body.append(line)
    assert start is None, f"{path.name}:{start}: unterminated ```json block"


def replace_strings(value: Any, counter: list[int]) -> Any:
    if isinstance(value, dict):
        return {key: replace_strings(item, counter) for key, item in value.items()}
    if isinstance(value, list):
        return [replace_strings(item, counter) for item in value]
    if isinstance(value, str) and value in STRING_PLACEHOLDERS:
        USED_PLACEHOLDERS.add(value)
        counter[0] += 1
        return SAMPLE_ID.format(counter[0])
    return value


def load_examples() -> list[Example]:
    examples = []
    for path in EXAMPLE_DOCS:
        for line, body in fenced_json(path):
            try:
                values = [json.loads(body)]
            except json.JSONDecodeError:
                # A block of one message a line (as PROTOCOL.md shows the server's).
                values = []
                for offset, text in enumerate(body.splitlines()):
                    if not text.strip():
                        continue
                    try:
                        values.append(json.loads(text))
                    except json.JSONDecodeError as error:
                        examples.append(Example(path.name, line + 1 + offset, 0, text,
                                                problem=f"not JSON: {error}"))
            for index, value in enumerate(values, 1):
                examples.append(Example(path.name, line, index if len(values) > 1 else 0, value))
    for example in examples:
        if example.problem is None:
            example.variants = [("", replace_strings(example.value, [0]))]
    # `"room": "<standupId or lobby>", "state": {}`: the state stands for one of the states
    # the document shows; check the welcome with each (and the matching room).
    shown = {schema_for(variant): variant for example in examples if example.doc == PROTOCOL.name
             for _, variant in example.variants}
    for example in examples:
        value = example.value
        if isinstance(value, dict) and (value.get("room"), value.get("state")) == WELCOME_PLACEHOLDER:
            USED_PLACEHOLDERS.add(WELCOME_PLACEHOLDER[0])
            example.variants = []
            for state_schema, room in (("RoomState", None), ("LobbyState", "lobby")):
                if state_schema not in shown:
                    example.problem = f"the welcome's state placeholder needs a {state_schema} example"
                    continue
                state = shown[state_schema]
                variant = dict(value, state=state, room=room or state["standup"]["id"])
                example.variants.append((f"with the {state_schema} example", variant))
    return examples


EXAMPLES = load_examples()


def test_the_docs_have_examples():
    for path in EXAMPLE_DOCS:
        assert any(example.doc == path.name for example in EXAMPLES), f"no ```json in {path.name}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.id)
def test_doc_example(example: Example):
    assert example.problem is None, f"{example.id}: {example.problem}"
    problems = []
    for label, variant in example.variants:
        name = schema_for(variant)
        if name is None:
            problems.append(f"{example.id}{' ' + label if label else ''}: no schema applies to "
                            f"{_short(json.dumps(variant), 120)} (no known 'type', not a state)")
            continue
        for draft in (2020, 7):
            for problem in validate(name, variant, draft):
                problems.append(f"{example.id}{' ' + label if label else ''} as {name} "
                                f"(draft {draft}): {problem}")
    assert not problems, "\n".join(problems)


def test_every_placeholder_is_used():
    unused = (set(STRING_PLACEHOLDERS) | {WELCOME_PLACEHOLDER[0]}) - USED_PLACEHOLDERS
    assert not unused, f"no example uses the placeholders {sorted(unused)}: drop their rules"


CLIENT_SCHEMAS = {"RoomActionMessage", "LobbyActionMessage", "HistoryRequest", "Ping"}


def document_examples() -> Iterator[tuple[str, str, Any]]:
    for name, message in SPEC["components"]["messages"].items():
        schema = message["payload"]["$ref"].removeprefix("#/components/schemas/")
        for index, example in enumerate(message.get("examples", [])):
            where = f"messages.{name}.examples[{index}]"
            yield where, schema, example["payload"]
            # ... and as any frame of its direction.
            union = "ClientMessage" if schema in CLIENT_SCHEMAS else "ServerMessage"
            yield where, union, example["payload"]
    for name, schema in SCHEMAS.items():
        for index, example in enumerate(schema.get("examples", [])):
            yield f"schemas.{name}.examples[{index}]", name, example


def test_the_documents_own_examples():
    problems = []
    count = 0
    for where, schema, payload in document_examples():
        count += 1
        problems += [f"{where}: {problem}" for problem in validate(schema, payload)]
    assert count, "docs/asyncapi.yaml has no examples"
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- recorded frames


class PatchFailed(Exception):
    pass


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchFailed(f"{pointer!r} is not a JSON Pointer")
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def _parent(document: Any, pointer: str) -> tuple[Any, str]:
    tokens = _tokens(pointer)
    if not tokens:
        raise PatchFailed("the root cannot be the target here")
    node = document
    for token in tokens[:-1]:
        node = _child(node, token, pointer)
    return node, tokens[-1]


def _child(node: Any, token: str, pointer: str) -> Any:
    try:
        if isinstance(node, list):
            return node[_index(token, len(node) - 1, pointer)]
        if isinstance(node, dict):
            return node[token]
    except KeyError:
        pass
    raise PatchFailed(f"{pointer}: nothing at {token!r}")


def _index(token: str, last: int, pointer: str) -> int:
    if not re.fullmatch(r"0|[1-9][0-9]*", token) or int(token) > last:
        raise PatchFailed(f"{pointer}: {token!r} is not an index of the array")
    return int(token)


def apply_patch(document: Any, ops: list[dict]) -> Any:
    """RFC 6902, all or nothing."""
    document = copy.deepcopy(document)
    for op in ops:
        kind, path = op.get("op"), op.get("path", "")

        def get(pointer):
            node = document
            for token in _tokens(pointer):
                node = _child(node, token, pointer)
            return node

        def remove(pointer):
            parent, key = _parent(document, pointer)
            if isinstance(parent, list):
                return parent.pop(_index(key, len(parent) - 1, pointer))
            if isinstance(parent, dict) and key in parent:
                return parent.pop(key)
            raise PatchFailed(f"{pointer}: nothing to remove")

        def add(pointer, value):
            nonlocal document
            if pointer == "":
                document = value
                return
            parent, key = _parent(document, pointer)
            if isinstance(parent, list):
                parent.insert(len(parent) if key == "-" else _index(key, len(parent), pointer), value)
            elif isinstance(parent, dict):
                parent[key] = value
            else:
                raise PatchFailed(f"{pointer}: the parent is not a container")

        if kind == "add":
            add(path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            remove(path)
        elif kind == "replace":
            if path == "":
                document = copy.deepcopy(op["value"])
            else:
                get(path)
                remove(path)
                add(path, copy.deepcopy(op["value"]))
        elif kind == "move":
            add(path, remove(op["from"]))
        elif kind == "copy":
            add(path, copy.deepcopy(get(op["from"])))
        elif kind == "test":
            if get(path) != op["value"]:
                raise PatchFailed(f"test failed at {path}")
        else:
            raise PatchFailed(f"unknown op {kind!r}")
    return document


@dataclass
class Tracked:
    state_schema: str
    version: int
    state: Any


def check_frames(lines: list[str]) -> tuple[list[str], dict[str, int]]:
    """Problems in a frames file (one line each), and counts of what was checked."""
    problems: list[str] = []
    counts = {"frames": 0, "server": 0, "client": 0, "rebuilt states": 0, "untracked patches": 0}
    tracked: dict[str, Tracked] = {}
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        where = f"line {number}"
        try:
            line = json.loads(text)
        except json.JSONDecodeError as error:
            problems.append(f"{where}: not JSON ({error})")
            continue
        if not isinstance(line, dict) or line.get("direction") not in ("server", "client") or "frame" not in line:
            problems.append(f'{where}: expected {{"direction": "server"|"client", "frame": …}}')
            continue
        counts["frames"] += 1
        counts[line["direction"]] += 1
        frame = line["frame"]
        connection = json.dumps(line.get("connection"))
        name = schema_for(frame, line["direction"])
        kind = frame.get("type") if isinstance(frame, dict) else None
        expected = (("welcome", "patch", "ack", "error", "history", "pong") if line["direction"] == "server"
                    else ("action", "history", "ping"))
        if kind not in expected or name is None:
            problems.append(f"{where} ({line['direction']}): {_short(json.dumps(kind), 60)} is not a "
                            f"{line['direction']} message type (one of {', '.join(expected)})")
            continue
        found = validate(name, frame)
        problems += [f"{where} ({line['direction']} {kind}, {name}): {problem}" for problem in found]
        if found or line["direction"] != "server":
            continue
        # Rebuild the state: every version a client could hold must validate too.
        if kind == "welcome":
            state_schema = "LobbyState" if frame["room"] == "lobby" else "RoomState"
            if frame["state"] is None:
                previous = tracked.get(connection)
                if previous is None or previous.version != frame["version"]:
                    tracked.pop(connection, None)
            else:
                tracked[connection] = Tracked(state_schema, frame["version"], frame["state"])
        elif kind == "patch":
            current = tracked.get(connection)
            if current is None or frame["version"] > current.version + 1:
                tracked.pop(connection, None)
                counts["untracked patches"] += 1
                continue
            if frame["version"] <= current.version:
                continue  # another connection's copy of a patch already applied
            try:
                state = apply_patch(current.state, frame["ops"])
            except PatchFailed as error:
                problems.append(f"{where} (server patch v{frame['version']}): does not apply to "
                                f"v{current.version}: {error}")
                tracked.pop(connection, None)
                continue
            current.state, current.version = state, frame["version"]
            counts["rebuilt states"] += 1
            problems += [f"{where} (the {current.state_schema} at v{current.version}, after this patch): "
                         f"{problem}" for problem in validate(current.state_schema, state)]
    return problems, counts


def test_recorded_frames():
    path = os.environ.get("STANDUPS_FRAMES")
    required = os.environ.get("STANDUPS_REQUIRE_FRAMES") == "1"
    if not path or not Path(path).is_file():
        reason = ("STANDUPS_FRAMES is not set" if not path else f"STANDUPS_FRAMES={path} does not exist")
        reason += ': set it to a JSON-lines file of {"direction": "server"|"client", "frame": …}'
        if required:
            pytest.fail(f"STANDUPS_REQUIRE_FRAMES=1, but {reason}")
        pytest.skip(reason)
    problems, counts = check_frames(Path(path).read_text(encoding="utf-8").splitlines())
    print(f"{path}: " + ", ".join(f"{count} {what}" for what, count in counts.items()))
    if required:
        assert counts["frames"], f"{path} holds no frames"
    if problems:
        shown = "\n".join(problems[:MAX_REPORTED])
        more = f"\n… and {len(problems) - MAX_REPORTED} more" if len(problems) > MAX_REPORTED else ""
        pytest.fail(f"{len(problems)} problem(s) in {path}:\n{shown}{more}", pytrace=False)


def test_the_frame_checker_catches_what_it_should():
    """The frames check itself, on a few hand-made lines."""
    room = "DEADBEEF-0000-4000-8000-000000000001"
    state = {"standup": {"id": room, "title": "Design", "duration": 300, "theme": "orange",
                         "attendees": [{"id": "A0000000-0000-4000-8000-000000000001", "name": "Blob"}],
                         "meetings": [], "olderMeetingCount": 0},
             "participants": [], "destination": None, "meeting": None, "activity": None, "undo": None}
    frames = [
        {"direction": "server", "frame": {"type": "welcome", "room": room, "you": "p", "key": "0123456789abcdef0123456789abcdef", "version": 1, "state": state}},
        {"direction": "server", "frame": {"type": "patch", "version": 2, "ops": [
            {"op": "add", "path": "/participants/0", "value": {"id": "p", "name": "Ana", "person": None, "isBot": False, "focus": None}}]}},
        # a state that the patch makes invalid: isBot is not a boolean
        {"direction": "server", "frame": {"type": "patch", "version": 3, "ops": [
            {"op": "replace", "path": "/participants/0/isBot", "value": "no"}]}},
        {"direction": "client", "frame": {"type": "action", "action": {"type": "focusChanged", "feild": "title"}}},
        {"direction": "server", "frame": {"type": "error", "ref": None, "code": "oops", "message": "x"}},
    ]
    problems, counts = check_frames([json.dumps(frame) for frame in frames])
    assert counts["rebuilt states"] == 2
    assert len(problems) == 3, "\n".join(problems)
    assert "$.participants[0].isBot" in problems[0]
    assert "'feild'" in problems[1] and "RoomAction.focusChanged" in problems[1]
    assert "$.code" in problems[2] and "ErrorCode" in problems[2]
