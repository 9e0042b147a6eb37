"""Presence tells the truth: a peer that stops answering is gone from the room within 30 s."""
import asyncio
import json
import socket
import time
import urllib.error
import urllib.request

import websockets

from test_commands_and_refusals import command, data, server  # noqa: F401 (fixtures)


def raw_join(port, path, token):
    """A WebSocket client that upgrades, then never reads or answers again (a frozen tab)."""
    peer = socket.create_connection(("127.0.0.1", port))
    peer.sendall(
        (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
         "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
         f"Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += peer.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head[:80]
    return peer


def until_the_server_takes(port, token, timeout=10):
    """Asks `GET /api/standups` with `token` until it is let in (200), for `timeout` seconds.
    NB: four times a second at most: each refusal counts as a guess (SECURITY.md, 10 a minute)."""
    deadline = time.monotonic() + timeout
    while True:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/standups", headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=3) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError as refused:
            if refused.code != 401 or time.monotonic() > deadline:
                raise
        time.sleep(0.25)


def test_a_peer_that_stops_answering_leaves_the_room_within_30_seconds(data, server):  # noqa: F811
    tokens = {}
    for name in ("Watcher", "Ghost"):
        added = command("bots", "add", name, "--can", "admin", data=data)
        assert added.returncode == 0, added.stderr
        tokens[name] = added.stdout.strip().splitlines()[-1]
    # The running server re-reads its bots every second: the token added last works once it
    # has (the one before it too, then).
    port = server["port"]
    until_the_server_takes(port, tokens["Ghost"])
    headers = {"Authorization": f"Bearer {tokens['Watcher']}"}

    async def scenario():
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws/lobby", additional_headers=headers) as lobby:
            await lobby.recv()
            await lobby.send(json.dumps({"type": "action", "ref": "new", "action": {
                "type": "addStandupSubmitted", "standup": {
                    "title": "Presence", "duration": 300, "theme": "teal", "attendees": [{"name": "Ana"}]}}}))
            while True:
                message = json.loads(await lobby.recv())
                if message.get("type") == "ack":
                    break
            async with websockets.connect(
                f"ws://127.0.0.1:{port}/ws/lobby", additional_headers=headers) as again:
                standup = json.loads(await again.recv())["state"]["standups"][0]["id"]
        path = f"/ws/rooms/{standup}"
        async with websockets.connect(f"ws://127.0.0.1:{port}{path}", additional_headers=headers) as watcher:
            welcome = json.loads(await watcher.recv())
            assert [p["name"] for p in welcome["state"]["participants"]] == ["Watcher"]
            ghost = raw_join(port, path, tokens["Ghost"])
            last_heard = time.monotonic()
            joined = left = None
            while left is None:
                message = json.loads(await asyncio.wait_for(watcher.recv(), timeout=40))
                if message.get("type") != "patch":
                    continue
                for op in message["ops"]:
                    if op["path"].startswith("/participants/"):
                        if op["op"] == "add":
                            joined = time.monotonic()
                        elif op["op"] == "remove" and joined is not None:
                            left = time.monotonic()
            ghost.close()
            return joined - last_heard, left - last_heard

    joined, gone = asyncio.run(scenario())
    assert joined < 5
    # Pinged after 15 s of silence, dropped 15 s later: gone by 30 s (one sweep of slack),
    # and not before the ping had its chance to be answered.
    assert 25 <= gone <= 32, f"the silent peer left after {gone:.1f} s"
