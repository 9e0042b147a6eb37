"""An independent check of the keepalive cost: Python's `websockets` (not the project's
libwebsockets client) holds N idle lobby connections to a release `standups-server` and
the server's CPU is read from /proc over the window.

    .venv/bin/python Tests/Bench/idle_keepalive.py 2000 10000 --seconds 90

The client sends no pings of its own (ping_interval=None) and answers the server's, as
browsers do. Prints one Markdown row per size.
"""
import argparse
import asyncio
import os
import re
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


async def measure(count, seconds, server=SERVER):
    data = tempfile.mkdtemp(prefix="standups-idle-")
    process = subprocess.Popen(
        [str(server), "--port", "0", "--open", "--data-dir", data, "--public-dir", str(ROOT / "public"),
         "--max-connections-per-address", "20000", "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # At warning level the address is not logged: find the port from /proc instead.
        port = None
        for _ in range(100):
            out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
            match = re.search(rf"127\.0\.0\.1:(\d+)\s.*pid={process.pid},", out)
            if match:
                port = int(match.group(1))
                break
            await asyncio.sleep(0.05)
        assert port, "the server did not start"
        connections = []
        for start in range(0, count, 200):
            batch = [websockets.connect(f"ws://127.0.0.1:{port}/ws/lobby?name=idle{i}", ping_interval=None,
                                        max_queue=4) for i in range(start, min(count, start + 200))]
            connections += await asyncio.gather(*batch)
        for connection in connections:
            await connection.recv()  # the welcome
        before, started = cpu_seconds(process.pid), time.monotonic()
        await asyncio.sleep(seconds)
        cpu, elapsed = cpu_seconds(process.pid) - before, time.monotonic() - started
        open_count = sum(1 for c in connections if c.state.name == "OPEN")
        await asyncio.gather(*(c.close() for c in connections))
        pings = count * elapsed / 15  # the server pings after 15 s of silence
        return count, elapsed, cpu, open_count, cpu / pings * 1e6
    finally:
        process.terminate()
        process.wait(timeout=10)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", type=int, nargs="+")
    parser.add_argument("--seconds", type=int, default=90)
    parser.add_argument("--server", default=str(SERVER), help="the server binary (to compare builds)")
    arguments = parser.parse_args()
    print("| connections (Python client) | window | server CPU | of one core | CPU per ping | still open |")
    print("| --- | --- | --- | --- | --- | --- |")
    for size in arguments.sizes:
        count, elapsed, cpu, open_count, per_ping = await measure(size, arguments.seconds, arguments.server)
        print(f"| {count} | {elapsed:.0f} s | {cpu:.2f} s | {cpu / elapsed * 100:.2f} % | {per_ping:.1f} µs | {open_count} |",
              flush=True)


asyncio.run(main())
