"""The server and the web app merge two people's typing in one field the same way
(`TextMerge` in Swift, `public/js/textmerge.mjs`): the page shows, as it types, what the room
will hold. Random edits of short texts of words, merged by a real server over HTTP and by
the web app's module under node, must agree."""
import json
import random
import subprocess

from test_commands_and_refusals import ROOT, bot_room, data  # noqa: F401 (fixtures)

WORDS = ["one", "two", "three", "to", "on", "no", "tw", "a", "é", "e\u0301", "x-y", "2"]


def edit(rng, text):
    """`text` with one to three changes of a kind people make: a word typed, taken out or
    changed, letters typed or taken out."""
    words = text.split(" ")
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(4)
        at = rng.randrange(len(words) + 1)
        if kind == 0:
            words.insert(at, rng.choice(WORDS))
        elif kind == 1 and len(words) > 1:
            words.pop(min(at, len(words) - 1))
        elif kind == 2:
            words[min(at, len(words) - 1)] = rng.choice(WORDS)
        else:
            word = words[min(at, len(words) - 1)]
            cut = rng.randrange(len(word) + 1)
            words[min(at, len(words) - 1)] = word[:cut] + rng.choice(["", "s", "e"]) + word[cut + 1:]
    return " ".join(words)


def test_the_server_and_the_web_app_merge_typing_the_same_way(bot_room):  # noqa: F811
    port, room, auth, post = bot_room
    rng = random.Random(2026)
    cases = []
    for _ in range(120):
        base = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
        cases.append({"base": base, "mine": edit(rng, base), "theirs": edit(rng, base)})
    # The named case a review found: a word taken out beside a word put in.
    cases.append({"base": "one two three", "mine": "one three", "theirs": "one two 2 three"})
    script = ("import { mergeText } from " + json.dumps(str(ROOT / "public/js/textmerge.mjs")) + ";"
              "let input = ''; process.stdin.on('data', (chunk) => { input += chunk; });"
              "process.stdin.on('end', () => console.log(JSON.stringify(JSON.parse(input).map("
              "({ base, mine, theirs }) => mergeText(base, mine, theirs).value))));")
    web = json.loads(subprocess.run(["node", "--input-type=module", "-e", script], input=json.dumps(cases),
                                    capture_output=True, text=True, check=True, timeout=60).stdout)

    assert post(json.dumps({"type": "editButtonTapped"}).encode())[0] == 200
    disagreements = []
    for case, page in zip(cases, web):
        for value, base in ((case["base"], None), (case["theirs"], case["base"]), (case["mine"], case["base"])):
            binding = {"type": "edit.binding", "path": "/title", "value": value}
            if base is not None:
                binding["base"] = base
            status, body = post(json.dumps(binding).encode())
            assert status == 200, (case, body)
        import urllib.request
        with urllib.request.urlopen(urllib.request.Request(
                f"http://127.0.0.1:{port}/api/rooms/{room}", headers=auth), timeout=10) as answer:
            held = json.loads(answer.read())["state"]["destination"]["edit"]["draft"]["title"]
        if held != page:
            disagreements.append((case, held, page))
    assert disagreements == []
    # And the named case keeps both people's words whole.
    assert web[-1] == "one 2 three"
