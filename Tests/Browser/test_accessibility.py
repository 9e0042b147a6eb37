"""axe-core (axe-selenium-python) on every screen: no serious or critical violations."""
from axe_selenium_python import Axe
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from conftest import chromium, screenshot
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


def axe_on_every_screen(server, ana, ben, shots=None):
    """axe's serious and critical findings on each screen of a standup's life, by screen
    (`shots`: a prefix for screenshots of the meeting and the room after it)."""
    found = {}
    ana.get(server)
    text_in(ana, "#status", "Live")
    found["lobby"] = violations(ana)
    both_in_a_room(server, ana, ben)
    found["detail"] = violations(ana)
    click(ana, ".edit")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    found["edit"] = violations(ana)
    # A save refused for a field: the reason under it reads, in light and dark alike.
    ana.find_element(By.CSS_SELECTOR, ".edit-form .title").send_keys(Keys.CONTROL, "a", Keys.DELETE)
    click(ana, ".save-edit")
    text_in(ana, ".edit-form .field-error", "A standup needs a title.")
    found["edit refused"] = violations(ana)
    click(ana, ".cancel-edit")
    click(ana, ".start")
    text_in(ana, ".speaker", "Speaker 1 of 3")
    found["meeting"] = violations(ana)
    if shots:
        screenshot(ana, f"{shots}-meeting")
    click(ana, ".end")
    found["end alert"] = violations(ana)
    click(ana, ".end-alert .save")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".history details")))
    click(ana, ".history summary")
    found["history"] = violations(ana)
    if shots:
        screenshot(ana, f"{shots}-room")
    click(ana, ".delete")
    click(ana, ".delete-alert .confirm")
    text_in(ana, ".undo-bar", "You deleted this standup.")
    found["undo"] = violations(ana)
    return {screen: problems for screen, problems in found.items() if problems}


def test_every_screen_passes_axe(server, ana, ben):
    assert axe_on_every_screen(server, ana, ben) == {}


def test_every_screen_passes_axe_in_dark_mode(server, ana, ben):
    """With the system in dark mode the page is dark, and every text still reads (axe's
    colour contrast is a serious finding)."""
    dark = {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    for driver in (ana, ben):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", dark)
    problems = axe_on_every_screen(server, ana, ben, shots="dark")
    colours = ana.execute_script("""
        const page = getComputedStyle(document.body.parentElement);
        return [matchMedia('(prefers-color-scheme: dark)').matches, page.backgroundColor, page.color];""")
    assert colours == [True, "rgb(19, 19, 22)", "rgb(236, 236, 241)"]
    assert problems == {}


def test_the_sign_in_pages_pass_axe(server, stranger):
    stranger.get(server)
    text_in(stranger, ".signin h1", "Ask your team")
    assert violations(stranger) == []
    stranger.get(server.invite)
    wait(stranger, EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button")))
    assert violations(stranger) == []


def test_on_a_phone_every_control_is_a_finger_s_size_and_the_length_is_said_in_minutes(server, ana):
    """On a phone, every button and theme a person taps is 44 px or more each way (WCAG
    2.5.5); the length slider says "5 minutes" to a screen reader, not "5"."""
    from conftest import resize
    resize(ana, "phone")
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    small = ana.execute_script("""
        return [...document.querySelectorAll('button, .swatch')]
          .filter((element) => element.offsetParent !== null)
          .map((element) => [element.className || element.textContent.trim(), element.getBoundingClientRect()])
          .filter(([, box]) => box.width < 44 || box.height < 44)
          .map(([name, box]) => `${name}: ${Math.round(box.width)}×${Math.round(box.height)}`);""")
    assert small == []
    slider = ana.find_element(By.NAME, "minutes")
    assert slider.get_attribute("aria-valuetext") == "5 minutes"
    slider.send_keys(Keys.ARROW_RIGHT)
    assert slider.get_attribute("aria-valuetext") == "6 minutes"
