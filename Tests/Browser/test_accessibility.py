"""axe-core (axe-selenium-python) on every screen: no serious or critical violations."""
from axe_selenium_python import Axe
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from conftest import chromium, screenshot
from test_nothing_typed_is_lost import HOLD_RECONNECT
from test_web_app import both_in_a_room, click, create_standup, reconnecting, said, text_in, wait
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


# What a screen reader is told: the text each change puts into a live region, as it comes
# (what is hidden from it, by `aria-hidden` or by not being shown, left out).
LISTEN = """
  window.heard = [];
  const live = '[aria-live]:not([aria-live=off]), [role=status], [role=log], [role=alert]';
  const spoken = (node) => node.nodeType === Node.TEXT_NODE ? node.data
    : node.nodeType !== Node.ELEMENT_NODE || node.getAttribute('aria-hidden') === 'true'
      || getComputedStyle(node).display === 'none' ? ''
    : [...node.childNodes].map(spoken).join('');
  new MutationObserver((changes) => {
    for (const change of changes) {
      const at = change.target.nodeType === Node.ELEMENT_NODE ? change.target : change.target.parentElement;
      if (!at?.closest(live) || at.closest('[aria-hidden=true]')) continue;
      const text = (change.type === 'characterData' ? [change.target] : [...change.addedNodes])
        .map(spoken).join('').trim();
      if (text) window.heard.push(text);
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
"""


def heard(driver, *words):
    """What `driver`'s screen reader was told since `LISTEN`, of the lines that have any of `words`."""
    return [line for line in driver.execute_script("return window.heard")
            if any(word in line for word in words)]


def test_a_new_speaker_is_said_once_and_the_screen_s_connecting_not_at_all(server, ana, ben):
    """Who is up is said as the meeting starts; someone else's Next by its notice alone ("Ben
    moved on to Blob Jr"), not by the speaker line too; one's own Next by the speaker line.
    Opening a room says nothing of its connection ("Connecting…", "Live"); a drop is said,
    and so is being back."""
    create_standup(ana, server)
    ana.execute_script(LISTEN)
    click(ana, ".card")
    text_in(ana, ".presence", "Ana (you)")
    text_in(ana, "#status", "Live")
    ben.get(ana.current_url)
    text_in(ana, ".presence", "Ben")
    click(ana, ".start")
    text_in(ben, ".speaker", "Speaker 1 of 3")
    wait(ana, lambda d: heard(d, "Speaker") == ["Speaker 1 of 3: Blob"])
    # The note field says whose turn a note is for, to a screen reader too.
    assert ana.execute_script("""
        const note = document.getElementById('note');
        return [note.labels[0].textContent, document.getElementById(note.getAttribute('aria-describedby')).textContent];
        """) == ["Add a note", "for Blob's turn"]
    click(ben, ".next")
    said(ana, "Ben moved on to Blob Jr")
    text_in(ana, ".speaker", "Speaker 2 of 3")
    text_in(ana, "#note-for", "for Blob Jr's turn")
    # Ana's own Next: a press within a second of Ben's is asked again ("just came up").
    click(ana, ".next")
    wait(ana, lambda d: "Speaker 3 of 3" in d.find_element(By.CSS_SELECTOR, ".speaker").text
         or "press Next again" in " ".join(d.execute_script("return window.standupsToastLog")))
    if "Speaker 3 of 3" not in ana.find_element(By.CSS_SELECTOR, ".speaker").text:
        click(ana, ".next")
    text_in(ana, ".speaker", "Speaker 3 of 3")
    assert heard(ana, "Speaker", "moved on") == [
        "Speaker 1 of 3: Blob", "Ben moved on to Blob Jr.", "Speaker 3 of 3: Blob Sr"]
    assert heard(ana, "Live", "Connecting") == []
    ana.execute_script(HOLD_RECONNECT + "window.standupsConnection.socket.close();")
    reconnecting(ana)
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "#status", "Live")
    drop, back = heard(ana, "Live", "Connecting", "Reconnecting", "Retrying")
    assert drop.startswith("Retrying in ") and back == "Live"


def test_a_new_speaker_is_said_after_a_reconnect_that_brought_the_whole_room(server, ana, ben):
    """Ben's Next while Ana's connection was down, and a room that answers her reconnect with
    its whole state (not the patches she missed: it no longer has them, or restarted), shows
    no notice of it: then her meeting's own line says who is up."""
    both_in_a_room(server, ana, ben)
    ana.execute_script(LISTEN)
    click(ana, ".start")
    text_in(ben, ".speaker", "Speaker 1 of 3")
    wait(ana, lambda d: heard(d, "Speaker") == ["Speaker 1 of 3: Blob"])
    ana.execute_script(HOLD_RECONNECT + "window.standupsConnection.socket.close();")
    reconnecting(ana)
    click(ben, ".next")
    text_in(ben, ".speaker", "Speaker 2 of 3")
    # A version the room never issued: it answers with its whole state.
    ana.execute_script("window.standupsConnection.version = 999999999; window.mayReconnect = true")
    text_in(ana, ".speaker", "Speaker 2 of 3")
    text_in(ana, "#status", "Live")
    assert ana.execute_script("return window.standupsConnection.resumed") is not True
    assert heard(ana, "Speaker", "moved on") == ["Speaker 1 of 3: Blob", "Speaker 2 of 3: Blob Jr"]


def test_in_the_end_question_a_screen_reader_still_hears_the_connection_and_its_turn(server, ana, ben):
    """A modal dialog hides the rest of the page from a screen reader: while the question to end
    the meeting is up, a drop and being back are said in the dialog itself. A turn that is
    this person's is said as theirs, with its last seconds."""
    # Twenty attendees in 5 minutes: 15 s a turn, each in its last 15 s from its start; Ana first.
    ana.get(server)
    text_in(ana, "#status", "Live")
    standup = {"title": "Many", "duration": 300, "theme": "teal",
               "attendees": [{"name": "Ana"}] + [{"name": f"Person {n}"} for n in range(2, 21)]}
    ana.execute_script("return window.standupsConnection.send(arguments[0])",
                       {"type": "addStandupSubmitted", "standup": standup})
    ana.execute_script(LISTEN)
    click(ana, ".card")
    text_in(ana, ".presence", "Ana (you)")
    ben.get(ana.current_url)
    text_in(ana, ".presence", "Ben")
    click(ana, ".start")
    text_in(ana, ".speaker", "Speaker 1 of 20: Ana")
    wait(ana, lambda d: heard(d, "your turn") == ["Speaker 1 of 20: Ana, your turn", "0:15 left in your turn."]
         or len(heard(d, "your turn")) > 2)
    assert heard(ana, "your turn") == ["Speaker 1 of 20: Ana, your turn", "0:15 left in your turn."]
    click(ben, ".end")
    wait(ana, lambda d: d.execute_script("return document.querySelector('dialog:modal')?.className") == "end-alert")
    ana.execute_script(HOLD_RECONNECT + "window.standupsConnection.socket.close();")
    in_dialog = "return [...document.querySelectorAll('.end-alert .said > *')].map((line) => line.textContent)"
    wait(ana, lambda d: any(line.startswith("Retrying in ") for line in d.execute_script(in_dialog)))
    ana.execute_script("window.mayReconnect = true")
    wait(ana, lambda d: "Live" in d.execute_script(in_dialog))
    # Outside the dialog it is said as before, for when the dialog is gone.
    assert ana.find_element(By.ID, "status-said").get_attribute("textContent") == "Live"


def test_an_undo_is_said_once_without_its_button_and_a_notice_without_its_buttons(server, ana, ben):
    """The Undo bar's sentence is said as it shows, not again with each change in the room (Ben
    leaving), nor with its button's name; a notice is said without its buttons' names."""
    both_in_a_room(server, ana, ben)
    ana.execute_script(LISTEN)
    click(ben, ".start")
    text_in(ana, ".speaker", "Speaker 1 of 3")
    click(ben, ".end")
    click(ben, ".end-alert .discard")
    text_in(ana, ".undo-bar", "Ben discarded the meeting.")
    ben.get("about:blank")
    wait(ana, lambda d: "Ben" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    assert heard(ana, "discarded") == ["Ben discarded the meeting."]
    assert heard(ana, "Undo", "Dismiss") == []
    assert heard(ana, "started the meeting") == ["Ben started the meeting."]


def test_a_standup_added_is_said(server, ana):
    """Its card comes with no word, and the keyboard goes back to New standup: a screen reader
    is told it was added."""
    ana.get(server)
    text_in(ana, "#status", "Live")
    ana.execute_script(LISTEN)
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Retro")
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys("Blob")
    click(ana, "#new-form button.primary")
    wait(ana, lambda d: heard(d, "Added") == ["Added Retro."])
