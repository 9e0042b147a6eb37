"""Behind HAProxy the per-address limits count the client X-Forwarded-For names — but only
when a --trusted-proxy sent it: from anyone else the header is ignored."""
import asyncio
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from test_commands_and_refusals import ROOT, SERVER


def start(*extra):
    data = str(Path(tempfile.mkdtemp(prefix="standups-xff-")) / "data")
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public"),
         "--open", "--max-connections-per-address", "2", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1)
    return process, f"ws://127.0.0.1:{port}/ws/lobby?name=Ana"


async def open_from(url, forwarded, count):
    """Opens `count` lobby connections claiming to come from `forwarded`; returns them and the
    status of the first refusal (None if all were let in)."""
    sockets = []
    for _ in range(count):
        try:
            socket = await websockets.connect(
                url, additional_headers={"X-Forwarded-For": f"203.0.113.7, {forwarded}"})
            await socket.recv()
            sockets.append(socket)
        except InvalidStatus as refused:
            return sockets, refused.response.status_code
    return sockets, None


@pytest.mark.parametrize("trusted", [True, False])
def test_per_address_limits_believe_x_forwarded_for_only_from_a_trusted_proxy(trusted):
    process, url = start(*(["--trusted-proxy", "127.0.0.1"] if trusted else []))

    async def scenario():
        first, refused_first = await open_from(url, "10.0.0.1", 2)
        second, refused_second = await open_from(url, "10.0.0.2", 3)
        for socket in first + second:
            await socket.close()
        return refused_first, len(second), refused_second

    try:
        refused_first, let_in, refused_second = asyncio.run(scenario())
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert refused_first is None
    if trusted:
        # Two clients behind the proxy: each has its own two connections (the last entry of
        # the header is the one the proxy added; what the client wrote before it is not used).
        assert (let_in, refused_second) == (2, 503)
    else:
        # Nobody vouches for the header: both are 127.0.0.1, whose two connections are used.
        assert (let_in, refused_second) == (0, 503)
