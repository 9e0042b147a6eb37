"""The real standups-server binary and its commands, driven by Python's `websockets`."""
import asyncio
import json
import os
import re
import sqlite3
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/debug/standups-server"


def command(*args, data):
    return subprocess.run(
        [str(SERVER), *args, "--data-dir", data], capture_output=True, text=True, timeout=30)


@pytest.fixture
def data():
    # NB: a folder the server makes itself (mkdtemp's own is 0700 already).
    return str(Path(tempfile.mkdtemp(prefix="standups-integration-")) / "data")


@pytest.fixture
def server(data):
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public"),
         "--print-invite"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1)
    invite = re.search(r"(http://\S+/join#(\S+))", process.stdout.readline())
    yield {"port": int(port), "link": invite.group(1), "invite": invite.group(2)}
    process.terminate()
    process.wait(timeout=10)


def refusal(url, **kwargs):
    async def attempt():
        try:
            async with websockets.connect(url, **kwargs):
                return None
        except InvalidStatus as error:
            return error.response
    return asyncio.run(attempt())


def test_the_commands_refuse_a_folder_without_standups_data():
    empty = tempfile.mkdtemp(prefix="standups-empty-")
    for args in (("invite",), ("bots", "list")):
        refused = command(*args, data=empty)
        assert refused.returncode != 0
        assert "No Standups data" in refused.stderr
    # Nothing was made there: no secret nobody uses.
    assert list(Path(empty).iterdir()) == []


def test_bots_are_added_listed_and_revoked_by_the_command(data, server):
    added = command("bots", "add", "Notes", "--can", "notes", data=data)
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"stb_[A-Za-z0-9_-]{43}", token)
    # A person signed in under the name is signed out of it: the operator is told.
    assert "should anyone be signed in as Notes, they leave their rooms and are asked to choose another name" \
        in added.stderr
    again = command("bots", "add", "notes", "--can", "admin", data=data)
    assert again.returncode != 0 and "exists already" in again.stderr
    # What went wrong is said alone: the usage is for a command line written wrong.
    assert "Usage:" not in again.stderr
    # The name is trimmed, so spaces make no second "Notes"; nor may a name end in "(bot)".
    spaced = command("bots", "add", "  Notes ", "--can", "admin", data=data)
    assert spaced.returncode != 0 and "exists already" in spaced.stderr
    # Nor may a name read like another bot's: a small L for an I, a Cyrillic "о" for an "o".
    for look_alike in ("N0tes", "Nоtes"):
        alike = command("bots", "add", look_alike, "--can", "admin", data=data)
        assert alike.returncode != 0, look_alike
        assert f'"{look_alike}" reads like the name of the bot "Notes"' in alike.stderr
    posing = command("bots", "add", "Notes (bot)", "--can", "admin", data=data)
    assert posing.returncode != 0 and 'cannot end in "(bot)"' in posing.stderr
    # A standup id that names no standup (a typo) would make a bot that can do nothing.
    nowhere = command("bots", "add", "Lost", "--can", "notes",
                      "--standup", "0B5E2C5A-0000-4000-8000-000000000001", data=data)
    assert nowhere.returncode != 0
    assert "No standup has the id 0B5E2C5A-0000-4000-8000-000000000001" in nowhere.stderr
    bad = command("bots", "add", "X", "--can", "everything", data=data)
    assert bad.returncode != 0
    listed = command("bots", "list", data=data)
    assert "Notes\tnotes\tevery standup" in listed.stdout
    assert token not in listed.stdout
    # Only the token's SHA-256 is on disk.
    assert token.encode() not in (Path(data) / "standups.sqlite").read_bytes()
    # The data is the owner's alone.
    assert (Path(data).stat().st_mode & 0o777) == 0o700
    assert ((Path(data) / "standups.sqlite").stat().st_mode & 0o777) == 0o600
    assert command("bots", "revoke", "Notes", data=data).returncode == 0
    missing = command("bots", "revoke", "Notes", data=data)
    assert missing.returncode != 0 and "No bot is named" in missing.stderr
    assert "Usage:" not in missing.stderr


def test_the_invite_command_prints_the_servers_link_and_rotates_it(data, server):
    printed = command("invite", "--port", str(server["port"]), data=data)
    assert printed.stdout.strip() == server["link"]
    # Without an address, the one the server was started at on this folder (here a port it
    # picked), not the default port's: that link would let nobody in.
    assert command("invite", data=data).stdout.strip() == server["link"]
    rotated = command("invite", "--rotate", data=data)
    new_link = rotated.stdout.strip().splitlines()[-1]
    assert new_link != server["link"]
    assert new_link.startswith(f"http://127.0.0.1:{server['port']}/join#"), new_link


def test_a_setting_in_the_environment_that_does_not_read_is_refused_at_start(data):
    """STANDUPS_PORT=abc or STANDUPS_OPEN=yes once fell back to the default without a word
    (port 8080; a server that is not open)."""
    for name, value, says in [
            ("STANDUPS_PORT", "abc", 'STANDUPS_PORT must be a port number (it is "abc").'),
            ("STANDUPS_OPEN", "yes", 'STANDUPS_OPEN must be 1 or 0 (or true or false) (it is "yes").'),
            ("STANDUPS_MAX_CONNECTIONS", "lots", "STANDUPS_MAX_CONNECTIONS must be a whole number"),
            ("STANDUPS_LOG_LEVEL", "loud", "STANDUPS_LOG_LEVEL must be one of trace, debug"),
    ]:
        started = subprocess.run(
            [str(SERVER), "--data-dir", data, "--public-dir", str(ROOT / "public")],
            capture_output=True, text=True, timeout=30, env={**os.environ, name: value})
        assert started.returncode != 0, name
        assert says in started.stderr, started.stderr
    # Nothing was made: the server stopped before touching the folder.
    assert not Path(data).exists()


def test_a_setting_misspelt_or_an_address_that_is_no_address_is_refused_at_start(data):
    """STANDUPS_DATABASE (for STANDUPS_DATABASE_URL) once left a cluster node quietly alone
    on SQLite; --public-url notaurl made invite links that lead nowhere; a proxy given as a
    range was never trusted; an unusable --host listened on nothing."""
    for extra, env, says in [
            ([], {"STANDUPS_DATABASE": "postgres://x@127.0.0.1:1/db"},
             "STANDUPS_DATABASE is not a setting of standups-server: did you mean STANDUPS_DATABASE_URL?"),
            ([], {"STANDUPS_TRUSTED_PROXY": "10.0.0.1"}, "did you mean STANDUPS_TRUSTED_PROXIES?"),
            ([], {"STANDUPS_ALLOWED_ORIGIN": "https://a.example"}, "did you mean STANDUPS_ALLOWED_ORIGINS?"),
            (["--public-url", "notaurl"], {}, '--public-url must be the http(s) address people open'),
            (["--public-url", "ftp://x"], {}, '--public-url must be the http(s) address people open'),
            (["--public-url", "https://example.com/standups/"], {},
             "--public-url must be the address of the site's root"),
            (["--public-url", "https://example.com/?team=1"], {}, "no query (?…) or fragment (#…)"),
            (["--public-url", "https://example.com#top"], {}, "no query (?…) or fragment (#…)"),
            (["--allowed-origin", "https://x.example/path"], {}, "--allowed-origin must be an origin"),
            (["--tls-cert", __file__, "--tls-key", __file__], {},
             f"--tls-cert {__file__} is not a PEM certificate"),
            (["--tls-cert", "/nonexistent.pem", "--tls-key", __file__], {},
             "--tls-cert /nonexistent.pem cannot be read"),
            (["--trusted-proxy", "10.0.0.0/8"], {}, "--trusted-proxy must be one IP address"),
            ([], {"STANDUPS_MESSAGES_PER_SECOND": "nan"}, "STANDUPS_MESSAGES_PER_SECOND must be a number"),
            (["--messages-per-second=inf"], {}, "--messages-per-second (STANDUPS_MESSAGES_PER_SECOND) must be more than 0 (it is inf)"),
            ([], {"STANDUPS_TRUSTED_PROXIES": "haproxy.internal"}, "--trusted-proxy must be one IP address"),
            ([], {"STANDUPS_MAX_CONNECTIONS": "-1"},
             "--max-connections (STANDUPS_MAX_CONNECTIONS) must be more than 0 (it is -1)"),
            (["--messages-per-second=0.0"], {}, "--messages-per-second (STANDUPS_MESSAGES_PER_SECOND) must be more than 0 (it is 0)"),
            # A negative number is the option's value, not an option of its own.
            (["--messages-per-second", "-1"], {},
             "--messages-per-second (STANDUPS_MESSAGES_PER_SECOND) must be more than 0 (it is -1)"),
            (["--creations-per-minute", "-5"], {},
             "--creations-per-minute (STANDUPS_CREATIONS_PER_MINUTE) must be more than 0 (it is -5)"),
            (["--shards", "0"], {}, "--shards (STANDUPS_SHARDS) must be 1 to 256 (it is 0)."),
            (["--shards", "-2"], {}, "--shards (STANDUPS_SHARDS) must be 1 to 256 (it is -2)."),
            ([], {"STANDUPS_SHARDS": "two"}, "STANDUPS_SHARDS must be a whole number"),
            (["--shards", "300"], {}, "--shards (STANDUPS_SHARDS) must be 1 to 256 (it is 300)."),
            (["--port", "-1"], {}, "--port must be 0 to 65535."),
            (["--host", "10.99.99.99", "--port", "0"], {}, "Cannot listen on 10.99.99.99:0"),
    ]:
        started = subprocess.run(
            [str(SERVER), "--data-dir", data, "--public-dir", str(ROOT / "public"), *extra],
            capture_output=True, text=True, timeout=30, env={**os.environ, **env})
        assert started.returncode != 0, (extra, env)
        assert says in started.stderr, started.stderr
    # A bot's variables, HAProxy's and a database's own beside the server's are no concern
    # of it; nor are blank entries in a list.
    listed = subprocess.run(
        [str(SERVER), "bots", "list", "--data-dir", data], capture_output=True, text=True,
        timeout=30, env={**os.environ, "STANDUPS_URL": "http://127.0.0.1:1", "STANDUPS_TOKEN": "t",
                         "STANDUPS_NODE_A": "127.0.0.1:1", "STANDUPS_PROXY_BIND": "127.0.0.1:2",
                         "STANDUPS_DATABASE_USER": "standups"})
    assert "is not a setting" not in listed.stderr, listed.stderr
    assert listed.returncode == 0 or "No Standups data" in listed.stderr, listed.stderr


def test_settings_that_read_are_taken_as_they_are(data):
    """A list with a blank entry, an app's own origin scheme and a host given by name start a
    server that listens where the name says."""
    process = subprocess.Popen(
        [str(SERVER), "--host", "localhost", "--port", "0", "--data-dir", data,
         "--public-dir", str(ROOT / "public"), "--allowed-origin", "tauri://localhost"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "STANDUPS_TRUSTED_PROXIES": "10.0.0.5, "})
    try:
        line = process.stderr.readline()
        port = re.search(r"localhost:(\d+)", line)
        assert port, line
        with urllib.request.urlopen(f"http://127.0.0.1:{port.group(1)}/healthz", timeout=5) as answer:
            assert answer.read() == b"ok"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_rooms_run_on_as_many_shards_as_asked_for(data):
    """Rooms run on one shard thread per core but one (at least one); --shards and
    STANDUPS_SHARDS set another count. The server's threads are read from /proc once it
    serves (its lobby, a room, has made the shards by then)."""
    cores = os.cpu_count() or 1
    for extra, env, shards in [([], {}, max(1, cores - 1)), (["--shards", "3"], {}, 3),
                               ([], {"STANDUPS_SHARDS": "2"}, 2)]:
        process = subprocess.Popen(
            [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public"),
             *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **env})
        try:
            port = re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline())
            assert port, (extra, env)
            with urllib.request.urlopen(f"http://127.0.0.1:{port.group(1)}/healthz", timeout=5) as answer:
                assert answer.read() == b"ok"
            expected = {f"shard-{index}" for index in range(shards)}
            names = set()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                names = {comm.read_text().strip()
                         for comm in Path(f"/proc/{process.pid}/task").glob("*/comm")}
                if {name for name in names if name.startswith("shard-")} == expected:
                    break
                time.sleep(0.05)
            assert {name for name in names if name.startswith("shard-")} == expected, \
                (extra, env, names)
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_an_invite_given_a_host_keeps_the_servers_port_and_one_given_a_port_its_host(data, server):
    """`invite --host` alone once made a link to port 8080, wherever the server listened."""
    port = server["port"]
    secret = server["link"].split("#")[1]
    assert command("invite", "--host", "standups.test", data=data).stdout.strip() == \
        f"http://standups.test:{port}/join#{secret}"
    assert command("invite", "--port", "9", data=data).stdout.strip() == \
        f"http://127.0.0.1:9/join#{secret}"
    assert command("invite", "--public-url", "https://s.example", data=data).stdout.strip() == \
        f"https://s.example/join#{secret}"
    helped = command("invite", "--help", data=data).stdout
    assert "to listen on" not in helped and "people open" in helped, helped


def test_a_link_is_not_made_of_an_address_the_server_would_refuse(data, server):
    """`invite --public-url ftp://x` (or one under a path, or a --host that is no host name)
    printed a link that led nowhere, where the server refuses the same address at start."""
    for extra, says in [
            (["--public-url", "ftp://x"], "--public-url must be the http(s) address people open"),
            (["--public-url", "https://standups.example.com/path"], "--public-url must be the address of the site's root"),
            (["--host", "bad host/x"], "--host must be the host name or IP address people open"),
            (["--host", ""], "--host must be the host name or IP address people open"),
    ]:
        printed = command("invite", *extra, data=data)
        assert printed.returncode != 0, (extra, printed.stdout)
        assert says in printed.stderr, printed.stderr
        assert "/join#" not in printed.stdout
    # A host as people type it still makes a link: a name, an IPv4 or an IPv6 address.
    for host, link in [("standups.example.com", "http://standups.example.com:"),
                       ("192.0.2.10", "http://192.0.2.10:"), ("::1", "http://[::1]:"),
                       ("[::1]", "http://[::1]:")]:
        printed = command("invite", "--host", host, data=data).stdout
        assert printed.startswith(link) and "/join#" in printed, (host, printed)


def test_a_link_is_not_made_for_port_0(data, server):
    for port in ["0", "-1"]:
        printed = command("invite", "--port", port, data=data)
        assert printed.returncode != 0
        assert "A link needs the port people open" in printed.stderr, printed.stderr


def test_a_stop_asked_for_the_moment_the_server_listens_is_a_clean_stop(data):
    """SIGTERM right after "listening" once killed the process without a word: the signals
    were caught only after the invite was printed. Now they are caught before the start."""
    for _ in range(5):
        process = subprocess.Popen(
            [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert "listening" in process.stderr.readline()
        process.terminate()
        _, rest = process.communicate(timeout=10)
        assert process.returncode == 0, (process.returncode, rest)
        # NB: a single server has no other node to hand its rooms to: it says it stops.
        assert "Stopping: every meeting is saved" in rest and "Draining" not in rest, rest


def test_the_invite_is_printed_at_start_when_the_environment_asks(data):
    """STANDUPS_PRINT_INVITE=1 is --print-invite (a flag whose default came from the
    environment once stopped the server from starting)."""
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "STANDUPS_PRINT_INVITE": "1"})
    try:
        port = re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1)
        line = process.stdout.readline()
        assert f"http://127.0.0.1:{port}/join#" in line, line
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_invite_is_not_printed_where_a_log_collector_keeps_the_output(data):
    """Standard output that is no terminal (a container's, a service manager's) is kept like
    the logs: the invite link stays out of it unless asked for, and it says how to get it."""
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening" in process.stderr.readline()
        line = process.stdout.readline()
        assert "join#" not in line, line
        assert "`standups-server invite` prints it" in line, line
        printed = command("invite", data=data)
        assert printed.returncode == 0 and "/join#" in printed.stdout, printed
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_refusals_are_readable_by_a_strict_client(server):
    base = f"ws://127.0.0.1:{server['port']}"
    response = refusal(f"{base}/ws/lobby?name=Eve")
    assert response.status_code == 401
    assert b"invite link" in response.body
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")
    response = refusal(f"{base}/ws/lobby", origin="https://evil.example")
    assert response.status_code == 403
    assert b"evil.example" in response.body


def test_a_session_and_a_scoped_token_work_and_a_revoked_token_is_cut_off(data, server):
    token = command("bots", "add", "Driver", "--can", "drive", data=data).stdout.strip().splitlines()[-1]
    port = server["port"]
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/session", method="POST",
        data=json.dumps({"invite": server["invite"], "name": "Ana"}).encode(),
        headers={"content-type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        cookie = answer.headers["Set-Cookie"].split(";")[0]

    async def scenario():
        async with websockets.connect(
                f"ws://127.0.0.1:{port}/ws/lobby", additional_headers={"Cookie": cookie}) as ana:
            welcome = json.loads(await ana.recv())
            assert welcome["type"] == "welcome"
            await ana.send(json.dumps({"type": "action", "ref": "c-1", "action": {
                "type": "addStandupSubmitted", "standup": {
                    "title": "Design", "duration": 300, "theme": "orange",
                    "attendees": [{"name": "Blob"}]}}}))
            while True:
                message = json.loads(await ana.recv())
                if message.get("ref") == "c-1":
                    assert message["type"] == "ack"
                    break
        # A running server takes a new bot within a second (it re-reads them every second).
        for attempt in range(50):
            try:
                async with websockets.connect(
                        f"ws://127.0.0.1:{port}/ws/lobby",
                        additional_headers={"Authorization": f"Bearer {token}"}) as bot:
                    state = json.loads(await bot.recv())["state"]
                    room = state["standups"][0]["id"]
                break
            except InvalidStatus as refused:
                assert refused.response.status_code == 401 and attempt < 9
                await asyncio.sleep(0.2)
        # A bot kept to that standup may be added: it exists.
        scoped = command("bots", "add", "Scoped", "--can", "notes", "--standup", room,
                         "--standup", room.lower(), data=data)
        assert scoped.returncode == 0, scoped.stderr
        # Named twice, it is one standup.
        listed = command("bots", "list", data=data).stdout
        assert listed.upper().count(room.upper()) == 1, listed
        async with websockets.connect(
                f"ws://127.0.0.1:{port}/ws/rooms/{room}?token={token}") as bot:
            await bot.recv()
            await bot.send(json.dumps({"type": "action", "ref": "b-1", "action": {"type": "deleteButtonTapped"}}))
            while True:
                message = json.loads(await bot.recv())
                if message.get("ref") == "b-1":
                    assert message["code"] == "forbidden"
                    break
            revoked = await asyncio.to_thread(command, "bots", "revoke", "Driver", data=data)
            assert revoked.returncode == 0
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(bot.recv(), timeout=10)
            assert closed.value.rcvd.code == 4401

    asyncio.run(scenario())
    assert refusal(f"ws://127.0.0.1:{port}/ws/lobby?token={token}").status_code == 401


@pytest.fixture
def bot_room(data):
    """A server with one standup, and a bot (`CI`, any action) that acts on it over HTTP:
    yields its port, the standup's id, the bot's headers and `post(body)`, which answers the
    status and the JSON body. (The bot may send 1000 requests a second.)"""
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--bot-token", "CI=ci-secret-0001",
         "--messages-per-second", "1000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1)
        auth = {"Authorization": "Bearer ci-secret-0001"}

        async def create():
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws/lobby", additional_headers=auth,
                                          open_timeout=10) as bot:
                await bot.recv()
                await bot.send(json.dumps({"type": "action", "ref": "c-1", "action": {
                    "type": "addStandupSubmitted", "standup": {
                        "title": "Design", "duration": 300, "theme": "orange", "attendees": [{"name": "Blob"}]}}}))
                while True:
                    message = json.loads(await bot.recv())
                    if message.get("ref") == "c-1":
                        assert message["type"] == "ack", message
                        break
        asyncio.run(create())
        with urllib.request.urlopen(urllib.request.Request(
                f"http://127.0.0.1:{port}/api/standups", headers=auth), timeout=10) as answer:
            room = json.loads(answer.read())["state"]["standups"][0]["id"]

        def post(body):
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/rooms/{room}/actions", method="POST", data=body,
                headers={**auth, "Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    return answer.status, json.loads(answer.read())
            except urllib.error.HTTPError as error:
                return error.code, json.loads(error.read())

        yield port, room, auth, post
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_an_http_body_that_is_not_utf8_is_refused_and_changes_nothing(bot_room):
    """A bot's action over HTTP whose text is not UTF-8 (a text frame like it closes the
    socket, 1007): 400 bad_json, and the note is not taken, not even with its bytes mended."""
    port, room, auth, post = bot_room
    assert post(b'{"type":"startMeetingButtonTapped"}')[0] == 200
    assert post(b'{"type":"meeting.noteSubmitted","text":"deploy done"}')[0] == 200
    for text in (b"bad \xff byte", b"cut \xe2\x82", b"overlong \xc0\xaf"):
        status, error = post(b'{"type":"meeting.noteSubmitted","text":"' + text + b'"}')
        assert (status, error["code"]) == (400, "bad_json"), (text, status, error)
        assert "UTF-8" in error["message"]
    status, error = post(b'{"type":"meeting.noteSubmitted","te\xffxt":"hi"}')
    assert (status, error["code"]) == (400, "bad_json")
    with urllib.request.urlopen(urllib.request.Request(
            f"http://127.0.0.1:{port}/api/rooms/{room}", headers=auth), timeout=10) as answer:
        state = json.loads(answer.read())["state"]
    assert state["meeting"]["transcript"] == "CI (bot): deploy done"


def test_a_deletion_a_bot_asked_over_http_waits_for_its_answer_whoever_passes_through(bot_room):
    """BOTS.md: the question a bot asked over HTTP stays, in an empty room too, until its next
    request answers it: someone opening the room and leaving it does not close it."""
    port, room, auth, post = bot_room
    assert post(b'{"type":"deleteButtonTapped"}')[0] == 200

    async def pass_through():
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws/rooms/{room}", additional_headers=auth,
                                      open_timeout=10) as visitor:
            welcome = json.loads(await visitor.recv())
            assert welcome["state"]["destination"] == {"alert": "confirmDeletion"}, welcome
    asyncio.run(pass_through())

    def state():
        with urllib.request.urlopen(urllib.request.Request(
                f"http://127.0.0.1:{port}/api/rooms/{room}", headers=auth), timeout=10) as answer:
            return json.loads(answer.read())["state"]
    # NB: once the room has seen the visitor leave.
    deadline = time.monotonic() + 10
    while state()["participants"]:
        assert time.monotonic() < deadline, "the visitor never left"
        time.sleep(0.05)
    assert state()["destination"] == {"alert": "confirmDeletion"}
    status, answer = post(b'{"type":"alert.confirmDeletion"}')
    assert status == 200, answer
    with pytest.raises(urllib.error.HTTPError) as gone:
        urllib.request.urlopen(urllib.request.Request(
            f"http://127.0.0.1:{port}/api/rooms/{room}", headers=auth), timeout=10)
    assert gone.value.code == 404


def test_a_backup_taken_while_the_server_runs_is_a_whole_server_to_restore(data, server):
    token = command("bots", "add", "Keeper", "--can", "admin", data=data).stdout.split()[-1]
    assert token.startswith("stb_"), token

    def api(port, method, path, body=None):
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}", method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    def knows_the_bot():
        try:
            return api(server["port"], "GET", "/api/standups") is not None
        except urllib.error.HTTPError as refused:
            assert refused.code == 401, refused
            return False
    # NB: a running server reads the bots added beside it within about a second; asked less
    # often than that (each refusal counts against the address: ten lock it out).
    deadline = time.monotonic() + 3
    while not knows_the_bot():
        assert time.monotonic() < deadline, "the server never let the new bot in"
        time.sleep(0.4)
    made = api(server["port"], "POST", "/api/standups", {
        "type": "addStandupSubmitted",
        "standup": {"title": "Kept", "duration": 300, "theme": "teal", "attendees": [{"name": "Ana"}]}})
    standup = made["standup"]["id"]
    # Last night's backup, taken before the meeting: tonight's replaces it.
    folder = Path(tempfile.mkdtemp(prefix="standups-backup-"))
    backup = folder / "standups-backup.sqlite"
    older = command("backup", str(backup), data=data)
    assert older.returncode == 0, older.stderr
    api(server["port"], "POST", f"/api/rooms/{standup}/actions", {"type": "startMeetingButtonTapped"})
    api(server["port"], "POST", f"/api/rooms/{standup}/actions",
        {"type": "meeting.noteSubmitted", "text": "written before the backup"})

    taken = command("backup", str(backup), data=data)
    assert taken.returncode == 0, taken.stderr
    assert f"to {backup}." in taken.stdout
    # It lets anyone in (the team's secret): readable by its owner only.
    assert backup.stat().st_mode & 0o777 == 0o600
    assert [path.name for path in folder.iterdir()] == ["standups-backup.sqlite"]

    # Restored into a new folder, it is the same server: the same bots, the standup, and the
    # meeting that was running, with its note.
    restored = folder / "restored"
    restored.mkdir(mode=0o700)
    (restored / "standups.sqlite").write_bytes(backup.read_bytes())
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", str(restored), "--public-dir", str(ROOT / "public")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1)
        room = api(port, "GET", f"/api/rooms/{standup}")
        assert room["state"]["standup"]["title"] == "Kept"
        assert room["state"]["meeting"]["transcript"] == "Keeper (bot): written before the backup", room
    finally:
        process.terminate()
        process.wait(timeout=10)

    # Never over the database's own files, however they are named (a link to the folder, the
    # log), and not a cluster's (PostgreSQL has its own tools).
    link = folder / "data-link"
    link.symlink_to(data)
    for own in (Path(data) / "standups.sqlite", link / "standups.sqlite",
                Path(data) / "standups.sqlite-wal", link / "standups.sqlite-shm"):
        itself = command("backup", str(own), data=data)
        assert itself.returncode != 0 and "is the database itself" in itself.stderr, (own, itself)
    # Nor over a file that is not a backup: the server's lock (which would let a second server
    # start on the same folder), or anything else someone keeps there.
    # Nor over a file that is not an earlier backup: the server's lock (which would let a second
    # server start on the same folder), anything else someone keeps there, another
    # application's database, or a server's database in use (its log beside it).
    other_app = folder / "other-app.sqlite"
    with sqlite3.connect(other_app) as connection:
        connection.execute("CREATE TABLE recipe (name TEXT)")
    live = folder / "live" / "standups.sqlite"
    live.parent.mkdir()
    live.write_bytes(backup.read_bytes())
    (folder / "live" / "standups.sqlite-wal").write_bytes(b"")
    (folder / "notes.txt").write_text("my notes")
    for other in (Path(data) / "server.lock", folder / "notes.txt", other_app, live):
        before = other.read_bytes()
        refused = command("backup", str(other), data=data)
        assert refused.returncode != 0, refused
        assert f"{other} is already there and is not an earlier backup" in refused.stderr, refused.stderr
        assert other.read_bytes() == before
    for made in (other_app, live, live.parent / "standups.sqlite-wal"):
        made.unlink()
    live.parent.rmdir()
    (folder / "notes.txt").unlink()
    nowhere = command("backup", str(folder / "missing" / "b.sqlite"), data=data)
    assert nowhere.returncode != 0
    assert f"Cannot write in {folder / 'missing'}: No such file or directory." in nowhere.stderr
    cluster = command("backup", str(backup), "--database", "postgres://u@127.0.0.1:1/d", data=data)
    assert cluster.returncode != 0 and "back it up with pg_dump" in cluster.stderr


def test_a_stopped_server_s_file_alone_holds_everything_and_an_empty_one_is_refused(data):
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "listening" in process.stderr.readline()
    assert command("bots", "add", "Keeper", "--can", "admin", data=data).returncode == 0
    # A server stopped with SIGTERM leaves nothing in its write-ahead log: a copy of
    # standups.sqlite alone (the mistake a backup by hand makes) has everything.
    process.terminate()
    assert process.wait(timeout=20) == 0
    wal = Path(data) / "standups.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    copy = Path(tempfile.mkdtemp(prefix="standups-copy-")) / "data"
    copy.mkdir(mode=0o700)
    (copy / "standups.sqlite").write_bytes((Path(data) / "standups.sqlite").read_bytes())
    listed = command("bots", "list", data=str(copy))
    assert listed.returncode == 0 and "Keeper" in listed.stdout, listed

    # An empty file (a copy that never got its bytes) is not taken for a new database: that
    # would start a new team, every session and bot gone.
    empty = Path(tempfile.mkdtemp(prefix="standups-empty-file-")) / "data"
    empty.mkdir(mode=0o700)
    (empty / "standups.sqlite").write_bytes(b"")
    started = subprocess.run(
        [str(SERVER), "--port", "0", "--data-dir", str(empty)], capture_output=True, text=True,
        timeout=30)
    assert started.returncode != 0
    assert "is empty (0 bytes)" in started.stderr and "Nothing was changed" in started.stderr
    assert (empty / "standups.sqlite").stat().st_size == 0
