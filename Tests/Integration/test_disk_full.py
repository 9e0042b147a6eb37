"""A full disk, for real (a small tmpfs, as root): nothing is acknowledged that was not saved,
/healthz says why, and it all comes back by itself once there is room again."""
import json
import os
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/debug/standups-server"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def small_disk():
    mount = tempfile.mkdtemp(prefix="standups-full-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mount], check=True)
    yield Path(mount)
    subprocess.run(["umount", "-l", mount], check=False)


def start(data):
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", str(data), "--bot-token", "Ops=ops-secret-token-0001"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = int(re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1))
    return process, port


def call(port, method, path, body=None):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer ops-secret-token-0001", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def health(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def act(port, room, action):
    return call(port, "POST", f"/api/rooms/{room}/actions", action)


def test_a_full_disk_refuses_changes_honestly_and_recovers(small_disk):
    data = small_disk / "data"
    process, port = start(data)
    try:
        # A standup, made while there is room: acknowledged, so it must survive.
        lobby = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/standups", headers={"Authorization": "Bearer ops-secret-token-0001"})
        import websockets.sync.client as ws
        with ws.connect(f"ws://127.0.0.1:{port}/ws/lobby",
                        additional_headers={"Authorization": "Bearer ops-secret-token-0001"}) as socket:
            socket.recv()
            socket.send(json.dumps({"type": "action", "ref": "new", "action": {
                "type": "addStandupSubmitted", "standup": {
                    "title": "Kept", "duration": 300, "theme": "teal", "attendees": [{"name": "Ana"}]}}}))
            while json.loads(socket.recv()).get("type") != "ack":
                pass
        with urllib.request.urlopen(lobby) as response:
            room = json.loads(response.read())["state"]["standups"][0]["id"]
        assert act(port, room, {"type": "editButtonTapped"})[0] == 200

        # Fill the disk.
        filler = small_disk / "filler"
        with open(filler, "wb") as file:
            try:
                while True:
                    file.write(b"\0" * 65536)
                    file.flush()
            except OSError:
                pass
        # Changes big enough to need new pages: refused with 503, never acknowledged. Typing
        # in the form is saved too (its draft), so the first refusal may be any of the three.
        refused = None
        acked_title = "Kept"
        for index in range(20):
            title = f"Lost {index} " + "x" * 80
            steps = [{"type": "edit.binding", "path": "/title", "value": title},
                     {"type": "saveEditButtonTapped"}, {"type": "editButtonTapped"}]
            for step, action in enumerate(steps):
                status, headers, body = act(port, room, action)
                if status != 200:
                    refused = (status, headers.get("Retry-After"), json.loads(body)["code"])
                    rest = steps[step:]
                    break
                if step == 0:
                    acked_title = title
            if refused:
                break
        assert refused == (503, "5", "storage_unavailable")
        status, text = health(port)
        assert status == 503 and text.startswith("storage_unavailable: ") and "full" in text, text
        # Nothing refused shows: the draft holds what was acknowledged last, no more.
        state = json.loads(call(port, "GET", f"/api/rooms/{room}")[2])["state"]
        if rest[0]["type"] == "editButtonTapped":
            assert state["destination"] is None and state["standup"]["title"] == acked_title
        else:
            assert state["destination"]["edit"]["draft"]["title"] == acked_title

        # Room again: health comes back by itself — the first check says so — and the same
        # steps go through.
        filler.unlink()
        assert health(port) == (200, "ok")
        for action in rest:
            status, _, body = act(port, room, action)
            assert status == 200, (action, body)
        # A draft typed now is kept as it is, unsaved, across the restart.
        assert act(port, room, {"type": "edit.binding", "path": "/title", "value": "Still a draft"})[0] == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
    state = None
    process, port = start(data)
    try:
        status, _, body = call(port, "GET", f"/api/rooms/{room}")
        state = json.loads(body)["state"]
    finally:
        process.terminate()
        process.wait(timeout=10)
    # What was acknowledged is there after a restart: the saved title, and the open draft.
    expected = rest[0]["value"] if rest[0]["type"] == "edit.binding" else acked_title
    assert state["standup"]["title"] == expected
    assert state["destination"]["edit"]["draft"]["title"] == "Still a draft"
