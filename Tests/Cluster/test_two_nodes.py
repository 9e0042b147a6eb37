"""A cluster of two nodes: deploy/haproxy.cfg names a node only once its address is given."""
import asyncio
import urllib.error
import urllib.request

import pytest

from cluster import Cluster
from test_cluster import create_standup


@pytest.fixture(scope="module")
def cluster():
    with Cluster(nodes=2) as running:
        yield running


def status_of(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def routed_to(cluster, path):
    """The node the proxy sends `path` to: the one whose count of sessions it grows."""
    def sessions():
        rows = cluster.proxy_command("show stat").splitlines()
        header = rows[0].lstrip("# ").split(",")
        return {row["svname"]: int(row["stot"]) for row in (dict(zip(header, r.split(","))) for r in rows[1:])
                if row.get("pxname") == "rooms" and row.get("svname") in ("a", "b")}
    before = sessions()
    assert status_of(cluster.url + path) == 200
    after = sessions()
    (node,) = [name for name in after if after[name] > before[name]]
    return node


def test_a_request_for_a_room_on_a_node_just_killed_is_answered_by_the_other(cluster):
    """Until HAProxy has taken a killed node out (two failed checks, a second or two), it sends
    that node's rooms there: each such request is refused, and tried again on another node
    (`retries 2`, `option redispatch 1`) — so no one sees an error. A proxy that named the dead
    node twice (as a third, `c`, as this fixture once did) would try it again under that name."""
    standups = [asyncio.run(create_standup(cluster.url, f"Retried {n}")) for n in range(12)]
    dying = cluster.nodes[1]
    theirs = [s for s in standups if routed_to(cluster, f"/api/rooms/{s}/meetings?limit=1") == dying.name]
    assert theirs, "the proxy hashed none of twelve rooms to the second node"
    # NB: its checks stop, so that the proxy keeps it up as in the moment before it would see.
    for backend in ("rooms", "any"):
        cluster.proxy_command(f"disable health {backend}/{dying.name}")
    dying.kill()
    answers = {s: status_of(f"{cluster.url}/api/rooms/{s}/meetings?limit=1") for s in standups}
    assert answers == {s: 200 for s in standups}, theirs
    # NB: "no check": up, unchecked — the proxy still sent the dead node its rooms first.
    assert cluster.proxy_states()[("rooms", dying.name)][1] == "no check"
