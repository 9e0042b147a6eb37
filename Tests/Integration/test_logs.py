"""--log-format json: every line the server logs is one JSON object a log collector can read."""
import json
import re
import subprocess
import tempfile
import urllib.request
from pathlib import Path

from test_commands_and_refusals import ROOT, SERVER


def test_json_logs_are_one_object_per_line():
    data = str(Path(tempfile.mkdtemp(prefix="standups-logs-")) / "data")
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public"),
         "--log-format", "json", "--log-level", "debug"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = json.loads(process.stderr.readline())
    assert first["level"] == "info" and first["label"] == "standups"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["time"]), first
    port = re.search(r"127\.0\.0\.1:(\d+)", first["message"]).group(1)
    # Something that logs: a refused request.
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/rooms/nope", timeout=5)
    except urllib.error.HTTPError as error:
        assert error.code in (401, 404)
    process.terminate()
    _, rest = process.communicate(timeout=10)
    lines = [line for line in rest.splitlines() if line.strip()]
    assert lines, "the server logged nothing on its way out"
    for line in lines:
        entry = json.loads(line)
        assert {"time", "level", "label", "message", "source"} <= entry.keys(), entry
        # A clean stop (SIGTERM) is no error: nothing on the way out is logged as one.
        assert entry["level"] not in ("error", "critical"), entry


def test_a_bot_token_on_the_command_line_and_a_short_secret_are_warned_of_without_the_secret():
    data = str(Path(tempfile.mkdtemp(prefix="standups-logs-")) / "data")
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public"),
         "--bot-token", "CI=ci-secret-0001"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while not any("--bot-token shows its secret" in line for line in lines):
            line = process.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        assert "STANDUPS_BOT_TOKENS" in lines[-1] and "bots add" in lines[-1]
        # Its secret, 16 characters, is short: said, by where it was given, not what it is.
        short = process.stderr.readline()
        assert "The secret in --bot-token number 1 is under 20 characters" in short, short
        assert not any("ci-secret-0001" in line for line in lines + [short])
    finally:
        process.terminate()
        process.wait(timeout=10)
