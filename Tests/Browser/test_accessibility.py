"""axe-core (axe-selenium-python) on every screen: no serious or critical violations."""
from axe_selenium_python import Axe
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import chromium
from test_web_app import both_in_a_room, click, text_in, wait
import pytest


@pytest.fixture
def stranger():
    driver = chromium("Eve")
    yield driver
    driver.quit()


def violations(driver):
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in results["violations"] if v["impact"] in ("serious", "critical")
    ]


def test_every_screen_passes_axe(server, ana, ben):
    found = {}
    ana.get(server)
    text_in(ana, "#status", "Live")
    found["lobby"] = violations(ana)
    both_in_a_room(server, ana, ben)
    found["detail"] = violations(ana)
    click(ana, ".edit")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    found["edit"] = violations(ana)
    click(ana, ".cancel-edit")
    click(ana, ".start")
    text_in(ana, ".speaker", "Speaker 1 of 3")
    found["meeting"] = violations(ana)
    click(ana, ".end")
    click(ana, ".end-alert .save")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".history details")))
    ana.find_element(By.CSS_SELECTOR, ".history summary").click()
    found["history"] = violations(ana)
    click(ana, ".delete")
    click(ana, ".delete-alert .confirm")
    text_in(ana, ".undo-bar", "You deleted this standup.")
    found["undo"] = violations(ana)
    assert {screen: problems for screen, problems in found.items() if problems} == {}


def test_the_sign_in_pages_pass_axe(server, stranger):
    stranger.get(server)
    text_in(stranger, ".signin h1", "Ask your team")
    assert violations(stranger) == []
    stranger.get(server.invite)
    wait(stranger, EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button")))
    assert violations(stranger) == []
