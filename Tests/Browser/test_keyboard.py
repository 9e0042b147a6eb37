"""Keyboard only, end to end: make a standup, run its meeting, take a note, save it, undo."""
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from conftest import collect_console_errors
from test_web_app import clock_reaches, text_in, wait


def tab_to(driver, selector, limit=40):
    """Presses Tab until the focus is on `selector` (fails if the keyboard cannot get there)."""
    for _ in range(limit):
        if driver.execute_script("return document.activeElement.matches(arguments[0])", selector):
            return driver.switch_to.active_element
        ActionChains(driver).send_keys(Keys.TAB).perform()
    raise AssertionError(f"Tab never reached {selector}")


def press(driver, *keys):
    ActionChains(driver).send_keys(*keys).perform()


def test_everything_works_from_the_keyboard(server, ana):
    ana.get(server)
    text_in(ana, "#status", "Live")
    tab_to(ana, "#new-standup")
    press(ana, Keys.ENTER)
    tab_to(ana, "input[name=title]")
    press(ana, "Keyboard")
    tab_to(ana, ".new-attendees input")
    press(ana, "Ana", Keys.ENTER, "Ben")  # Enter adds the next attendee
    tab_to(ana, "#new-form button.primary")
    press(ana, Keys.ENTER)
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".card")))
    # The form is gone: the keyboard is back on the button that opened it, not lost.
    wait(ana, lambda d: d.execute_script("return document.activeElement.id") == "new-standup")
    tab_to(ana, ".card")
    press(ana, Keys.ENTER)
    text_in(ana, ".room-title", "Keyboard")
    # The new screen starts at its heading.
    assert ana.execute_script("return document.activeElement.classList.contains('room-title')")

    tab_to(ana, ".start")
    press(ana, Keys.ENTER)
    text_in(ana, ".speaker", "Speaker 1 of 2: Ana")
    # The button pressed went with the screen it was on: the keyboard is at the new one's
    # heading, not nowhere.
    assert ana.execute_script("return document.activeElement.classList.contains('room-title')")
    tab_to(ana, "#note")
    press(ana, "Typed, not clicked", Keys.ENTER)
    text_in(ana, ".transcript", "Ana: Typed, not clicked")
    tab_to(ana, ".next")
    press(ana, Keys.SPACE)
    text_in(ana, ".speaker", "Speaker 2 of 2: Ben")
    tab_to(ana, ".end")
    press(ana, Keys.ENTER)
    wait(ana, EC.visibility_of_element_located((By.CSS_SELECTOR, ".end-alert")))
    # The dialog holds the focus: Tab reaches its buttons.
    tab_to(ana, ".end-alert .discard")
    press(ana, Keys.ENTER)
    text_in(ana, ".undo-bar", "You discarded the meeting.")
    tab_to(ana, ".undo-bar .undo")
    press(ana, Keys.ENTER)
    text_in(ana, ".speaker", "Speaker 2 of 2: Ben")
    # The bar went with the button pressed: the keyboard is in the meeting that came back.
    assert ana.execute_script("return document.activeElement.id") == "note"
    tab_to(ana, ".end")
    press(ana, Keys.ENTER)
    tab_to(ana, ".end-alert .save")
    press(ana, Keys.ENTER)
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".history details")))
    assert ana.execute_script("return document.activeElement.classList.contains('room-title')")
    tab_to(ana, ".history summary")
    press(ana, Keys.ENTER)
    text_in(ana, ".history .notes", "Ana: Typed, not clicked")

    # Delete, confirmed from the keyboard: the keyboard goes to Undo, which keeps the standup.
    tab_to(ana, ".delete")
    press(ana, Keys.ENTER)
    wait(ana, EC.visibility_of_element_located((By.CSS_SELECTOR, ".delete-alert")))
    tab_to(ana, ".delete-alert .confirm")
    press(ana, Keys.ENTER)
    text_in(ana, ".undo-bar", "You deleted this standup.")
    wait(ana, lambda d: d.execute_script("return document.activeElement.matches('.undo-bar .undo')"))
    press(ana, Keys.ENTER)
    wait(ana, lambda d: not d.find_element(By.CSS_SELECTOR, ".undo-bar").is_displayed())
    assert ana.execute_script("return document.activeElement.classList.contains('room-title')")
    text_in(ana, ".room-title", "Keyboard")
    assert collect_console_errors(ana) == []


def test_the_keyboard_stays_where_it_is_while_people_come_and_go(server, ana, ben):
    """At standup time everyone arrives at once: each arrival changes the lobby and the room.
    The keyboard stays on the lobby card it is on, and a past meeting opened in the room stays
    open with the keyboard on it, while people come and go."""
    from test_web_app import both_in_a_room, click, create_standup
    room = both_in_a_room(server, ana, ben)
    click(ana, ".start")
    click(ana, ".end")
    click(ana, ".end-alert .save")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".history details")))
    tab_to(ana, ".history summary")
    press(ana, Keys.ENTER)
    ana.execute_script("window.kept = document.activeElement")
    ben.get(server)
    text_in(ana, ".presence", "Ana (you)")
    wait(ana, lambda d: "Ben" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    ben.get(room)
    text_in(ana, ".presence", "Ben")
    assert ana.execute_script(
        "return document.activeElement === window.kept && window.kept.isConnected"
        " && window.kept.parentElement.open")
    # In the lobby, on the room's card, with another card beside it: Ben leaves the room and
    # comes back.
    create_standup(ana, server)
    tab_to(ana, f'.card[href="{room[room.index("#"):]}"]')
    ana.execute_script("window.kept = document.activeElement")
    ben.get(server)
    wait(ana, lambda d: all("Ben" not in live.text for live in d.find_elements(By.CSS_SELECTOR, ".live")))
    ben.get(room)
    wait(ana, lambda d: any("Ben" in live.text for live in d.find_elements(By.CSS_SELECTOR, ".live")))
    assert ana.execute_script("return document.activeElement === window.kept && window.kept.isConnected")
    # Ben deletes that standup: the keyboard goes to the card that takes its place, not to
    # the top of the page.
    click(ben, ".delete")
    click(ben, ".delete-alert .confirm")
    wait(ana, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".card")) == 1, timeout=20)
    assert ana.execute_script("return document.activeElement === document.querySelector('.card')")
    assert collect_console_errors(ana) == []


def test_resume_pressed_from_the_keyboard_leaves_it_on_next_speaker(server, ana):
    """The server restarted under a meeting: it waits, paused, for a Resume. Pressed from the
    keyboard, the button goes with its line, and the keyboard goes to Next speaker."""
    from conftest import start_again
    from test_web_app import click, create_standup
    room = create_standup(ana, server)
    ana.get(room)
    text_in(ana, ".presence", "Ana")
    click(ana, ".start")
    clock_reaches(ana, ".elapsed", lambda elapsed: elapsed >= 2, timeout=8)
    server.process.kill()
    server.process.wait(timeout=10)
    start_again(server)
    wait(ana, EC.visibility_of_element_located((By.CSS_SELECTOR, ".paused .resume")), timeout=20)
    tab_to(ana, ".paused .resume")
    press(ana, Keys.ENTER)
    wait(ana, lambda d: not d.find_element(By.CSS_SELECTOR, ".paused").is_displayed())
    assert ana.execute_script("return document.activeElement.classList.contains('next')")


def test_enter_on_finish_right_after_one_s_own_next_asks_again(server, ana, ben):
    """Enter pressed again as one's own Next brings the last speaker up lands on Finish: it
    asks for another press instead of asking everyone to end the meeting."""
    from test_web_app import both_in_a_room, click
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    text_in(ana, ".speaker", "Speaker 1 of 3")
    ana.find_element(By.CSS_SELECTOR, ".next").send_keys(Keys.ENTER)
    text_in(ana, ".speaker", "Speaker 2 of 3")
    # Pressing twice on purpose skips two: her second Next goes.
    ana.find_element(By.CSS_SELECTOR, ".next").send_keys(Keys.ENTER)
    text_in(ana, ".speaker", "Speaker 3 of 3")
    text_in(ana, ".next", "Finish")
    ana.find_element(By.CSS_SELECTOR, ".next").send_keys(Keys.ENTER)
    text_in(ana, ".toasts", "The last speaker just came up: press Finish again to end the meeting.")
    for driver in (ana, ben):
        assert not driver.find_element(By.CSS_SELECTOR, ".end-alert").get_attribute("open")
    ana.find_element(By.CSS_SELECTOR, ".next").send_keys(Keys.ENTER)
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".end-alert").get_attribute("open"))
