"""The Docker image's HEALTHCHECK (deploy/healthcheck), run against a real server as the image
runs it: over plain HTTP, and over TLS when the server serves TLS (its port speaks nothing
else, so a plain check of it would never say healthy)."""
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/debug/standups-server"
CHECK = ROOT / "deploy/healthcheck"


@pytest.fixture
def certificate(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", "/CN=standups.example", "-keyout", str(key),
                    "-out", str(cert)], capture_output=True, check=True, timeout=30)
    return str(cert), str(key)


def serving(tmp_path, *extra):
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", str(tmp_path / "data"),
         "--public-dir", str(ROOT / "public"), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = re.search(r"127\.0\.0\.1:(\d+)", process.stderr.readline()).group(1)
    return process, port


def check(port, **env):
    return subprocess.run([str(CHECK)], env={**os.environ, "STANDUPS_PORT": port, **env},
                          capture_output=True, timeout=30).returncode


def test_a_server_is_healthy_over_plain_http_and_not_once_stopped(tmp_path):
    process, port = serving(tmp_path)
    try:
        assert check(port) == 0
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert check(port) != 0


def test_a_server_serving_tls_is_checked_over_tls(tmp_path, certificate):
    cert, key = certificate
    process, port = serving(tmp_path, "--tls-cert", cert, "--tls-key", key)
    try:
        assert check(port, STANDUPS_TLS_CERT=cert) == 0
        # The same port asked in plain HTTP, as the check did before it knew of TLS: never healthy.
        assert check(port) != 0
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert check(port, STANDUPS_TLS_CERT=cert) != 0
