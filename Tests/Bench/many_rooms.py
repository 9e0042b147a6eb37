"""An independent check of the 500 rooms × 20 people scenario with meetings ticking: Python's
`websockets` (not the project's libwebsockets client) fills the rooms, starts every meeting
(spread over one second), reads every tick, and the server's CPU is read from /proc over the
window. Tick lateness is measured as the bench does: against the grid that starts when a
client read its meeting's start.

    .venv/bin/python Tests/Bench/many_rooms.py --rooms 500 --peers 20 --seconds 90

Prints one Markdown row. The client is one Python process: at 10 000 ticks a second it is
busy itself; the server's CPU is what is measured.
"""
import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/release/standups-server"


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(server=SERVER):
    data = tempfile.mkdtemp(prefix="standups-rooms-")
    process = subprocess.Popen(
        [str(server), "--port", "0", "--open", "--data-dir", data, "--public-dir", str(ROOT / "public"),
         "--max-connections-per-address", "20000", "--messages-per-second", "100000",
         "--creations-per-minute", "100000", "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
        match = re.search(rf"127\.0\.0\.1:(\d+)\s.*pid={process.pid},", out)
        if match:
            return process, int(match.group(1))
        time.sleep(0.05)
    raise RuntimeError("the server did not start")


async def create_standups(port, rooms):
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws/lobby?name=bench", max_size=None) as lobby:
        await lobby.recv()
        for index in range(rooms):
            await lobby.send(json.dumps({"type": "action", "ref": f"s{index}", "action": {
                "type": "addStandupSubmitted", "standup": {
                    "title": f"Bench {index}", "duration": 1800, "theme": "orange",
                    "attendees": [{"name": f"Person {n}"} for n in range(6)]}}}))
            while True:
                message = json.loads(await lobby.recv())
                if message.get("ref") == f"s{index}":
                    assert message["type"] == "ack", message
                    break
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws/lobby?name=reader", max_size=None) as lobby:
        return [standup["id"] for standup in json.loads(await lobby.recv())["state"]["standups"]]


class Peer:
    """One person in a room: reads every message, notes when each tick arrived."""

    def __init__(self, socket):
        self.socket = socket
        self.started = None  # when the meeting's start was read
        self.lateness = []

    async def read(self, measuring):
        async for raw in self.socket:
            message = json.loads(raw)
            if message.get("type") != "patch":
                continue
            for op in message["ops"]:
                if op["path"] == "/meeting" and op["op"] in ("add", "replace") and op["value"]:
                    self.started = time.monotonic()
                elif op["path"] == "/meeting/secondsElapsed" and self.started is not None:
                    due = self.started + op["value"]
                    if measuring["on"]:
                        self.lateness.append((time.monotonic() - due) * 1000)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--peers", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=90)
    parser.add_argument("--server", default=str(SERVER), help="the server binary (to compare builds)")
    arguments = parser.parse_args()
    process, port = start_server(arguments.server)
    try:
        ids = await create_standups(port, arguments.rooms)
        peers = []
        for index, standup in enumerate(ids):
            batch = [websockets.connect(f"ws://127.0.0.1:{port}/ws/rooms/{standup}?name=p{index}-{n}",
                                        ping_interval=None, max_size=None) for n in range(arguments.peers)]
            sockets = await asyncio.gather(*batch)
            for socket in sockets:
                await socket.recv()  # the welcome
            peers.append([Peer(socket) for socket in sockets])
        measuring = {"on": False}
        readers = [asyncio.create_task(peer.read(measuring)) for room in peers for peer in room]
        # Every room's first peer starts its meeting; the starts spread over one second.
        for index, room in enumerate(peers):
            await room[0].socket.send(json.dumps(
                {"type": "action", "action": {"type": "startMeetingButtonTapped"}}))
            await asyncio.sleep(1 / len(peers))
        await asyncio.sleep(3)
        measuring["on"] = True
        before, started = cpu_seconds(process.pid), time.monotonic()
        await asyncio.sleep(arguments.seconds)
        cpu, elapsed = cpu_seconds(process.pid) - before, time.monotonic() - started
        measuring["on"] = False
        lateness = sorted(value for room in peers for peer in room for value in peer.lateness)
        ticks = len(lateness)
        p50 = lateness[ticks // 2] if ticks else float("nan")
        p99 = lateness[int(ticks * 0.99)] if ticks else float("nan")
        print("| rooms × peers (Python client) | window | server CPU | of one core | ticks read | lateness p50 / p99 (client-side) |")
        print("| --- | --- | --- | --- | --- | --- |")
        print(f"| {arguments.rooms} × {arguments.peers} | {elapsed:.0f} s | {cpu:.2f} s | {cpu / elapsed * 100:.1f} % "
              f"| {ticks / elapsed:.0f} /s | {p50:.1f} / {p99:.1f} ms |", flush=True)
        for task in readers:
            task.cancel()
        await asyncio.gather(*(peer.socket.close() for room in peers for peer in room),
                             return_exceptions=True)
    finally:
        # NB: closing 10 000 sockets cleanly takes a while; past 30 s, stop it.
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


if __name__ == "__main__":
    asyncio.run(main())
