"""Failover time, measured: PostgreSQL, three nodes and HAProxy on loopback; two people in a
room through HAProxy with a meeting running; the node serving the room is killed with SIGKILL,
`--kills` times (started again between kills). Prints a line per kill, then one JSON line:
{"back": [seconds…], "drift": [seconds…], "nodes": 3}. `make bench` runs it (standups-bench)."""
import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Cluster"))
from cluster import Cluster, health, wait_until  # noqa: E402
from test_cluster import Person, create_standup, owner_of  # noqa: E402


async def one_kill(cluster, standup):
    people = [Person(cluster.url, standup, name) for name in ("Ana", "Ben")]
    for person in people:
        person.start()
    answer = await people[0].act("start", {"type": "startMeetingButtonTapped"})
    if answer["type"] != "ack":
        await people[0].act("resume", {"type": "meeting.resumeButtonTapped"})
    await asyncio.sleep(2.5)
    owner = await asyncio.to_thread(owner_of, cluster, standup)
    before = [len(p.welcomes) for p in people]
    seconds = people[0].state["meeting"]["secondsElapsed"]
    killed = time.monotonic()
    owner.kill()
    while not all(len(p.welcomes) > b for p, b in zip(people, before)):
        if time.monotonic() - killed > 30:
            raise RuntimeError("nobody came back within 30 s")
        await asyncio.sleep(0.01)
    back = max(p.welcomes[-1][0] for p in people) - killed
    drift = people[0].state["meeting"]["secondsElapsed"] - seconds
    for person in people:
        await person.stop()
    return owner, back, drift


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--kills", type=int, default=10)
    options = parser.parse_args()
    backs, drifts = [], []
    with Cluster(nodes=3, server=options.server) as cluster:
        standup = asyncio.run(create_standup(cluster.url, "Failover bench"))
        for kill in range(options.kills):
            owner, back, drift = asyncio.run(one_kill(cluster, standup))
            backs.append(round(back, 3))
            drifts.append(drift)
            print(f"kill {kill + 1}: node {owner.name}, back after {back:.2f} s, clock off by {drift} s",
                  flush=True)
            owner.start()
            wait_until(lambda: health(cluster.proxy_port)[0] == 200, 10, "the proxy is healthy")
            # NB: HAProxy takes the node back after one good check (rise 1, every second).
            time.sleep(1.5)
    print(json.dumps({"back": backs, "drift": drifts, "nodes": 3}))


if __name__ == "__main__":
    main()
