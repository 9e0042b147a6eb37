"""What saving the edit form's draft costs a person typing: the time from sending an action to
its ack, for `edit.binding` (the draft is written to SQLite before the ack) against
`focusChanged` (nothing to save), one at a time, over a real socket with Python's
`websockets`, and the server's CPU per action.

    .venv/bin/python Tests/Bench/draft_latency.py --actions 500

Prints Markdown rows.
"""
import argparse
import asyncio
import json
import statistics
import time

import websockets

from many_rooms import SERVER, cpu_seconds, create_standups, start_server


async def measure(port, standup, kind, actions):
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws/rooms/{standup}?name=Typist") as room:
        await room.recv()
        latencies = []
        for index in range(actions):
            ref = f"{kind}-{index}"
            action = ({"type": "edit.binding", "path": "/title", "value": f"Draft title {index}"}
                      if kind == "edit.binding" else
                      {"type": "focusChanged", "field": "title" if index % 2 == 0 else None})
            sent = time.perf_counter()
            await room.send(json.dumps({"type": "action", "ref": ref, "action": action}))
            while True:
                message = json.loads(await room.recv())
                if message.get("ref") == ref:
                    assert message["type"] == "ack", message
                    break
            latencies.append((time.perf_counter() - sent) * 1000)
        return latencies


async def main(arguments):
    process, port = start_server(arguments.server)
    try:
        standup = (await create_standups(port, 1))[0]
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws/rooms/{standup}?name=Opener") as room:
            await room.recv()
            await room.send(json.dumps({"type": "action", "ref": "edit", "action": {"type": "editButtonTapped"}}))
            while json.loads(await room.recv()).get("ref") != "edit":
                pass
            print("| action | acks | ack latency p50 / p99 | server CPU per action |")
            print("| --- | --- | --- | --- |")
            for kind in ("focusChanged", "edit.binding"):
                before = cpu_seconds(process.pid)
                latencies = await measure(port, standup, kind, arguments.actions)
                cpu = (cpu_seconds(process.pid) - before) / arguments.actions * 1e6
                quantiles = statistics.quantiles(latencies, n=100)
                print(f"| `{kind}` | {len(latencies)} | {quantiles[49]:.2f} / {quantiles[98]:.2f} ms | {cpu:.0f} µs |")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--actions", type=int, default=500)
    parser.add_argument("--server", default=SERVER)
    asyncio.run(main(parser.parse_args()))
