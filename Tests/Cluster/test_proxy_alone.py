"""deploy/haproxy.cfg with no node to answer: what a browser opening the app gets."""
import json
import os
import subprocess
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cluster import HAPROXY_CONFIG, free_port, wait_until


def answer(url, body=None):
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
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
        # A bot or a page calling the API is answered as the nodes answer: JSON it can read,
        # saying nothing happened (whether or not the path goes to a room's node).
        for path, body in [("/api/standups", None), ("/api/session", b"{}"),
                           ("/api/rooms/5eed0000-0000-4000-8000-00000000dead/actions", b"{}")]:
            status, headers, text = answer(f"http://127.0.0.1:{port}{path}", body)
            assert (status, headers["content-type"], headers["retry-after"]) == (503, "application/json", "1"), \
                (path, status, headers)
            assert json.loads(text)["code"] == "room_moving", (path, text)
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)


class HealthyButDropping(BaseHTTPRequestHandler):
    """A node that passes its health checks and goes away as it answers anything else (a
    node killed with a request in flight)."""

    def do_GET(self):
        if self.path == "/healthz":
            body = b"ok"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.close_connection = True

    do_POST = do_GET

    def log_message(self, *arguments):
        pass


def test_a_call_whose_node_goes_away_as_it_answers_is_said_in_json_as_maybe_done():
    node = ThreadingHTTPServer(("127.0.0.1", 0), HealthyButDropping)
    threading.Thread(target=node.serve_forever, daemon=True).start()
    port = free_port()
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("STANDUPS_")}
    environment.update(STANDUPS_PROXY_BIND=f"127.0.0.1:{port}",
                       STANDUPS_NODE_A=f"127.0.0.1:{node.server_address[1]}")
    proxy = subprocess.Popen(["haproxy", "-db", "-f", str(HAPROXY_CONFIG)], env=environment,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for path in ["/api/rooms/5eed0000-0000-4000-8000-00000000dead/actions"]:
            status, headers, text = wait_until(
                lambda: (lambda got: got if got[0] == 502 else None)(
                    answer(f"http://127.0.0.1:{port}{path}", b'{"type":"meeting.noteSubmitted"}')),
                15, f"HAProxy answers for {path}")
            assert headers["content-type"] == "application/json", headers
            assert json.loads(text)["code"] == "outcome_unknown", text
        # A page a browser opens keeps HAProxy's own page, not JSON meant for a program.
        status, headers, _ = answer(f"http://127.0.0.1:{port}/")
        assert status == 502 and headers["content-type"].startswith("text/html"), (status, headers)
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        node.shutdown()
