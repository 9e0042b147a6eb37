"""The HTTP API's JSON, as a real server sends and takes it, against docs/asyncapi.yaml's
"HTTP API bodies" (as the contract tests check every WebSocket frame): each request body a
client sends here, each answer, and each refusal (`Error`)."""
import json
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/debug/standups-server"
sys.path.insert(0, str(ROOT / "Tests/Contract"))
from test_contract import validate  # noqa: E402


@pytest.fixture
def server():
    data = Path(tempfile.mkdtemp(prefix="standups-http-contract-")) / "data"
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", str(data), "--public-dir", str(ROOT / "public"),
         "--bot-token", "CI=ci-secret-0001", "--print-invite"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1)
    invite = re.search(r"/join#(\S+)", process.stdout.readline()).group(1)
    yield f"http://127.0.0.1:{port}", invite
    process.terminate()
    process.wait(timeout=10)


class Client:
    """Calls the API, checking each body it sends against `sends` and each answer against
    `answers` (or `Error` for a refusal), and keeping the session cookie it is given."""

    def __init__(self, base, headers):
        self.base, self.headers, self.checked = base, headers, []

    def call(self, method, path, answers, body=None, sends=None, status=200):
        if body is not None:
            assert validate(sends, body) == [], (sends, body)
        request = urllib.request.Request(
            self.base + path, method=method, headers={**self.headers, "Content-Type": "application/json"},
            data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                got, text, cookie = answer.status, answer.read(), answer.headers.get("Set-Cookie")
        except urllib.error.HTTPError as error:
            got, text, cookie = error.code, error.read(), None
        found = json.loads(text)
        assert got == status, (method, path, got, found)
        assert validate(answers if got < 400 else "Error", found) == [], (method, path, found)
        if cookie:
            self.headers["Cookie"] = cookie.split(";")[0]
        self.checked.append(f"{method} {path} {got}")
        return found


def test_every_body_of_the_http_api_reads_as_the_contract_says(server):
    base, invite = server
    bot = Client(base, {"Authorization": "Bearer ci-secret-0001"})
    bare = {"type": "addStandupSubmitted", "standup": {
        "title": "Retro", "duration": 600, "theme": "navy", "attendees": [{"name": "Ana"}, {"name": "Ben"}]}}
    made = bot.call("POST", "/api/standups", "ApiStandupCreated", bare, "ApiStandupBody")
    room = made["standup"]["id"]
    assert made["standup"]["title"] == "Retro"
    message = {"type": "action", "ref": "ci-1", "action": {**bare, "standup": {**bare["standup"], "title": "Design"}}}
    assert bot.call("POST", "/api/standups", "ApiStandupCreated", message, "ApiStandupBody")["standup"]["title"] == "Design"
    lobby = bot.call("GET", "/api/standups", "ApiLobbySnapshot")
    assert sorted(standup["title"] for standup in lobby["state"]["standups"]) == ["Design", "Retro"]
    for action in ({"type": "startMeetingButtonTapped"},
                   {"type": "action", "ref": "ci-2", "action": {"type": "meeting.noteSubmitted", "text": "build 1234 is green"}},
                   {"type": "meeting.endMeetingButtonTapped"}, {"type": "meeting.alert.saveAndEnd"}):
        bot.call("POST", f"/api/rooms/{room}/actions", "ApiActionResult", action, "ApiActionBody")
    state = bot.call("GET", f"/api/rooms/{room}", "ApiRoomSnapshot")["state"]
    assert state["meeting"] is None and len(state["standup"]["meetings"]) == 1
    page = bot.call("GET", f"/api/rooms/{room}/meetings?offset=0&limit=5", "ApiMeetingsPage")
    assert page["total"] == 1 and page["meetings"][0]["notes"][0]["text"] == "build 1234 is green"
    # Refusals: an action the room has not, one not possible now, a standup that is not there.
    bot.call("POST", f"/api/rooms/{room}/actions", None, {"type": "meeting.nextButtonTapped", "from": 0},
             "ApiActionBody", status=409)
    bot.call("GET", "/api/rooms/00000000-0000-4000-8000-000000000000", None, status=404)
    Client(base, {"Authorization": "Bearer not-a-token"}).call("GET", "/api/standups", None, status=401)

    person = Client(base, {"Origin": base})
    assert person.call("GET", "/api/session", "ApiSession")["signedIn"] is False
    signed_in = person.call("POST", "/api/session", "ApiSession", {"invite": invite, "name": "Ana"}, "ApiSessionBody")
    assert (signed_in["signedIn"], signed_in["name"]) == (True, "Ana")
    assert person.call("POST", "/api/session", "ApiSession", {"name": "Ana B"}, "ApiSessionBody")["name"] == "Ana B"
    person.call("POST", "/api/session", None, {"invite": "wrong", "name": "Eve"}, "ApiSessionBody", status=401)
    assert person.call("DELETE", "/api/session", "ApiSignedOut") == {"signedOut": True}
    assert person.call("GET", "/api/session", "ApiSession")["signedIn"] is False
