"""A throwaway Standups cluster on loopback: PostgreSQL, nodes and HAProxy (deploy/haproxy.cfg).

The tests start one per module; `make cluster` runs this file, which starts one, prints its
URL and stops everything on Ctrl-C.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/debug/standups-server"
POSTGRES = ROOT / "scripts/throwaway-postgres"
HAPROXY_CONFIG = ROOT / "deploy/haproxy.cfg"
NAMES = ("a", "b", "c")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s: {what}")


def health(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return None, ""


class Node:
    def __init__(self, name, port, cluster):
        self.name, self.port, self.cluster = name, port, cluster
        self.process = None
        self.log = cluster.folder / f"node-{name}.log"

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        arguments = [
            str(self.cluster.server), "--port", str(self.port), "--database", self.cluster.database,
            "--data-dir", str(self.cluster.folder / f"data-{self.name}"),
            "--public-dir", str(ROOT / "public"), "--trusted-proxy", "127.0.0.1",
            "--public-url", self.cluster.url, *self.cluster.node_arguments]
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(
                arguments, stdout=subprocess.PIPE, stderr=log, text=True)
        wait_until(lambda: health(self.port)[0] == 200, 30, f"node {self.name} answers /healthz")
        return self

    def signal(self, number):
        self.process.send_signal(number)

    def kill(self):
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self, timeout=20):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log_text(self):
        return self.log.read_text(errors="replace")


class Cluster:
    """PostgreSQL, `nodes` Standups nodes and HAProxy in front, all on loopback."""

    def __init__(self, nodes=3, node_arguments=("--open",), server=SERVER):
        self.server = server
        self.folder = Path(tempfile.mkdtemp(prefix="standups-cluster-"))
        self.node_arguments = list(node_arguments)
        # NB: a folder of its own: PostgreSQL runs as its own user, who cannot enter ours.
        self.pg_folder = Path(tempfile.mkdtemp(prefix="standups-postgres-"))
        self.pg_port = free_port()
        self.proxy_port = free_port()
        self.url = f"http://127.0.0.1:{self.proxy_port}"
        self.nodes = [Node(name, free_port(), self) for name in NAMES[:nodes]]
        self.database = None
        self.haproxy = None

    def start(self):
        for tool in ("haproxy", "runuser"):
            if shutil.which(tool) is None:
                raise RuntimeError(f"{tool} is not installed (make test installs it)")
        started = subprocess.run(
            [str(POSTGRES), "start", str(self.pg_folder), str(self.pg_port)],
            capture_output=True, text=True, timeout=60)
        if started.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not start: {started.stderr}")
        self.database = started.stdout.strip().splitlines()[-1]
        for node in self.nodes:
            node.start()
        self.start_proxy()
        return self

    def start_proxy(self):
        # NB: deploy/haproxy.cfg names a node B and C only if their variables are set: a
        # smaller cluster leaves them out (one node named twice would fail a retry twice).
        environment = {key: value for key, value in os.environ.items()
                       if not key.startswith("STANDUPS_NODE_")}
        environment["STANDUPS_PROXY_BIND"] = f"127.0.0.1:{self.proxy_port}"
        for node in self.nodes:
            environment[f"STANDUPS_NODE_{node.name.upper()}"] = f"127.0.0.1:{node.port}"
        # A second file adds what only the tests want: a socket to ask HAProxy what it sees.
        stats = self.folder / "haproxy-stats.cfg"
        stats.write_text(f"global\n  stats socket {self.folder / 'haproxy.sock'} mode 600 level admin\n")
        self.haproxy = subprocess.Popen(
            ["haproxy", "-db", "-f", str(HAPROXY_CONFIG), "-f", str(stats)], env=environment,
            stdout=subprocess.DEVNULL, stderr=open(self.folder / "haproxy.log", "a"))
        wait_until(lambda: health(self.proxy_port)[0] == 200, 15, "HAProxy answers /healthz")
        self.wait_until_routed()

    def proxy_states(self):
        """HAProxy's view of each node: {(backend, server): (port, status)}, status as its
        stats say it ("UP", "DOWN", "UP 1/2", "MAINT", …)."""
        lines = self.proxy_command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        states = {}
        for line in lines[1:]:
            row = dict(zip(header, line.split(",")))
            if row.get("svname") in NAMES:
                port = int(row["addr"].rsplit(":", 1)[1]) if row.get("addr") else None
                states[(row["pxname"], row["svname"])] = (port, row["status"])
        return states

    def proxy_command(self, command):
        """Says `command` on HAProxy's stats socket (its runtime API); returns its answer."""
        with socket.socket(socket.AF_UNIX) as stats:
            stats.settimeout(5)
            stats.connect(str(self.folder / "haproxy.sock"))
            stats.sendall(command.encode() + b"\n")
            answer = b""
            while chunk := stats.recv(65536):
                answer += chunk
        return answer.decode()

    def wait_until_routed(self, timeout=20):
        """Waits until HAProxy routes to every node that runs (and only to them). The rooms
        backend hashes each id over the nodes HAProxy has up: a node it still holds down (its
        checks come every second) would take its rooms when it is up again, so a test that
        needs a room to stay where the proxy sent its first person starts from here."""
        def settled():
            running = {n.port for n in self.nodes if n.process and n.process.poll() is None}
            states = self.proxy_states()
            # NB: a node stopped is settled once down ("UP 1/2" is one still routed to).
            return all(status == "UP" if port in running else status.startswith(("DOWN", "MAINT"))
                       for port, status in states.values())
        try:
            wait_until(settled, timeout, "HAProxy routes to every running node")
        except AssertionError as error:
            raise AssertionError(f"{error}: {self.proxy_states()}\n{self.proxy_log()}") from None

    def proxy_log(self):
        """What HAProxy said (nodes taken out and back), for a failing test's message."""
        return (self.folder / "haproxy.log").read_text(errors="replace")[-4000:]

    def command(self, *arguments):
        """`standups-server …` (invite, bots) against the cluster's database."""
        return subprocess.run(
            [str(SERVER), *arguments, "--database", self.database], capture_output=True,
            text=True, timeout=30)

    def psql(self, sql):
        port = self.database.split(":")[-1].split("/")[0]
        return subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", port, "-U", "standups", "-d", "standups", "-At",
             "-c", sql], capture_output=True, text=True, timeout=30, check=True).stdout

    def stop(self):
        if self.haproxy:
            self.haproxy.terminate()
            self.haproxy.wait(timeout=10)
        for node in self.nodes:
            if node.process and node.process.poll() is None:
                # NB: a frozen node cannot act on SIGTERM.
                node.process.send_signal(signal.SIGCONT)
            node.stop()
        subprocess.run([str(POSTGRES), "stop", str(self.pg_folder)], timeout=60)
        # NB: STANDUPS_KEEP_CLUSTER=1 keeps the nodes' logs and data to read after a failure.
        if os.environ.get("STANDUPS_KEEP_CLUSTER"):
            print(f"The cluster's logs and data are kept in {self.folder}", file=sys.stderr)
        else:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exception):
        self.stop()


def main():
    # NB: SIGTERM stops it as Ctrl-C does, and so does SIGINT when a shell that started this
    # in the background had set it to be ignored.
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, stop_on)
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    open_mode = "--open" in sys.argv
    cluster = Cluster(nodes=size, node_arguments=["--open"] if open_mode else ["--print-invite"])
    print(f"Starting PostgreSQL, {size} nodes and HAProxy on loopback…", flush=True)
    with cluster:
        print(f"\nStandups cluster: {cluster.url}/")
        if not open_mode:
            invite = cluster.nodes[0].process.stdout.readline()
            link = re.search(r"/join#(\S+)", invite)
            if link:
                print(f"Invite link: {cluster.url}/join#{link.group(1)}")
        for node in cluster.nodes:
            print(f"  node {node.name}: {node.url}  (log: {node.log})")
        print(f"  PostgreSQL: {cluster.database}")
        print(f"  HAProxy's log (nodes taken out and back): {cluster.folder / 'haproxy.log'}")
        print("Ctrl-C (or SIGTERM) stops it all.", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            print("\nStopping…")


def stop_on(number, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()
