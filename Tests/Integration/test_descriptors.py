"""A server out of file descriptors closes new connections at once, says so once, and goes
on: accepting never fails (libwebsockets retried a failed accept in a tight loop, logging
every try) and the process keeps room for its own files."""
import re
import select
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from test_commands_and_refusals import ROOT, SERVER


def test_connections_past_the_open_file_limit_are_closed_at_once_and_the_server_goes_on():
    folder = Path(tempfile.mkdtemp(prefix="standups-descriptors-"))
    log = open(folder / "server.log", "w+")
    # NB: the server raises its soft limit to the hard one: 256 here, 64 of them kept free.
    process = subprocess.Popen(
        ["prlimit", "--nofile=256:256", str(SERVER), "--port", "0", "--data-dir",
         str(folder / "data"), "--public-dir", str(ROOT / "public")],
        stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        deadline = time.monotonic() + 30
        port = None
        while port is None and time.monotonic() < deadline:
            log.seek(0)
            found = re.search(r"127\.0\.0\.1:(\d+)", log.read())
            port = found and int(found.group(1))
            time.sleep(0.05)
        assert port, "the server did not say where it listens"
        held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(300)]
        # Those past the limit are closed without a byte; the others wait for a request.
        closed = set()
        deadline = time.monotonic() + 5
        while len(closed) < 60 and time.monotonic() < deadline:
            readable, _, _ = select.select([s for s in held if s not in closed], [], [], 0.2)
            for connection in readable:
                if connection.recv(1) == b"":
                    closed.add(connection)
        assert 60 <= len(closed) < 300, len(closed)
        assert process.poll() is None
        for connection in held:
            connection.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            assert response.read() == b"ok"
        log.seek(0)
        text = log.read()
        assert text.count("Too many connections for this process's open-file limit") == 1, text
        assert "errno 24" not in text and "accept:" not in text, text
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()
