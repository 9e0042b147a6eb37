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
        # Changes big enough to need new pages: refused with 503, never acknowledged.
        refused = []
        for index in range(20):
            act(port, room, {"type": "edit.binding", "path": "/title", "value": f"Lost {index} " + "x" * 80})
            status, headers, body = act(port, room, {"type": "saveEditButtonTapped"})
            if status != 200:
                refused.append((status, headers.get("Retry-After"), json.loads(body)["code"]))
                refused_title = f"Lost {index} " + "x" * 80
                break
            act(port, room, {"type": "editButtonTapped"})
        assert refused == [(503, "5", "storage_unavailable")]
        status, text = health(port)
        assert status == 503 and text.startswith("storage_unavailable: ") and "full" in text, text

        # Room again: health comes back by itself — the first check says so — and the same
        # save goes through.
        filler.unlink()
        assert health(port) == (200, "ok")
        status, _, body = act(port, room, {"type": "saveEditButtonTapped"})
        assert status == 200, body
    finally:
        process.terminate()
        process.wait(timeout=10)
    saved_title = None
    process, port = start(data)
    try:
        status, _, body = call(port, "GET", f"/api/rooms/{room}")
        saved_title = json.loads(body)["state"]["standup"]["title"]
    finally:
        process.terminate()
        process.wait(timeout=10)
    # The refused edit stayed a draft (nothing typed was lost) and was saved once there was
    # room: after a restart it is there.
    assert saved_title == refused_title
