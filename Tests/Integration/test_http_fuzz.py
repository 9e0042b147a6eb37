"""Malformed HTTP from a fixed seed, thrown at the real server over raw sockets: odd methods,
paths and versions, broken or lying lengths, chunked bodies, oversize and NUL-laden headers,
upgrades with junk keys, pipelined garbage. Whatever arrives, the server answers (never a 500)
or closes, keeps answering /healthz, lets a WebSocket in afterwards, and is idle again after
it — the HTTP request path's fuzz test (libFuzzer covers the JSON parser and JSON Patch)."""
import asyncio
import os
import random
import re
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/debug/standups-server"
SEED = 20261123
REQUESTS = 600


@pytest.fixture
def server():
    data = str(Path(tempfile.mkdtemp(prefix="standups-http-fuzz-")) / "data")
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--open"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = int(re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1))
    yield process, port
    process.terminate()
    process.wait(timeout=10)


def request(rng, port):
    """One request a fuzzer might send, as bytes."""
    method = rng.choice([b"GET", b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH",
                         b"G\x00T", b"", b"GETT", bytes(rng.randrange(33, 127) for _ in range(8))])
    room = str(uuid.UUID(int=rng.getrandbits(128))).encode()
    path = rng.choice([
        b"/", b"/healthz", b"/metrics", b"/api/session", b"/api/rooms/" + room + b"/actions",
        b"/api/rooms/not-a-uuid/meetings?offset=-1&limit=99999", b"/ws/lobby", b"/ws/rooms/x",
        b"/%00", b"/%zz%", b"/../../etc/passwd", b"/./.git/config", b"*", b"http://x/abs",
        b"/" + b"a" * rng.randrange(1, 12000),
        b"/ws/lobby?name=" + bytes(rng.randrange(0, 256) for _ in range(rng.randrange(0, 60))),
        b"/api/rooms/" + room + b"/meetings?offset=" + str(rng.randrange(-5, 10**12)).encode(),
    ])
    version = rng.choice([b"HTTP/1.1", b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/9", b""])
    headers = [b"Host: 127.0.0.1:%d" % port] if rng.random() < 0.9 else []
    body = bytes(rng.randrange(0, 256) for _ in range(rng.choice([0, 0, 5, 200, 5000])))
    if rng.random() < 0.3:
        body = b'{"type":"' + rng.choice([b"startMeetingButtonTapped", b"x", b"\xff"]) + b'"}'
    length = rng.choice([len(body), len(body), -1, 0, len(body) + 10, 2**63, "abc", None])
    if length is not None:
        headers.append(b"Content-Length: " + str(length).encode())
        if rng.random() < 0.1:
            headers.append(b"Content-Length: 7")
    if rng.random() < 0.15:
        headers.append(b"Transfer-Encoding: chunked")
        body = rng.choice([b"5\r\nhello\r\n0\r\n\r\n", b"zz\r\n", b"ffffffffff\r\nx"])
    if rng.random() < 0.25:
        headers += [b"Connection: Upgrade", b"Upgrade: websocket", b"Sec-WebSocket-Version: 13",
                    b"Sec-WebSocket-Key: " + rng.choice([b"dGhlIHNhbXBsZSBub25jZQ==", b"", b"!!"])]
    for _ in range(rng.randrange(0, 4)):
        headers.append(rng.choice([
            b"Authorization: Bearer " + bytes(rng.randrange(33, 127) for _ in range(30)),
            b"Cookie: standups_session=" + bytes(rng.randrange(33, 127) for _ in range(40)),
            b"X-Forwarded-For: 1.2.3.4, " + bytes(rng.randrange(33, 127) for _ in range(10)),
            b"Origin: http://evil.example", b"NoColonHere", b"X-Nul: a\x00b",
            b"X-Big: " + b"b" * rng.choice([100, 9000, 20000]),
            b"Content-Type: application/json",
        ]))
    head = method + b" " + path + (b" " + version if version else b"") + b"\r\n"
    message = head + b"\r\n".join(headers) + b"\r\n\r\n" + body
    if rng.random() < 0.1:
        message += b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"  # pipelined behind it
    if rng.random() < 0.05:
        cut = rng.randrange(0, len(message))
        message = message[:cut]
    return message


async def exchange(port, message):
    """Sends `message`; the status codes of what came back within a second (or none)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as error:
        raise AssertionError(f"the server stopped accepting connections: {error}")
    received = b""
    try:
        writer.write(message)
        await writer.drain()
        while True:
            chunk = await asyncio.wait_for(reader.read(65536), 1)
            if not chunk:
                break
            received += chunk
    except (asyncio.TimeoutError, ConnectionError):
        pass
    finally:
        writer.close()
    return [int(code) for code in re.findall(rb"^HTTP/1\.[01] (\d{3})", received, re.M)]


def healthz(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=3) as response:
        return response.status


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_malformed_http_is_answered_or_closed_and_the_server_keeps_serving(server):
    process, port = server
    rng = random.Random(SEED)
    messages = [request(rng, port) for _ in range(REQUESTS)]
    statuses = []

    async def run():
        for start in range(0, len(messages), 50):
            batch = messages[start:start + 50]
            for codes in await asyncio.gather(*(exchange(port, m) for m in batch)):
                statuses.extend(codes)
            assert process.poll() is None, "the server died"
            assert await asyncio.to_thread(healthz, port) == 200

    asyncio.run(run())
    assert 500 not in statuses, statuses
    # It answered most of them, with the codes of a careful HTTP server.
    assert len(statuses) > REQUESTS // 2, len(statuses)
    assert {400, 404}.issubset(set(statuses)), sorted(set(statuses))
    # A WebSocket still gets in.
    with socket.create_connection(("127.0.0.1", port), timeout=3) as ws:
        ws.sendall(b"GET /ws/lobby?name=Ana HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   b"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                   b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n" % port)
        assert ws.recv(4096).startswith(b"HTTP/1.1 101")
    # And nothing keeps a core busy once the requests are over (a stuck connection spun one).
    time.sleep(1)
    before = cpu_seconds(process.pid)
    time.sleep(2)
    assert cpu_seconds(process.pid) - before < 0.3
