"""The web app in a cluster: the node serving the room is killed with a meeting running; the
page reconnects by itself through HAProxy to the node that takes the room over, and shows the
meeting where it was."""
import sys
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Cluster"))
from cluster import Cluster  # noqa: E402
from test_cluster import owner_of  # noqa: E402

from conftest import chromium, collect_console_errors  # noqa: E402
from test_web_app import click, clock_reaches, create_standup, seconds, text_in, wait  # noqa: E402


@pytest.fixture
def cluster():
    with Cluster(nodes=2) as running:
        yield running


def test_the_page_follows_its_room_to_another_node_when_one_dies(cluster):
    ana = chromium("Ana")
    try:
        room = create_standup(ana, cluster.url + "/")
        standup = room.rstrip("/").split("/")[-1]
        ana.get(room)
        click(ana, ".start")
        text_in(ana, ".speaker", "Speaker 1 of 3: Blob")
        owner = owner_of(cluster, standup)
        clock_reaches(ana, ".turn-left", lambda left: left <= 98)
        # NB: read just before the kill: the clock runs on until then.
        shown = ana.find_element(By.CSS_SELECTOR, ".turn-left").text
        killed = time.monotonic()
        owner.kill()
        # Back by itself, on the other node: live again, the meeting paused where it was.
        text_in(ana, "body", "Paused: the server restarted.", timeout=10)
        text_in(ana, "#status", "Live", timeout=10)
        assert time.monotonic() - killed < 10
        left = ana.find_element(By.CSS_SELECTOR, ".turn-left").text
        assert abs(seconds(left) - seconds(shown)) <= 2, (shown, left)
        # Anyone resumes it, there.
        click(ana, ".resume")
        wait(ana, lambda d: seconds(d.find_element(By.CSS_SELECTOR, ".turn-left").text) < seconds(left))
        assert owner_of(cluster, standup) is not owner
        assert [e for e in collect_console_errors(ana) if "WebSocket" not in e["message"]] == []
    finally:
        ana.quit()
