"""A node cut off from the database (a network namespace whose link goes down) stops serving
its rooms within 5 s, another node takes them, and once the link is back the cut-off node sends
nothing for them. Needs root (ip netns); skipped with a message otherwise."""
import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from cluster import POSTGRES, ROOT, SERVER, free_port, health, wait_until
from test_cluster import create_standup, receive, until

NAMESPACE = "standups-cut"
DB_HOST, DB_NODE = "10.231.0.1", "10.231.0.2"          # the node's link to the database
CLIENT_HOST, CLIENT_NODE = "10.232.0.1", "10.232.0.2"  # people's link to the node


def run(*command):
    subprocess.run(command, check=True, capture_output=True, timeout=30)


@pytest.fixture
def partitioned_cluster():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("the partition test needs root and iproute2 (ip netns): run make test as root")
    subprocess.run(["ip", "netns", "delete", NAMESPACE], capture_output=True)
    run("ip", "netns", "add", NAMESPACE)
    for host_end, node_end, host_ip, node_ip in (
            ("cut-db", "cut-db-n", DB_HOST, DB_NODE),
            ("cut-cl", "cut-cl-n", CLIENT_HOST, CLIENT_NODE)):
        subprocess.run(["ip", "link", "delete", host_end], capture_output=True)
        run("ip", "link", "add", host_end, "type", "veth", "peer", "name", node_end)
        run("ip", "link", "set", node_end, "netns", NAMESPACE)
        run("ip", "addr", "add", f"{host_ip}/24", "dev", host_end)
        run("ip", "link", "set", host_end, "up")
        run("ip", "netns", "exec", NAMESPACE, "ip", "addr", "add", f"{node_ip}/24", "dev", node_end)
        run("ip", "netns", "exec", NAMESPACE, "ip", "link", "set", node_end, "up")
    run("ip", "netns", "exec", NAMESPACE, "ip", "link", "set", "lo", "up")
    pg_folder = tempfile.mkdtemp(prefix="standups-postgres-")
    pg_port = free_port()
    started = subprocess.run(
        [str(POSTGRES), "start", pg_folder, str(pg_port)], capture_output=True, text=True,
        timeout=60, env=dict(os.environ, STANDUPS_PG_ALSO_LISTEN=DB_HOST))
    assert started.returncode == 0, started.stderr
    database = started.stdout.strip().splitlines()[-1]
    folder = Path(tempfile.mkdtemp(prefix="standups-cut-"))
    processes = []

    def node(name, port, namespace=False, host="127.0.0.1", db=database):
        prefix = ["ip", "netns", "exec", NAMESPACE] if namespace else []
        log = open(folder / f"{name}.log", "w")
        process = subprocess.Popen(
            prefix + [str(SERVER), "--host", host, "--port", str(port), "--database", db,
                      "--data-dir", str(folder / name), "--public-dir", str(ROOT / "public"),
                      "--open", "--open-to-network"],
            stdout=subprocess.DEVNULL, stderr=log)
        processes.append(process)
        return process

    cut_port, other_port = free_port(), free_port()
    node("cut", cut_port, namespace=True, host=CLIENT_NODE,
         db=database.replace("127.0.0.1", DB_HOST))
    node("other", other_port)
    wait_until(lambda: health(other_port)[0] == 200, 30, "the other node answers")
    wait_until(lambda: subprocess.run(
        ["curl", "-sf", f"http://{CLIENT_NODE}:{cut_port}/healthz"], capture_output=True
    ).returncode == 0, 30, "the cut-off node answers")
    yield {"cut": f"ws://{CLIENT_NODE}:{cut_port}", "cut_http": f"http://{CLIENT_NODE}:{cut_port}",
           "other": f"ws://127.0.0.1:{other_port}",
           "other_http": f"http://127.0.0.1:{other_port}", "log": folder / "cut.log"}
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
    subprocess.run([str(POSTGRES), "stop", pg_folder], timeout=60)
    subprocess.run(["ip", "netns", "delete", NAMESPACE], capture_output=True)
    for link in ("cut-db", "cut-cl"):
        subprocess.run(["ip", "link", "delete", link], capture_output=True)
    shutil.rmtree(folder, ignore_errors=True)


def test_a_node_cut_off_from_the_database_gives_its_rooms_up(partitioned_cluster):
    nodes = partitioned_cluster
    standup = asyncio.run(create_standup(nodes["other_http"], "Cut off"))

    async def scenario():
        async with websockets.connect(f"{nodes['cut']}/ws/rooms/{standup}?name=Ana") as ana, \
                websockets.connect(f"{nodes['cut']}/ws/lobby?name=Cy") as cy:
            await receive(ana)
            await receive(cy)
            await ana.send('{"type":"action","ref":"go","action":{"type":"startMeetingButtonTapped"}}')
            await until(ana, lambda m: m.get("type") == "ack")
            await until(ana, lambda m: m.get("type") == "patch" and "secondsElapsed" in str(m))
            run("ip", "link", "set", "cut-db", "down")
            cut_at = time.monotonic()
            # A note whose save waits on the lost link (given up only after 15 s) holds the
            # room no longer: the cut-off node closes it within 5 s of losing the database.
            await ana.send('{"type":"action","ref":"n1","action":{"type":"meeting.noteSubmitted",'
                           '"text":"sent as the link went","id":"n1"}}')
            try:
                while True:
                    await receive(ana, 6)
            except ConnectionClosed as closed:
                assert closed.rcvd.code == 1012, closed
            closed_after = time.monotonic() - cut_at
            assert closed_after < 5, closed_after
            # Its lobby knows it has no database now: a new standup is refused at once, as not
            # saved, rather than waiting out the database's 15 s to be said maybe saved.
            asked = time.monotonic()
            await cy.send(json.dumps({"type": "action", "ref": "cut-new", "action": {
                "type": "addStandupSubmitted", "standup": {
                    "title": "Made while cut off", "duration": 300, "theme": "teal",
                    "attendees": [{"name": "Cy"}]}}}))
            refused = await until(cy, lambda m: m.get("ref") == "cut-new", 5)
            assert refused["type"] == "error" and refused["code"] == "storage_unavailable", refused
            assert time.monotonic() - asked < 2, time.monotonic() - asked
            # So is a history download (answered 503, where it waited out the database's 15 s).
            asked = time.monotonic()
            try:
                urllib.request.urlopen(f"{nodes['cut_http']}/api/rooms/{standup}/history.md", timeout=20)
                raise AssertionError("the cut-off node served the history")
            except urllib.error.HTTPError as refused:
                assert refused.code == 503, refused
                assert json.load(refused)["code"] == "storage_unavailable"
            assert time.monotonic() - asked < 2, time.monotonic() - asked
        # Once PostgreSQL ends the silent session (5 s), the other node takes the room.
        taken = None
        while taken is None:
            assert time.monotonic() - cut_at < 15, "no node took the room"
            try:
                async with websockets.connect(f"{nodes['other']}/ws/rooms/{standup}?name=Ben") as ben:
                    taken = await receive(ben, 3)
                    run("ip", "link", "set", "cut-db", "up")
                    # The cut-off node is back on the database: it refuses the room, and sends
                    # no version for it.
                    await asyncio.sleep(3)
                    try:
                        async with websockets.connect(
                                f"{nodes['cut']}/ws/rooms/{standup}?name=Ana") as again:
                            message = await receive(again, 5)
                            raise AssertionError(f"the cut-off node served the room: {message}")
                    except ConnectionClosed as closed:
                        assert closed.rcvd.code == 1012
                    # The room goes on at the other node: the meeting came back paused where
                    # it was ("the server restarted"), and resumes.
                    assert taken["state"]["meeting"]["pausedBecause"] == "serverRestarted"
                    await ben.send(
                        '{"type":"action","ref":"on","action":{"type":"meeting.resumeButtonTapped"}}')
                    await until(ben, lambda m: m.get("type") == "ack", 5)
                    patch = await until(
                        ben, lambda m: m.get("type") == "patch" and "secondsElapsed" in str(m), 5)
                    assert patch["version"] > taken["version"]
            except ConnectionClosed:
                await asyncio.sleep(0.3)
        assert taken["state"]["meeting"] is not None
        async with websockets.connect(f"{nodes['other']}/ws/lobby?name=Cy") as lobby:
            titles = [standup["title"] for standup in (await receive(lobby))["state"]["standups"]]
            assert titles == ["Cut off"], titles
        return closed_after

    closed_after = asyncio.run(scenario())
    print(f"partition: rooms closed {closed_after:.2f} s after the cut")
    assert "Lost the database session" in nodes["log"].read_text()
