"""A cluster's database over TLS, against a real PostgreSQL that offers it with a self-signed
certificate, as Debian's packaged PostgreSQL does: `sslmode` as docs/DEPLOY.md says."""
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/debug/standups-server"


@pytest.fixture(scope="module")
def database():
    """A throwaway PostgreSQL offering TLS; its URL without the `sslmode` the script adds."""
    folder = Path(tempfile.mkdtemp(prefix="standups-postgres-tls-"))
    port = subprocess.run(
        ["python3", "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); "
         "print(s.getsockname()[1])"], capture_output=True, text=True, check=True).stdout.strip()
    script = ROOT / "scripts/throwaway-postgres"
    started = subprocess.run([str(script), "start", str(folder), port], capture_output=True,
                             text=True, timeout=60, env={**os.environ, "STANDUPS_PG_TLS": "1"})
    assert started.returncode == 0, started.stderr
    yield started.stdout.strip().splitlines()[-1].split("?")[0]
    subprocess.run([str(script), "stop", str(folder)], timeout=60)


def invite(url, data):
    return subprocess.run([str(SERVER), "invite", "--database", url, "--data-dir", data],
                          capture_output=True, text=True, timeout=60)


def psql(url, sql):
    port = url.split(":")[-1].split("/")[0]
    return subprocess.run(["psql", "-h", "127.0.0.1", "-p", port, "-U", "standups", "-d", "standups",
                           "-At", "-c", sql], capture_output=True, text=True, timeout=30,
                          check=True).stdout.strip()


def test_without_sslmode_a_self_signed_database_is_reached_over_tls(database, tmp_path):
    """`prefer`, the default, encrypts and does not check the certificate (as libpq's): a node
    pointed at a database whose certificate is self-signed starts, and its sessions are TLS."""
    assert "/join#" in invite(database, str(tmp_path)).stdout
    node = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", str(tmp_path), "--database", database,
         "--public-dir", str(ROOT / "public")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert re.search(r"127\.0\.0\.1:\d+", node.stderr.readline())
        # Its own session and its pool's, each named by the node (application_name).
        sessions = "SELECT count(*), bool_and(ssl) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) " \
                   "WHERE application_name LIKE 'standups%'"
        deadline = time.monotonic() + 10
        while (found := psql(database, sessions)).split("|")[0] == "0":
            assert time.monotonic() < deadline, found
            time.sleep(0.1)
        assert found.split("|")[1] == "t", found
    finally:
        node.terminate()
        node.wait(timeout=20)


@pytest.mark.parametrize("mode", ["require", "verify-full", "verify-ca"])
def test_a_mode_that_checks_the_certificate_refuses_a_self_signed_one_saying_what_to_do(database, tmp_path, mode):
    refused = invite(f"{database}?sslmode={mode}", str(tmp_path))
    assert refused.returncode != 0
    assert "the database's certificate is not one this machine trusts" in refused.stderr, refused.stderr
    assert "or use sslmode=prefer, which encrypts without checking it" in refused.stderr
    # It was reached: not asked whether PostgreSQL runs there.
    assert "Is PostgreSQL running there" not in refused.stderr
    assert "/join#" not in refused.stdout


def test_sslmode_disable_reaches_it_without_tls(database, tmp_path):
    assert "/join#" in invite(f"{database}?sslmode=disable", str(tmp_path)).stdout
