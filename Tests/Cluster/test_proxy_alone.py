"""deploy/haproxy.cfg with no node to answer: what a browser opening the app gets."""
import os
import subprocess
import urllib.error
import urllib.request

from cluster import HAPROXY_CONFIG, free_port, wait_until


def answer(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()
    except urllib.error.URLError:
        return None, {}, ""  # not listening yet


def test_with_no_node_to_answer_a_page_says_so_and_tries_again():
    # The only node's address has nobody listening (a node down, the database away: every
    # node taken out): the app's page says what is happening and reloads itself, rather than
    # HAProxy's bare "503 Service Unavailable".
    port = free_port()
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("STANDUPS_")}
    environment.update(STANDUPS_PROXY_BIND=f"127.0.0.1:{port}", STANDUPS_NODE_A=f"127.0.0.1:{free_port()}")
    proxy = subprocess.Popen(["haproxy", "-db", "-f", str(HAPROXY_CONFIG)], env=environment,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        status, headers, body = wait_until(
            lambda: (lambda got: got if got[0] == 503 else None)(answer(f"http://127.0.0.1:{port}/")),
            15, "HAProxy answers with no node")
        assert headers["content-type"] == "text/html; charset=utf-8", headers
        assert headers["retry-after"] == "5", headers
        assert "<title>Standups is back in a moment</title>" in body, body
        assert '<meta http-equiv=refresh content=5>' in body, body
        assert "This page tries again every 5 seconds" in body, body
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
