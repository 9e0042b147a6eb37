"""Typing on before the room answers (a slow network): the next keys go where the person
looks, and the answer, when it comes, takes nothing typed since."""
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from conftest import collect_console_errors
from test_nothing_typed_is_lost import HOLD_RECONNECT, ben_ends_as_ana_types, toast_says, toasts
from test_web_app import both_in_a_room, click, reconnecting, text_in, wait

# Everything the room sends this page waits until `releaseAnswers()`; then it comes one
# message per task, as from a network (an answer's promise settles before the next message).
# `dropAnswers()` throws what was held away, as a connection that dropped does.
HOLD_ANSWERS = """
    {
      const connection = window.standupsConnection;
      const receive = connection.receive.bind(connection);
      const held = [];
      let holding = true;
      connection.receive = (message) => holding ? held.push(message) : receive(message);
      window.releaseAnswers = () => {
        holding = false;
        const next = () => {
          const message = held.shift();
          if (!message) return;
          receive(message);
          setTimeout(next, 0);
        };
        next();
      };
      // Lost with the connection: the answers held are never read.
      window.dropAnswers = () => {
        holding = false;
        held.length = 0;
      };
    }
"""


def values(driver, selector):
    return [field.get_attribute("value") for field in driver.find_elements(By.CSS_SELECTOR, selector)]


def in_a_meeting(server, ana, ben):
    """Ana starts a meeting with Ben in the room; returns her note field."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    return wait(ana, EC.element_to_be_clickable((By.ID, "note")))


def adding_with_answers_held(server, ana, ben):
    """Ana opens the edit form, holds the room's answers and presses Add attendee."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    add = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .add-attendee")))
    ana.execute_script(HOLD_ANSWERS)
    add.click()


def test_a_note_typed_on_while_the_last_is_on_its_way_keeps_its_keys(server, ana, ben):
    """Enter, then straight on into the next note before the room answers: the answer takes
    from the field only the note it answers, and a second Enter meanwhile sends only what
    was typed after the first."""
    note = in_a_meeting(server, ana, ben)
    ana.execute_script(HOLD_ANSWERS)
    note.send_keys("first note" + Keys.ENTER)
    # The page put a space after the note on its way: the next one starts there.
    assert note.get_attribute("value") == "first note "
    note.send_keys("second" + Keys.ENTER)
    note.send_keys("thi")
    text_in(ben, ".transcript", "Ana: second")
    ana.execute_script("window.releaseAnswers()")
    wait(ana, lambda d: note.get_attribute("value") == "thi")
    note.send_keys("rd" + Keys.ENTER)
    text_in(ben, ".transcript", "Ana: third")
    wait(ana, lambda d: note.get_attribute("value") == "")
    lines = [line for line in ben.find_element(By.CSS_SELECTOR, ".transcript").text.splitlines()
             if line.startswith("Ana: ")]
    assert lines == ["Ana: first note", "Ana: second", "Ana: third"]
    assert toasts(ana) == []
    assert collect_console_errors(ana) == []


def test_a_note_s_answer_waits_for_an_input_method_to_finish(server, ana, ben):
    """The answer to a meeting's note comes while an input method composes in the note field
    (most typing on a phone): the note leaves the field only once the composition ends, and
    what was typed after it stays."""
    note = in_a_meeting(server, ana, ben)
    ana.execute_script(HOLD_ANSWERS)
    note.send_keys("first" + Keys.ENTER)
    note.send_keys("and")
    text_in(ben, ".transcript", "Ana: first")
    ana.execute_script("document.getElementById('note').dispatchEvent(new CompositionEvent('compositionstart'));"
                       "window.releaseAnswers()")
    # NB: the answer is in once the page's history of the note says so; the field waits.
    wait(ana, lambda d: d.execute_script("return window.standupsConnection.pending.size") == 0)
    assert note.get_attribute("value") == "first and"
    ana.execute_script("document.getElementById('note').dispatchEvent(new CompositionEvent('compositionend'))")
    wait(ana, lambda d: note.get_attribute("value") == "and")
    assert toasts(ana) == []
    assert collect_console_errors(ana) == []


def test_a_new_attendee_takes_the_keyboard_before_the_room_answers(server, ana, ben):
    """Add attendee, and Enter in an attendee's name, give a row and the keyboard at once:
    what is typed before the room's answer goes into the new attendee, not into the one
    before it or nowhere."""
    adding_with_answers_held(server, ana, ben)
    ana.switch_to.active_element.send_keys("Dee")
    assert ana.switch_to.active_element.get_attribute("aria-label") == "Attendee 4 name"
    ana.switch_to.active_element.send_keys(Keys.ENTER + "Hal")
    assert ana.switch_to.active_element.get_attribute("aria-label") == "Attendee 5 name"
    ana.execute_script("window.releaseAnswers()")
    expected = ["Blob", "Blob Jr", "Blob Sr", "Dee", "Hal"]
    for driver in (ana, ben):
        wait(driver, lambda d: values(d, ".attendees input") == expected)
    # The keyboard is still where the person typed, in the room's own row for Hal.
    active = ana.switch_to.active_element
    assert active.get_attribute("value") == "Hal"
    assert active.get_attribute("data-path").startswith("/attendees/")
    active.send_keys("!")
    wait(ben, lambda d: values(d, ".attendees input") == [*expected[:4], "Hal!"])
    click(ana, ".save-edit")
    for driver in (ana, ben):
        wait(driver, lambda d: [li.text for li in d.find_elements(By.CSS_SELECTOR, ".attendee-list li")]
             == [*expected[:4], "Hal!"])
    assert toasts(ana) == []
    assert collect_console_errors(ana) == []


def test_save_pressed_before_the_room_answers_an_add_saves_what_was_typed_in_it(server, ana, ben):
    adding_with_answers_held(server, ana, ben)
    ana.switch_to.active_element.send_keys("Zed")
    click(ana, ".save-edit")
    ana.execute_script("window.releaseAnswers()")
    for driver in (ana, ben):
        wait(driver, lambda d: [li.text for li in d.find_elements(By.CSS_SELECTOR, ".attendee-list li")]
             == ["Blob", "Blob Jr", "Blob Sr", "Zed"])
    assert toasts(ana) == []
    assert collect_console_errors(ana) == []


def typed_on_then_back(ana, ben, note, says):
    """Ana types on while her page is away, then is back: the page `says` what arrived, and
    only what she typed since stays in the field, to be sent."""
    note.send_keys(" three")
    ana.execute_script("window.mayReconnect = true")
    toast_says(ana, says)
    wait(ana, lambda d: note.get_attribute("value") == "three")
    note.send_keys(Keys.ENTER)
    text_in(ben, ".transcript", "Ana: three")


def test_a_note_whose_answer_a_drop_lost_goes_from_the_field_before_what_was_typed_on(server, ana, ben):
    """The note reached the room, its answer went with the connection, and the person typed on
    before the page was back: back in the room, the note goes from the field (said so), and
    what was typed after it stays, to be sent on its own."""
    note = in_a_meeting(server, ana, ben)
    ana.execute_script(HOLD_RECONNECT)
    note.send_keys("one two")
    ana.execute_script("document.querySelector('.note-form').requestSubmit();"
                       "window.standupsConnection.socket.close()")
    text_in(ben, ".transcript", "Ana: one two")
    typed_on_then_back(ana, ben, note, "Your note got into the meeting, though the connection dropped.")
    transcript = ben.find_element(By.CSS_SELECTOR, ".transcript").text
    assert transcript.count("one two") == 1, transcript
    assert collect_console_errors(ana) == []


def test_two_notes_a_silent_drop_swallowed_are_sent_again_as_two(server, ana, ben):
    """The network goes quiet (nothing closes) while Ana adds a note and types the next: neither
    reaches the room. Back in the room, the page sees the room lacks both and sends them again
    by themselves, as the two notes they were — never run into one, never twice."""
    note = in_a_meeting(server, ana, ben)
    ana.execute_script(HOLD_RECONNECT)
    ana.execute_script("window.standupsConnection.socket.send = () => {}")
    note.send_keys("first note" + Keys.ENTER + "second note" + Keys.ENTER)
    ana.execute_script("window.standupsConnection.socket.close()")
    toast_says(ana, "The connection dropped.")
    assert note.get_attribute("value") == "first note second note "
    assert "first note" not in ben.find_element(By.CSS_SELECTOR, ".transcript").text
    ana.execute_script("window.mayReconnect = true")
    text_in(ben, ".transcript", "Ana: second note")
    wait(ana, lambda d: note.get_attribute("value") == "")
    lines = [line for line in ben.find_element(By.CSS_SELECTOR, ".transcript").text.splitlines()
             if line.startswith("Ana: ")]
    assert lines == ["Ana: first note", "Ana: second note"]
    # NB: and nothing is left to send: Enter on the empty field adds nothing.
    wait(ana, lambda d: d.execute_script(
        "return window.standupsConnection.pending.size === 0 && !Object.keys(sessionStorage)"
        ".some((key) => key.startsWith('standups.notesAhead.'))"))


def test_two_notes_whose_answers_a_drop_lost_each_go_from_the_field_once(server, ana, ben):
    note = in_a_meeting(server, ana, ben)
    ana.execute_script(HOLD_RECONNECT)
    ana.execute_script(HOLD_ANSWERS)
    note.send_keys("one" + Keys.ENTER + " two" + Keys.ENTER)
    text_in(ben, ".transcript", "Ana: two")
    ana.execute_script("window.dropAnswers(); window.standupsConnection.socket.close()")
    typed_on_then_back(ana, ben, note, "Your notes got into the meeting, though the connection dropped.")
    lines = [line for line in ben.find_element(By.CSS_SELECTOR, ".transcript").text.splitlines()
             if line.startswith("Ana: ")]
    assert lines == ["Ana: one", "Ana: two", "Ana: three"]
    assert collect_console_errors(ana) == []


def test_typing_in_a_new_row_whose_answer_a_drop_lost_is_offered_back(server, ana, ben):
    adding_with_answers_held(server, ana, ben)
    ana.switch_to.active_element.send_keys("Zed")
    ana.execute_script("window.dropAnswers(); window.standupsConnection.socket.close()")
    toast_says(ana, "Your typing had no new attendee to go in: “Zed” (a new attendee).")
    text_in(ana, "#status", "Live")
    click(ana, ".toast .edit-again")
    # The add itself reached the room before the drop: its row stays, empty, to remove.
    for driver in (ana, ben):
        wait(driver, lambda d: values(d, ".attendees input") == ["Blob", "Blob Jr", "Blob Sr", "", "Zed"])
    assert ana.switch_to.active_element.get_attribute("value") == "Zed"
    assert collect_console_errors(ana) == []


def test_a_late_note_typed_on_while_it_is_on_its_way_keeps_the_keys(server, ana, ben):
    """Ana adds a late note and types on before the room answers: the answer takes the note
    from the field, not what she typed after it."""
    ben_ends_as_ana_types(server, ana, ben, "Half", ".save")
    late = wait(ana, EC.element_to_be_clickable((By.ID, "late-note")))
    wait(ana, lambda d: late.get_attribute("value") == "Half")
    ana.execute_script(HOLD_ANSWERS)
    late.send_keys(Keys.ENTER)
    late.send_keys(" and the rest")
    ana.execute_script("window.releaseAnswers()")
    toast_says(ana, "Your note was added to the meeting that ended; the field keeps what you typed after it.")
    assert late.get_attribute("value") == "and the rest"
    assert late.is_displayed()
    notes = """return [...document.querySelectorAll('.history > li:first-child details li')]
        .map((line) => line.textContent);"""
    wait(ben, lambda d: d.execute_script(notes) == ["Ana: Half"])
    assert collect_console_errors(ana) == []


def test_a_late_note_whose_answer_a_drop_lost_is_not_offered_again_after_a_reload(server, ana, ben):
    """The connection drops before a late note's answer, and Ana reloads before the page is
    back: the reloaded page finds the note in the meeting and says so, rather than offering
    it to be added twice."""
    ben_ends_as_ana_types(server, ana, ben, "Only once", ".save")
    late = wait(ana, EC.element_to_be_clickable((By.ID, "late-note")))
    wait(ana, lambda d: late.get_attribute("value") == "Only once")
    ana.execute_script(HOLD_RECONNECT)
    ana.execute_script(HOLD_ANSWERS)
    late.send_keys(Keys.ENTER)
    notes = """return [...document.querySelectorAll('.history > li:first-child details li')]
        .map((line) => line.textContent);"""
    wait(ben, lambda d: d.execute_script(notes) == ["Ana: Only once"])
    ana.execute_script("window.dropAnswers(); window.standupsConnection.socket.close()")
    toast_says(ana, "The connection dropped.")
    ana.refresh()
    toast_says(ana, "Your note got into the meeting that ended, though the connection dropped.")
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    assert ana.execute_script(
        "return Object.keys(sessionStorage).filter((key) => key.startsWith('standups.lateNote'))"
        ".map((key) => JSON.parse(sessionStorage.getItem(key))).filter(Boolean)") == []
    assert collect_console_errors(ana) == []


def test_a_new_standup_submitted_twice_before_the_answer_is_made_once(server, ana):
    """Ana presses Enter twice in the new standup's title on a slow network: one standup."""
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Once")
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys("Blob")
    ana.execute_script(HOLD_ANSWERS)
    ana.find_element(By.NAME, "title").send_keys(Keys.ENTER)
    ana.find_element(By.NAME, "title").send_keys(Keys.ENTER)
    ana.execute_script("window.releaseAnswers()")
    text_in(ana, ".card", "Once")
    wait(ana, lambda d: not d.find_element(By.ID, "new-form").is_displayed())
    # Another page sees what the server holds: one.
    ana.refresh()
    text_in(ana, ".card", "Once")
    assert [card.text.splitlines()[0] for card in ana.find_elements(By.CSS_SELECTOR, ".card")] == ["Once"]
    assert collect_console_errors(ana) == []


def test_a_late_note_s_answer_waits_for_an_input_method_to_finish(server, ana, ben):
    """The answer to a late note comes while an input method composes in its field (most
    typing on a phone): nothing is written into the field until the composition ends."""
    ben_ends_as_ana_types(server, ana, ben, "Half", ".save")
    late = wait(ana, EC.element_to_be_clickable((By.ID, "late-note")))
    wait(ana, lambda d: late.get_attribute("value") == "Half")
    ana.execute_script(HOLD_ANSWERS)
    late.send_keys(Keys.ENTER)
    late.send_keys(" and")
    ana.execute_script("document.getElementById('late-note').dispatchEvent(new CompositionEvent('compositionstart'));"
                       "window.releaseAnswers()")
    notes = """return [...document.querySelectorAll('.history > li:first-child details li')]
        .map((line) => line.textContent);"""
    wait(ana, lambda d: d.execute_script(notes) == ["Ana: Half"])
    assert late.get_attribute("value") == "Half and"
    ana.execute_script("document.getElementById('late-note').dispatchEvent(new CompositionEvent('compositionend'))")
    wait(ana, lambda d: late.get_attribute("value") == "and")
    toast_says(ana, "Your note was added to the meeting that ended; the field keeps what you typed after it.")


def test_a_new_standup_whose_answer_a_drop_lost_is_still_said_maybe_made_after_a_reload(server, ana):
    """Add reached the server, its answer went with the connection: the form says the standup
    may have been made, and says it again after a reload (the typing kept with it)."""
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Planning")
    ana.execute_script(HOLD_ANSWERS)
    ana.execute_script("document.getElementById('new-form').requestSubmit();"
                       "window.dropAnswers(); window.standupsConnection.socket.close()")
    text_in(ana, "#new-form .form-error", "may have been made")
    ana.refresh()
    text_in(ana, "#status", "Live")
    text_in(ana, "#new-form .form-error", "may have been made")
    assert ana.find_element(By.NAME, "title").get_attribute("value") == "Planning"
    assert collect_console_errors(ana) == []


def test_a_note_entered_while_offline_stays_and_says_how_to_send_it(server, ana, ben):
    """Enter while the page is reconnecting: the note never left. It stays in its field, and
    the page says so and what to do (not only "try again"); Enter once Live adds it, once."""
    note = in_a_meeting(server, ana, ben)
    ana.execute_script(HOLD_RECONNECT + "window.standupsConnection.socket.close();")
    reconnecting(ana)
    note.send_keys("typed offline" + Keys.ENTER)
    toast_says(ana, "Not connected: your note stays in its field. Press Enter again once the page says Live.")
    assert note.get_attribute("value").strip() == "typed offline"
    # The meeting's notes, none yet, say where it is (not only "No notes yet.").
    text_in(ana, ".transcript", "No notes yet: yours is still in its field.")
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "#status", "Live")
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    note.send_keys(Keys.END, Keys.ENTER)
    text_in(ben, ".transcript", "Ana: typed offline")
    wait(ana, lambda d: d.find_element(By.ID, "note").get_attribute("value") == "")
    assert ben.find_element(By.CSS_SELECTOR, ".transcript").text.count("typed offline") == 1
