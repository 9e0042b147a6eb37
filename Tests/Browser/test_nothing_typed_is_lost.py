"""What a person typed is what is saved, in real Chromium, typing as fast as a person can."""
import re
import threading

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from conftest import chromium, collect_console_errors, errors_beside_refused_connections, resize, screenshot, start_again
from test_web_app import both_in_a_room, click, reconnecting, text_in, wait


def toasts(driver):
    # NB: read in one script: a toast that times out between finding it and reading it would
    # be a stale element, which a wait does not try again.
    return driver.execute_script("return [...document.querySelectorAll('.toast')].map((toast) => toast.innerText)")


def toast_says(driver, text):
    wait(driver, lambda d: any(text in toast for toast in toasts(d)))


def both_editing(server, ana, ben):
    """Ana opens the edit form; returns the title field on each page."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    return (wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title"))),
            wait(ben, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title"))))


def close_right_after(driver, kind):
    """The page's socket closes right behind the next message of `kind` it sends: the server
    reads it, then the close; its answer has nowhere to go."""
    driver.execute_script("""
        const kind = arguments[0];
        const socket = window.standupsConnection.socket;
        const send = socket.send.bind(socket);
        socket.send = (data) => { send(data); if (data.includes(kind)) socket.close(); };""", kind)


# The page's connection comes back after a drop only once the test sets `mayReconnect`.
HOLD_RECONNECT = """
    {
      const connection = window.standupsConnection;
      const open = connection.open.bind(connection);
      window.mayReconnect = false;
      connection.open = () => window.mayReconnect ? open() : setTimeout(() => connection.open(), 50);
    }
"""


# The keyboard is in the room's own row for a new attendee (not in the row the page showed
# until the room answered, which it replaces): read in the page at once, never stale.
NEW_ROW_FOCUSED = """
    const field = document.activeElement;
    return field?.getAttribute("aria-label") === arguments[0] && field.hasAttribute("data-path");
"""


def test_save_right_after_typing_saves_what_was_typed(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    title.send_keys(Keys.CONTROL, "a")
    # Typed and saved in one go: no pause for the typing to be sent on its own.
    title.send_keys("Planning" + Keys.ENTER)
    for driver in (ana, ben):
        text_in(driver, ".room-title", "Planning")
    assert toasts(ana) == []


def test_a_broken_character_pasted_into_a_field_is_mended_and_typing_goes_on(server, ana, ben):
    """Half of an emoji (a lone surrogate: no server takes it as text) pasted into the title
    shows as U+FFFD at once; the typing after it reaches the room, and Save saves it all."""
    title, other = both_editing(server, ana, ben)
    before = title.get_attribute("value")
    title.send_keys(Keys.END)
    ana.execute_script("""
        const field = arguments[0];
        field.value += "\\uD83D";
        field.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertFromPaste" }));""",
                       title)
    assert title.get_attribute("value") == before + "\ufffd"
    title.send_keys(" Weekly")
    wait(ben, lambda d: other.get_attribute("value") == before + "\ufffd Weekly")
    title.send_keys(Keys.ENTER)
    for driver in (ana, ben):
        text_in(driver, ".room-title", before + "\ufffd Weekly")
    assert toasts(ana) == []
    assert collect_console_errors(ana) == []


def test_two_people_typing_in_one_field_at_once_both_keep_what_they_typed(server, ana, ben):
    """Ana types at the end of the title while Ben types at its start, key by key, at the
    same time: each sees the other's typing come in around their own, their carets stay
    where they type, and the room keeps both."""
    ana_title, ben_title = both_editing(server, ana, ben)
    assert ana_title.get_attribute("value") == "Design"
    ana_title.click()
    ana_title.send_keys(Keys.END)
    ben_title.click()
    ben_title.send_keys(Keys.HOME)
    # NB: one key at a time (a person's pace through WebDriver, ~100 keys a second), longer
    # than the pause after which typing is sent: each side sends several times while the
    # other's typing arrives.
    anas, bens = " review of the week's work", "Weekly team "
    failures = []

    def type_keys(element, text):
        try:
            for key in text:
                element.send_keys(key)
        except Exception as error:  # noqa: BLE001 - reported below, on the test's thread
            failures.append(error)

    typists = [threading.Thread(target=type_keys, args=(ana_title, anas)),
               threading.Thread(target=type_keys, args=(ben_title, bens))]
    for typist in typists:
        typist.start()
    for typist in typists:
        typist.join(60)
    assert failures == []
    both = bens + "Design" + anas
    room_title = "return window.standupsConnection.state.destination.edit.draft.title"
    for driver, title in ((ana, ana_title), (ben, ben_title)):
        wait(driver, lambda d: title.get_attribute("value") == both)
        wait(driver, lambda d: d.execute_script(room_title) == both)
    # Each caret stayed where its person typed: the next key lands there.
    ana_title.send_keys("!")
    ben_title.send_keys("-")
    both = bens + "-Design" + anas + "!"
    for driver, title in ((ana, ana_title), (ben, ben_title)):
        wait(driver, lambda d: title.get_attribute("value") == both)
        wait(driver, lambda d: d.execute_script(room_title) == both)
    # A change that left before the other's typing had come (what the pause cannot rule
    # out on a slower network): sent from Ben's page, from the text before Ana's. The room
    # still keeps Ana's, and her field takes Ben's around her caret.
    ben.execute_script(
        "window.standupsConnection.send({type: 'edit.binding', path: '/title', base: arguments[0],"
        " value: arguments[1]})", bens + "-Design", "Our " + bens + "-Design")
    both = "Our " + both
    wait(ana, lambda d: d.execute_script(room_title) == both)
    wait(ana, lambda d: ana_title.get_attribute("value") == both)
    ana_title.send_keys("?")
    both += "?"
    wait(ben, lambda d: d.execute_script(room_title) == both)
    click(ana, ".save-edit")
    for driver in (ana, ben):
        text_in(driver, ".room-title", both)
    # Nothing was refused: Ben was told only what Ana did ("Ana started editing.").
    assert toasts(ana) == []
    assert [toast for toast in toasts(ben) if not toast.startswith("Ana ")] == []
    assert collect_console_errors(ana) == [] and collect_console_errors(ben) == []


def test_a_selection_stays_selected_while_someone_else_types(server, ana, ben):
    ana_title, ben_title = both_editing(server, ana, ben)
    ana_title.send_keys(Keys.END, " review")
    wait(ben, lambda d: ben_title.get_attribute("value") == "Design review")
    # Ana selects "review" to type over it; Ben types at the start meanwhile.
    ana.execute_script("arguments[0].setSelectionRange(7, 13)", ana_title)
    ben_title.send_keys(Keys.HOME, "X")
    wait(ana, lambda d: ana_title.get_attribute("value") == "XDesign review")
    assert ana.execute_script(
        "return [arguments[0].selectionStart, arguments[0].selectionEnd]", ana_title) == [8, 14]
    ana_title.send_keys("sync")
    for driver, title in ((ana, ana_title), (ben, ben_title)):
        wait(driver, lambda d: title.get_attribute("value") == "XDesign sync")


def test_enter_in_an_attendee_adds_the_next_one_and_nothing_is_lost(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .add-attendee"))).click()
    # The new row takes the focus; Max and Enter, then Moe and Save, at typing speed.
    wait(ana, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 4)
    wait(ana, lambda d: d.execute_script(NEW_ROW_FOCUSED, "Attendee 4 name"))
    ana.switch_to.active_element.send_keys("Max" + Keys.ENTER)
    wait(ana, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 5)
    # Enter did not save: the form is still open, for Ben too, with Max in it.
    wait(ben, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")][3] == "Max")
    wait(ana, lambda d: d.switch_to.active_element.get_attribute("value") == "")
    ana.switch_to.active_element.send_keys("Moe")
    click(ana, ".save-edit")
    for driver in (ana, ben):
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, ".attendee-list")))
        wait(driver, lambda d: [li.text for li in d.find_elements(By.CSS_SELECTOR, ".attendee-list li")]
             == ["Blob", "Blob Jr", "Blob Sr", "Max", "Moe"])
    assert toasts(ana) == []
    assert collect_console_errors(ana) == []


def test_enter_in_the_new_standup_form_adds_an_attendee(server, ana):
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Retro")
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys("Ana" + Keys.ENTER)
    ana.switch_to.active_element.send_keys("Ben" + Keys.ENTER)
    ana.switch_to.active_element.send_keys("Cy")
    # Nothing was submitted yet: three rows, the form still open.
    values = [i.get_attribute("value") for i in ana.find_elements(By.CSS_SELECTOR, ".new-attendees input")]
    assert values == ["Ana", "Ben", "Cy"]
    assert ana.find_element(By.ID, "new-form").is_displayed()
    click(ana, "#new-form button.primary")
    text_in(ana, ".card", "3 attendees")


def ben_ends_as_ana_types(server, ana, ben, typed, button):
    """Ana starts a meeting and types `typed` into a note; Ben ends it with `button` (the end
    alert's `.save` or `.discard`)."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys(typed)
    click(ben, ".end")
    click(ben, f".end-alert {button}")


# The newest saved meeting's notes, as its history shows them: its speakers and their notes.
NEWEST_MEETINGS_NOTES = """return [...document.querySelectorAll('.history > li:first-child details')]
    .map((item) => [...item.querySelectorAll('h4, li')].map((line) => line.textContent));"""


def ana_types_a_late_note(server, ana, ben):
    """Ben saves and ends the meeting while Ana types a note: she types on into the late note
    it becomes ("Half a thought")."""
    ben_ends_as_ana_types(server, ana, ben, "Half a", ".save")
    text_in(ana, ".ended", "Ben ended the meeting — saved.")
    ActionChains(ana).send_keys(" thought").perform()
    wait(ana, lambda d: d.find_element(By.ID, "late-note").get_attribute("value") == "Half a thought")


def test_a_late_note_whose_meeting_takes_no_more_notes_is_kept_to_copy_not_offered(server, ana, ben):
    """A meeting takes late notes for ten minutes. Once they pass, the note offered for it
    stays in its field, to copy, with no button that could only be refused; through a reload
    too, until Ana forgets it."""
    ana_types_a_late_note(server, ana, ben)
    # Ana's clock, two seconds short of the meeting's ten minutes and the minute of grace it
    # gives a clock that is not the server's (the server's is not moved).
    ana.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        const realNow = Date.now;
        Date.now = () => realNow() + 11 * 60 * 1000 - 2000;"""})
    ana.refresh()
    late = wait(ana, EC.element_to_be_clickable((By.ID, "late-note")))
    assert late.get_attribute("value") == "Half a thought"
    assert ana.find_element(By.CSS_SELECTOR, ".late-note .add").is_displayed()
    # Away in the lobby (the page's own link: the same page) as the time runs out: nothing
    # there changes, and back in the room the note is kept, to copy.
    due = ana.execute_script("return Date.now() + 4000")
    click(ana, ".back")
    text_in(ana, ".card", "Design")
    wait(ana, lambda d: d.execute_script("return Date.now()") > due)
    assert collect_console_errors(ana) == []
    click(ana, ".card")
    late = wait(ana, EC.element_to_be_clickable((By.ID, "late-note")))
    late.send_keys(", and more")
    text_in(ana, ".late-note label", "which takes no more notes now: copy it from here, or forget it.", timeout=10)
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note .add").is_displayed()
    assert ana.find_element(By.CSS_SELECTOR, ".late-note .set-aside").text == "Forget this note"
    assert late.get_attribute("value") == "Half a thought, and more"
    # Enter sends nothing the room would refuse.
    late.send_keys(Keys.ENTER)
    ana.refresh()
    late = wait(ana, EC.presence_of_element_located((By.ID, "late-note")))
    text_in(ana, ".late-note label", "which takes no more notes now")
    assert late.get_attribute("value") == "Half a thought, and more"
    assert ana.execute_script("return window.standupsToastLog") == []
    assert not any("Ana:" in line for lines in ben.execute_script(NEWEST_MEETINGS_NOTES) for line in lines)
    # Forgotten on a phone: the toast with the way back stays a while (10 s, shortened here),
    # and the page makes room for it under its bar, leaving the room's title and links in sight.
    resize(ana, "small phone")
    ana.execute_script("""
        const setTimeout = window.setTimeout;
        window.setTimeout = (run, ms, ...rest) => setTimeout(run, ms === 10000 ? 400 : ms, ...rest);""")
    click(ana, ".late-note .set-aside")
    text_in(ana, "#toasts", "Your note was set aside: “Half a thought, and more”.")
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    covered = """
        const toast = document.querySelector('.toast').getBoundingClientRect();
        return [...document.querySelectorAll('.room-head a, .room-title, .copy-link')].filter((element) => {
          const box = element.getBoundingClientRect();
          return box.left < toast.right && box.right > toast.left && box.top < toast.bottom && box.bottom > toast.top;
        }).map((element) => element.className);"""
    assert ana.execute_script(covered) == []
    assert [button.text for button in ana.find_elements(By.CSS_SELECTOR, "#toasts .toast button")] == [
        "Bring it back", "Dismiss"]
    # Its time stands still while it is pointed at (about to be pressed), and runs once it is not.
    ActionChains(ana).move_to_element(ana.find_element(By.CSS_SELECTOR, "#toasts .bring-back")).perform()
    until = ana.execute_script("return performance.now() + 900")
    wait(ana, lambda d: d.execute_script("return performance.now()") > until)
    assert "set aside" in ana.find_element(By.ID, "toasts").text
    ActionChains(ana).move_to_element(ana.find_element(By.CSS_SELECTOR, ".room-title")).perform()
    wait(ana, lambda d: not d.find_elements(By.CSS_SELECTOR, "#toasts .toast"), timeout=5)
    # Gone, it leaves no room behind.
    assert ana.execute_script("return getComputedStyle(document.body).getPropertyValue('--kept-toasts')") == "0px"
    resize(ana, "desktop")
    assert collect_console_errors(ana) == []


def test_a_past_meeting_being_read_stays_open_as_the_history_changes(server, ana, ben):
    """Ben reads the meeting just saved, the keyboard on it, while Ana adds her late note to
    it: it stays open, with the note in it, and keeps the keyboard."""
    ana_types_a_late_note(server, ana, ben)
    summary = wait(ben, EC.element_to_be_clickable((By.CSS_SELECTOR, ".history summary")))
    summary.click()
    is_open = "return [...document.querySelectorAll('.history > li > details')].map((item) => item.open)"
    on_summary = "return document.activeElement === document.querySelectorAll('.history summary')[arguments[0]]"
    assert ben.execute_script(is_open) == [True] and ben.execute_script(on_summary, 0)
    ana.find_element(By.ID, "late-note").send_keys(Keys.ENTER)
    text_in(ben, ".history .notes", "Ana: Half a thought")
    assert ben.execute_script(is_open) == [True] and ben.execute_script(on_summary, 0)
    assert collect_console_errors(ben) == []


def test_a_note_being_typed_when_the_meeting_ends_joins_the_meeting_saved(server, ana, ben):
    """Ben saves and ends the meeting while Ana types a note: her keys go on into the note,
    now offered for the meeting just saved; a reload keeps it; Enter adds it to the meeting,
    under the speaker whose turn it was, for everyone."""
    ben_ends_as_ana_types(server, ana, ben, "Half a", ".save")
    text_in(ana, ".ended", "Ben ended the meeting — saved.")
    # NB: to whatever has the keyboard, as a person's keys go.
    ActionChains(ana).send_keys(" thought").perform()
    facts = ana.execute_script("""
        const input = document.getElementById('late-note');
        return { value: input.value, focused: document.activeElement === input,
                 label: input.labels[0].textContent.replace(/\\s+/g, ' ').trim() };""")
    assert {**facts, "label": None} == {"value": "Half a thought", "focused": True, "label": None}
    # The meeting it is for, named by when it ended; said as true of a note never sent (as
    # this one, still being typed) as of one the meeting ended before it got.
    assert re.fullmatch(r"Your note is not in the meeting that ended at \d{1,2}:\d{2}( [AP]M)?: "
                        r"add it to that meeting\.", facts["label"]), facts["label"]
    screenshot(ana, "late-note-offered")
    ana.refresh()
    late = wait(ana, EC.element_to_be_clickable((By.ID, "late-note")))
    assert late.get_attribute("value") == "Half a thought"
    late.send_keys(", finished" + Keys.ENTER)
    text_in(ana, "#toasts", "Your note was added to the meeting that ended.")
    text_in(ben, "#toasts", "Ana added a note to a meeting that ended.")
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    wait(ben, lambda d: d.execute_script(NEWEST_MEETINGS_NOTES) == [["Blob", "Ana: Half a thought, finished"]])
    # Sent once: a reload neither offers it again nor sends it twice.
    ana.refresh()
    wait(ana, lambda d: d.execute_script(NEWEST_MEETINGS_NOTES) == [["Blob", "Ana: Half a thought, finished"]])
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    assert collect_console_errors(ana) == []


def test_a_late_note_whose_answer_a_drop_lost_is_found_among_the_patches_replayed(server, ana, ben):
    """Ana adds a late note and the connection drops before its answer: back in the room
    (a resumed welcome, the note among the patches it is followed by), the page sees that
    the note arrived and says so, instead of offering it to be sent twice."""
    ana_types_a_late_note(server, ana, ben)
    # The note goes out, and the page drops the connection at once: the answer never comes.
    ana.execute_script("""
        const send = WebSocket.prototype.send;
        WebSocket.prototype.send = function (data) {
          send.call(this, data);
          if (String(data).includes('"history.noteSubmitted"')) {
            WebSocket.prototype.send = send;
            this.close();
          }
        };""")
    ActionChains(ana).send_keys(Keys.ENTER).perform()
    text_in(ana, "#toasts", "Your note got into the meeting that ended, though the connection dropped.")
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    for driver in (ana, ben):
        wait(driver, lambda d: d.execute_script(NEWEST_MEETINGS_NOTES) == [["Blob", "Ana: Half a thought"]])
    assert collect_console_errors(ana) == []


def test_a_late_note_stays_with_the_keyboard_when_a_new_meeting_starts(server, ana, ben):
    """The note typed as the meeting ended is still being typed when Ben starts the next one:
    it stays above the new meeting, with the keyboard, and joins the meeting it was for."""
    ben_ends_as_ana_types(server, ana, ben, "Half a", ".save")
    text_in(ana, ".ended", "Ben ended the meeting — saved.")
    click(ben, ".start")
    text_in(ana, ".speaker", "Speaker 1 of 3")
    ActionChains(ana).send_keys(" thought").perform()
    assert ana.execute_script("""
        const input = document.getElementById('late-note');
        return [input.value, document.activeElement === input];""") == ["Half a thought", True]
    ActionChains(ana).send_keys(Keys.ENTER).perform()
    text_in(ana, "#toasts", "Your note was added to the meeting that ended.")
    assert ana.find_element(By.ID, "note").get_attribute("value") == ""
    # Nothing of it went into the meeting now running.
    assert "Half a thought" not in ana.find_element(By.CSS_SELECTOR, ".transcript").text
    click(ben, ".end")
    click(ben, ".end-alert .discard")
    notes = """return [...document.querySelectorAll('.history > li:first-child details li')]
        .map((line) => line.textContent);"""
    wait(ben, lambda d: d.execute_script(notes) == ["Ana: Half a thought"])
    assert collect_console_errors(ana) == []


def test_a_late_note_stays_through_a_rename(server, ana, ben):
    ben_ends_as_ana_types(server, ana, ben, "Half a thought", ".save")
    wait(ana, lambda d: d.find_element(By.ID, "late-note").get_attribute("value") == "Half a thought")
    click(ana, "#me")
    field = wait(ana, EC.visibility_of_element_located((By.CSS_SELECTOR, "#name-dialog input")))
    field.clear()
    field.send_keys("Ana C" + Keys.ENTER)
    text_in(ana, ".presence", "Ana C (you)")
    late = wait(ana, EC.visibility_of_element_located((By.ID, "late-note")))
    assert late.get_attribute("value") == "Half a thought"


def test_a_note_typed_as_the_meeting_is_discarded_keeps_the_keyboard(server, ana, ben):
    """Ben discards the meeting while Ana types: her keys go on into the box that keeps the
    note; a new meeting started then gets it in its note field, and says so."""
    ben_ends_as_ana_types(server, ana, ben, "Half a", ".discard")
    text_in(ana, ".ended", "Meeting discarded.")
    ActionChains(ana).send_keys(" thought").perform()
    assert ana.execute_script("""
        const box = document.querySelector('.ended textarea');
        return [box.value, document.activeElement === box];""") == ["Half a thought", True]
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    # Undo brings it back into the meeting's note field; discarded again, Ben starts another
    # meeting: the note goes into that one's field.
    click(ben, ".undo-bar .undo")
    wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    wait(ana, lambda d: d.find_element(By.ID, "note").get_attribute("value") == "Half a thought")
    ana.find_element(By.ID, "note").send_keys(Keys.END)
    click(ben, ".end")
    click(ben, ".end-alert .discard")
    ActionChains(ana).send_keys("!").perform()
    click(ben, ".start")
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    wait(ana, lambda d: d.find_element(By.ID, "note").get_attribute("value") == "Half a thought!")
    text_in(ana, "#toasts", "Your note from the discarded meeting is in the note field")
    assert note.get_attribute("value") == "Half a thought!"
    # The discarded meeting's Undo went with the new meeting: said to both, not in silence.
    text_in(ana, "#toasts", "Ben started the meeting: the discarded meeting can no longer be brought back.")
    text_in(ben, "#toasts", "You started the meeting: the discarded meeting can no longer be brought back.")
    assert not ana.find_element(By.CSS_SELECTOR, ".undo-bar").is_displayed()


def test_a_discarded_meetings_note_stays_through_a_reload_until_used_or_forgotten(server, ana, ben):
    """Ben discards the meeting as Ana types: the box that keeps her note is there again after
    a reload and after a visit to the lobby, with her edits; Forget this note lets it go."""
    ben_ends_as_ana_types(server, ana, ben, "Half a", ".discard")
    text_in(ana, ".ended", "Meeting discarded.")
    ActionChains(ana).send_keys(" thought").perform()
    ana.refresh()
    text_in(ana, ".ended", "A meeting was discarded while you were typing a note.")
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".ended textarea").get_attribute("value")
         == "Half a thought")
    click(ana, ".back")
    # NB: the card of the room Ben is still in.
    text_in(ana, ".card", "Ben here")
    click(ana, ".card")
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".ended textarea").get_attribute("value")
         == "Half a thought")
    click(ana, ".forget-note")
    assert not ana.find_element(By.CSS_SELECTOR, ".ended").is_displayed()
    # The keyboard, on the button that went, goes on to what is next (not to the page).
    assert ana.execute_script("return document.activeElement.matches('.start')")
    ana.refresh()
    text_in(ana, ".presence", "Ana (you)")
    assert not ana.find_element(By.CSS_SELECTOR, ".ended").is_displayed()
    assert ana.execute_script(
        "return Object.keys(sessionStorage).filter((key) => key.startsWith('standups.discarded'))") == []
    assert collect_console_errors(ana) == []


def two_late_notes(server, ana, ben):
    """Ben ends a meeting as Ana types "First", then the next one as she types "Second": the
    newest is offered, the earlier one waits its turn."""
    ben_ends_as_ana_types(server, ana, ben, "First", ".save")
    wait(ana, lambda d: d.find_element(By.ID, "late-note").get_attribute("value") == "First")
    click(ben, ".start")
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys("Second")
    click(ben, ".end")
    click(ben, ".end-alert .save")
    wait(ana, lambda d: d.find_element(By.ID, "late-note").get_attribute("value") == "Second")


def test_notes_for_two_meetings_that_ended_are_each_offered_for_their_own(server, ana, ben):
    """Ana leaves a late note, types in the next meeting, and Ben ends that one too: the
    newest note is in the form, the earlier one next; Not needed can be taken back."""
    two_late_notes(server, ana, ben)
    ana.find_element(By.ID, "late-note").send_keys(Keys.ENTER)
    # The earlier one takes its place, with the keyboard.
    wait(ana, lambda d: d.find_element(By.ID, "late-note").get_attribute("value") == "First")
    assert ana.execute_script("return document.activeElement.id") == "late-note"
    click(ana, ".late-note .set-aside")
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    text_in(ana, "#toasts", "Your note was set aside: “First”.")
    click(ana, "#toasts .bring-back")
    late = wait(ana, EC.element_to_be_clickable((By.ID, "late-note")))
    assert late.get_attribute("value") == "First"
    late.send_keys(Keys.ENTER)
    text_in(ana, "#toasts", "Your note was added to the meeting that ended.")
    notes = """return [...document.querySelectorAll('.history > li details')]
        .map((item) => [...item.querySelectorAll('li')].map((line) => line.textContent));"""
    # Newest first: each note in its own meeting.
    wait(ben, lambda d: d.execute_script(notes) == [["Ana: Second"], ["Ana: First"]])
    assert collect_console_errors(ana) == []


def test_two_notes_set_aside_each_keep_their_way_back_through_what_the_room_says_next(server, ana, ben):
    """Ana sets aside two late notes: each toast keeps its own "Bring it back" (the second
    does not take the first one's place), and neither goes when the room's next notices come
    (a meeting started and ended) — only with its time."""
    two_late_notes(server, ana, ben)
    click(ana, ".late-note .set-aside")
    wait(ana, lambda d: d.find_element(By.ID, "late-note").get_attribute("value") == "First")
    click(ana, ".late-note .set-aside")
    set_aside = """return [...document.querySelectorAll('#toasts .toast')]
        .filter((item) => item.querySelector('.bring-back')).map((item) => item.firstChild.textContent);"""
    wait(ana, lambda d: d.execute_script(set_aside)
         == ["Your note was set aside: “Second”.", "Your note was set aside: “First”."])
    # The room goes on: a meeting starts and is discarded, with its notices.
    click(ben, ".start")
    text_in(ana, ".presence", "Ana (you)")
    wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    click(ben, ".end")
    click(ben, ".end-alert .discard")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".ended")))
    assert ana.execute_script(set_aside) == [
        "Your note was set aside: “Second”.", "Your note was set aside: “First”."]
    ana.execute_script(
        "[...document.querySelectorAll('#toasts .toast')].find((t) => t.textContent.includes('First'))"
        ".querySelector('.bring-back').click()")
    wait(ana, lambda d: d.find_element(By.ID, "late-note").get_attribute("value") == "First")
    assert collect_console_errors(ana) == []


def test_toasts_that_hold_typing_are_never_pushed_out_by_others(server, ana):
    """Three toasts show at most — but for those that hold the only copy of something typed:
    a fourth of those shows too, and notices make room by going themselves (all but the
    newest, which says what just happened)."""
    ana.get(server)
    text_in(ana, "#status", "Live")
    shown = ana.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('/js/toasts.mjs').then(({ keepSaying, toast }) => {
          toast('a notice');
          for (const typed of ['one', 'two', 'three', 'four']) keepSaying(`kept: ${typed}`);
          toast('another notice');
          keepSaying('kept: five', { kind: 'unsent' });
          keepSaying('kept: six', { kind: 'unsent' });
          // NB: what each says (one that holds typing has a Dismiss after it).
          done([...document.querySelectorAll('#toasts .toast')].map((item) => item.firstChild.textContent));
        });""")
    assert shown == ["kept: one", "kept: two", "kept: three", "kept: four", "another notice",
                     "kept: five", "kept: six"]
    # Notices alone: three at most, the oldest gone.
    shown = ana.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('/js/toasts.mjs').then(({ dismissToasts, toast }) => {
          dismissToasts({ typing: true });
          for (const said of ['1', '2', '3', '4']) toast(`notice ${said}`);
          done([...document.querySelectorAll('#toasts .toast')].map((item) => item.textContent));
        });""")
    assert shown == ["notice 2", "notice 3", "notice 4"]


def test_someone_asking_to_end_the_meeting_leaves_the_keyboard_to_a_note_being_typed(server, ana, ben):
    """Ben presses End while Ana is typing a note: her next keys go on into the note, not
    into the alert, which shows under the note; once the note is added, it is the alert's."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys("Half a")
    click(ben, ".end")
    wait(ana, lambda d: d.execute_script("return document.querySelector('.end-alert').open"))
    # NB: to whatever has the keyboard, as a person's keys go (an element's send_keys
    # would focus it first).
    ActionChains(ana).send_keys(" thought").perform()
    facts = ana.execute_script("""
        const alert = document.querySelector('.end-alert');
        const note = document.getElementById('note');
        const [a, n] = [alert.getBoundingClientRect(), note.getBoundingClientRect()];
        return { value: note.value, focused: document.activeElement === note,
                 modal: alert.matches(':modal'), said: alert.querySelector('.finish-note').offsetParent !== null,
                 described: note.getAttribute('aria-describedby') === 'note-for finish-note',
                 covers: a.top < n.bottom && n.top < a.bottom };""")
    assert facts == {"value": "Half a thought", "focused": True, "modal": False, "said": True,
                     "described": True, "covers": False}
    screenshot(ana, "meeting-end-alert-beside-a-note")
    ActionChains(ana).send_keys(Keys.ENTER).perform()
    text_in(ben, ".transcript", "Ana: Half a thought")
    wait(ana, lambda d: d.execute_script("""
        const alert = document.querySelector('.end-alert');
        return alert.matches(':modal') && alert.contains(document.activeElement);"""))
    assert not ana.find_element(By.CSS_SELECTOR, ".end-alert .finish-note").is_displayed()
    # The field is described by whose turn its note is for again, alone.
    assert ana.execute_script("return document.getElementById('note').getAttribute('aria-describedby')") == "note-for"
    click(ana, ".end-alert .save")
    text_in(ben, ".ended", "Ana ended the meeting — saved.")
    assert collect_console_errors(ana) == []


def test_someone_asking_to_end_the_meeting_leaves_the_keyboard_to_a_late_note_being_typed(server, ana, ben):
    """Ana types a late note for the meeting before while the next one runs, and Ben presses
    End: her keys go on into the late note; once it is added, the alert has the keyboard."""
    ben_ends_as_ana_types(server, ana, ben, "Half a", ".save")
    late = wait(ana, EC.element_to_be_clickable((By.ID, "late-note")))
    click(ben, ".start")
    wait(ana, EC.presence_of_element_located((By.ID, "note")))
    late.click()
    click(ben, ".end")
    wait(ana, lambda d: d.execute_script("return document.querySelector('.end-alert').open"))
    ActionChains(ana).send_keys(Keys.END, " thought").perform()
    facts = ana.execute_script("""
        const alert = document.querySelector('.end-alert');
        const late = document.getElementById('late-note');
        return { value: late.value, focused: document.activeElement === late,
                 modal: alert.matches(':modal'), said: alert.querySelector('.finish-note').textContent,
                 described: late.getAttribute('aria-describedby') === 'finish-note' };""")
    assert facts == {"value": "Half a thought", "focused": True, "modal": False, "described": True,
                     "said": "Ben asked to end the meeting. Your note is still being typed: "
                             "Enter adds it to the meeting it is for first."}
    ActionChains(ana).send_keys(Keys.ENTER).perform()
    toast_says(ana, "Your note was added to the meeting that ended.")
    wait(ana, lambda d: d.execute_script("""
        const alert = document.querySelector('.end-alert');
        return alert.matches(':modal') && alert.contains(document.activeElement);"""))
    assert ana.execute_script("return document.querySelector('[aria-describedby~=finish-note]')") is None
    assert collect_console_errors(ana) == []


def test_someone_asking_to_delete_waits_for_a_late_note_being_typed(server, ana, ben):
    """Ana types a late note and Ben asks to delete the standup: her keys go on into the note
    (the toast says who asked), and the dialog opens once the note is added."""
    ben_ends_as_ana_types(server, ana, ben, "Half a", ".save")
    wait(ana, EC.element_to_be_clickable((By.ID, "late-note"))).click()
    click(ben, ".delete")
    toast_says(ana, "Ben asked to delete this standup. Your note is still being typed: "
                    "Enter adds it to its meeting, then you are asked too.")
    ActionChains(ana).send_keys(Keys.END, " thought").perform()
    facts = ana.execute_script("""
        const late = document.getElementById('late-note');
        return { value: late.value, focused: document.activeElement === late,
                 open: document.querySelector('.delete-alert').open };""")
    assert facts == {"value": "Half a thought", "focused": True, "open": False}
    # A press on the note's own button (it takes the keyboard as the mouse goes down) is not
    # leaving the note: the click lands, and adds it.
    click(ana, ".late-note .add")
    toast_says(ana, "Your note was added to the meeting that ended.")
    wait(ana, lambda d: d.execute_script("""
        const alert = document.querySelector('.delete-alert');
        return alert.matches(':modal') && alert.contains(document.activeElement);"""))
    text_in(ana, ".delete-alert .asked", "Ben asked to delete this standup.")
    click(ana, ".delete-alert .dismiss")
    assert collect_console_errors(ana) == []


def test_a_late_note_being_typed_when_the_standup_is_deleted_is_shown_on_the_deleted_page(server, ana, ben):
    """Ben deletes the standup while Ana types a late note: the page that says it was deleted
    shows what she had typed, which has nowhere else to go."""
    ben_ends_as_ana_types(server, ana, ben, "Half a", ".save")
    wait(ana, EC.element_to_be_clickable((By.ID, "late-note"))).click()
    ActionChains(ana).send_keys(Keys.END, " thought").perform()
    click(ben, ".delete")
    click(ben, ".delete-alert .confirm")
    # Once the undo window is over (10 s), the room closes for good.
    text_in(ana, "h1", "This standup was deleted.", timeout=20)
    text_in(ana, ".typed-here",
            "What you had typed here did not reach it: “Half a thought” (your note for a meeting that ended).")
    assert collect_console_errors(ana) == []


def test_asking_to_end_the_meeting_takes_the_keyboard_from_an_empty_note(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).click()
    click(ben, ".end")
    wait(ana, lambda d: d.execute_script("""
        const alert = document.querySelector('.end-alert');
        return alert.matches(':modal') && alert.contains(document.activeElement);"""))


def closing_asks_first(driver):
    """Whether closing the tab now would have the browser ask first (its `beforeunload`)."""
    return not driver.execute_script(
        "return window.dispatchEvent(new Event('beforeunload', { cancelable: true }))")


def test_a_note_being_typed_outlives_a_reload_and_goes_once_sent(server, ana, ben):
    """It is kept in the tab: closing the tab would lose it, so the browser asks first, until
    it is sent (ChromeDriver's reload says yes)."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    assert not closing_asks_first(ana)
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys("Half a thought")
    assert closing_asks_first(ana)
    ana.refresh()
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    assert note.get_attribute("value") == "Half a thought"
    assert closing_asks_first(ana)
    note.send_keys(", finished" + Keys.ENTER)
    text_in(ben, ".transcript", "Ana: Half a thought, finished")
    wait(ana, lambda d: d.find_element(By.ID, "note").get_attribute("value") == "")
    assert not closing_asks_first(ana)
    ana.refresh()
    text_in(ana, ".transcript", "Ana: Half a thought, finished")
    assert ana.find_element(By.ID, "note").get_attribute("value") == ""
    assert collect_console_errors(ana) == []


def test_a_note_being_typed_outlives_its_tab_being_closed(server, ana, ben):
    """The browser asks before closing a tab with a note half typed; said yes, the note is kept
    in the browser and the next tab to open the room has it back in its field, once."""
    room = both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys("Half a thought")
    assert closing_asks_first(ana)
    typed_in = ana.current_window_handle
    ana.switch_to.new_window("tab")
    later = ana.current_window_handle
    ana.switch_to.window(typed_in)
    ana.close()
    wait(ben, lambda d: "Ana" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    ana.switch_to.window(later)
    # NB: the room's address as someone typed it: the same room, whatever the case of its id.
    ana.get(room.lower())
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    wait(ana, lambda d: note.get_attribute("value") == "Half a thought")
    toast_says(ana, "Your note from a tab you closed is back in its field.")
    # Taken: the browser keeps no copy for a third tab (only a digest of what the tab took).
    kept = ana.execute_script("return JSON.parse(localStorage.getItem('standups.closedTabs'))")
    assert kept["tabs"] == [] and "Half a thought" not in str(kept)
    note.send_keys(", finished" + Keys.ENTER)
    text_in(ben, ".transcript", "Ana: Half a thought, finished")
    ana.switch_to.new_window("tab")
    ana.get(room)
    wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    text_in(ana, ".transcript", "Ana: Half a thought, finished")
    assert ana.find_element(By.ID, "note").get_attribute("value") == ""
    assert collect_console_errors(ana) == []


def ana_closes_a_tab_with_a_note(server, ana, ben, note):
    """Ana types `note` in a meeting and closes her tab; returns the room's address, with her
    driver on a blank tab of the same browser."""
    room = both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys(note)
    typed_in = ana.current_window_handle
    ana.switch_to.new_window("tab")
    later = ana.current_window_handle
    ana.switch_to.window(typed_in)
    ana.close()
    ana.switch_to.window(later)
    wait(ben, lambda d: "Ana" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    return room


def test_a_closed_tab_s_note_for_a_meeting_discarded_since_is_kept_as_a_discarded_meeting_s(server, ana, ben):
    """The meeting a note was for is known by its id: Ben discards it, and the note is kept as
    one a discarded meeting leaves an open page — in its box, through a reload — not said once."""
    room = ana_closes_a_tab_with_a_note(server, ana, ben, "About the old one")
    click(ben, ".end")
    click(ben, ".end-alert .discard")
    ana.get(room)
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".ended textarea").get_attribute("value")
         == "About the old one")
    text_in(ana, ".ended", "A meeting was discarded while you were typing a note.")
    # NB: a page never touched may not ask before a reload (Chromium's rule); this one was.
    click(ana, ".ended textarea")
    ana.refresh()
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".ended textarea").get_attribute("value")
         == "About the old one")
    assert not any("back in its field" in toast for toast in toasts(ana))
    assert collect_console_errors(ana) == []


def test_a_closed_tab_s_note_for_a_meeting_discarded_before_the_next_began_says_so_in_its_field(server, ana, ben):
    """Discarded, and another meeting started (as many saved before it): the note is not this
    meeting's, and is said to be the discarded one's, in the field to add or clear."""
    room = ana_closes_a_tab_with_a_note(server, ana, ben, "About the old one")
    click(ben, ".end")
    click(ben, ".end-alert .discard")
    click(ben, ".start")
    wait(ben, EC.element_to_be_clickable((By.ID, "note")))
    ana.get(room)
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    wait(ana, lambda d: note.get_attribute("value") == "About the old one")
    toast_says(ana, "Your note from the discarded meeting is in the note field: add it to this one, or clear it.")
    assert not any("back in its field" in toast for toast in toasts(ana))
    assert collect_console_errors(ana) == []


def test_a_note_a_tab_took_while_its_page_was_away_is_in_one_tab_and_sent_once(server, ana, ben):
    """Ana's tab goes to another page with her note typed; a new tab takes the note. Back in
    the first tab, the note is not there too (said so): it is sent once."""
    room = both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys("Note from A")
    first = ana.current_window_handle
    ana.get("data:text/html,<p>Elsewhere</p>")
    ana.switch_to.new_window("tab")
    ana.get(room)
    taken = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    wait(ana, lambda d: taken.get_attribute("value") == "Note from A")
    ana.switch_to.window(first)
    ana.back()
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    toast_says(ana, "What you typed here went on in another tab of this browser while this page was away: “Note from A”")
    assert note.get_attribute("value") == ""
    note.send_keys("Later, from A" + Keys.ENTER)
    text_in(ben, ".transcript", "Ana: Later, from A")
    assert ben.find_element(By.CSS_SELECTOR, ".transcript").text.count("Note from A") == 0
    # NB: but the fixture's own script on the page elsewhere, which has no storage.
    assert [error for error in collect_console_errors(ana)
            if "Storage is disabled inside 'data:' URLs" not in error["message"]] == []


def test_a_page_put_away_leaves_the_room_and_comes_back(server, ana, ben):
    both_in_a_room(server, ana, ben)
    # Ana goes to another page in the same tab: the room page may wait in the back/forward
    # cache, but she is not "here" any more.
    ana.get(server + "favicon.svg")
    wait(ben, lambda d: "Ana" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    ana.back()
    text_in(ana, "#status", "Live")
    text_in(ben, ".presence", "Ana")


def test_a_draft_typed_just_before_leaving_is_there_for_whoever_comes_next(server, ana, ben):
    room = both_in_a_room(server, ana, ben)
    ben.get(server)
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    title.send_keys(Keys.CONTROL, "a")
    # Typed and gone at once: the typing had no pause to be sent on its own.
    title.send_keys("Planning, not yet saved")
    ana.get(server + "favicon.svg")
    # Nobody is in the room now; the draft waits there, unsaved, for the next person.
    ben.get(room)
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value")
         == "Planning, not yet saved")
    text_in(ben, ".room-title", "Design")
    assert collect_console_errors(ben) == []


def test_typing_then_going_back_to_the_lobby_keeps_what_was_typed(server, ana, ben):
    room = both_in_a_room(server, ana, ben)
    ben.get(server)
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    title.send_keys(Keys.CONTROL, "a")
    title.send_keys("Typed, then back")
    # Straight back to the lobby, inside the app: the typing goes before the room is left,
    # and leaving is no failure to report there.
    ana.find_element(By.CSS_SELECTOR, ".back").click()
    text_in(ana, "#status", "Live")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".card")))
    ben.get(room)
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value")
         == "Typed, then back")
    assert toasts(ana) == []


def test_typing_when_the_connection_drops_is_sent_once_it_is_back(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    title.send_keys(Keys.CONTROL, "a")
    title.send_keys("Typed as the network went")
    # The socket drops before the typing's pause is over, and Enter sends what waits at once,
    # while it is closed: it cannot be sent then (and nothing is saved without it).
    ana.execute_script("window.standupsConnection.socket.close()")
    title.send_keys(Keys.ENTER)
    text_in(ana, "#status", "Live")
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value")
         == "Typed as the network went")
    assert toasts(ana) == []


def test_typing_whose_answer_was_lost_with_the_connection_is_kept_once(server, ana, ben):
    """The room took the change, but the connection dropped before its answer came: back
    in the room (resumed, the missed patches after the welcome), the page tells from the
    room's text that it arrived, and sends only what was typed after it."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    # The socket closes right behind the change it sends: the server reads the change, then
    # the close; its answer has nowhere to go.
    close_right_after(ana, "edit.binding")
    title.send_keys(Keys.END, " review")
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value")
         == "Design review")
    title.send_keys("!")
    text_in(ana, "#status", "Live")
    for driver in (ana, ben):
        wait(driver, lambda d: d.execute_script(
            "return window.standupsConnection.state.destination.edit.draft.title") == "Design review!")
    assert title.get_attribute("value") == "Design review!"
    assert ana.execute_script("return window.standupsConnection.resumed") is True
    # Back in the field as before the drop: Ben sees Ana's chip on it again.
    wait(ben, lambda d: "Ana" in d.find_element(By.CSS_SELECTOR, ".chips[data-for=title]").text)
    assert toasts(ana) == []


def test_a_change_whose_patch_came_but_not_its_answer_is_not_sent_again(server, ana, ben):
    """Ana's change reached the room and its patch reached her, but the connection dropped
    before its answer. While she is away Ben types inside her text: the room's text no
    longer holds her change as she sent it. Back (resumed), her page knows from the patch
    that it arrived, and sends only what she typed since."""
    title, ben_title = both_editing(server, ana, ben)
    ana.execute_script("""
        const connection = window.standupsConnection;
        const socket = connection.socket;
        const send = socket.send.bind(socket);
        const receive = connection.receive.bind(connection);
        const refs = new Set();
        socket.send = (data) => {
          const message = JSON.parse(data);
          if (message.action?.type === 'edit.binding') refs.add(message.ref);
          send(data);
        };
        // The change's answer is lost: the connection drops as it comes.
        connection.receive = (message) => {
          if (message.type !== 'ack' || !refs.has(message.ref)) return receive(message);
          connection.receive = receive;
          socket.close();
        };
        """ + HOLD_RECONNECT)
    title.send_keys(Keys.END, " review")
    reconnecting(ana)
    title.send_keys("!")
    wait(ben, lambda d: ben_title.get_attribute("value") == "Design review")
    ben_title.click()
    ben.execute_script("arguments[0].setSelectionRange(10, 10)", ben_title)
    ben_title.send_keys("-")
    room_title = "return window.standupsConnection.state.destination.edit.draft.title"
    wait(ben, lambda d: d.execute_script(room_title) == "Design rev-iew")
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "#status", "Live")
    assert ana.execute_script("return window.standupsConnection.resumed") is True
    for driver in (ana, ben):
        wait(driver, lambda d: d.execute_script(room_title) == "Design rev-iew!")
    wait(ana, lambda d: title.get_attribute("value") == "Design rev-iew!")


def test_a_setting_the_room_did_not_take_shows_the_rooms_again(server, ana, ben):
    """Ana picks a theme while her connection is down: the room never gets it, so her form
    shows the room's theme again (with why), rather than one that Save would not store."""
    both_editing(server, ana, ben)
    room_theme = "return window.standupsConnection.state.destination.edit.draft.theme"
    theme = ana.execute_script(room_theme)
    ana.execute_script(HOLD_RECONNECT + "window.standupsConnection.socket.close();")
    reconnecting(ana)
    other = "navy" if theme != "navy" else "teal"
    ana.execute_script(f"document.querySelector('.edit-form input[name=edit-theme][value={other}]').click()")
    wait(ana, lambda d: d.execute_script("return document.querySelector('.edit-form input[name=edit-theme]:checked').value")
         == theme)
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "#status", "Live")
    assert ben.execute_script(room_theme) == theme
    assert collect_console_errors(ana) == []


def test_typing_that_others_typing_takes_over_the_limit_says_so_and_is_not_sent(server, ana, ben):
    """Ana types while offline; meanwhile Ben fills the title almost to its limit. Back in
    the room, her field holds both (102 characters): it says so, and nothing is sent until
    it fits."""
    title, ben_title = both_editing(server, ana, ben)
    ana.execute_script(HOLD_RECONNECT + "window.standupsConnection.socket.close();")
    reconnecting(ana)
    title.send_keys(Keys.END, "AB")
    ben_title.send_keys(Keys.HOME, "x" * 94)
    room_title = "return window.standupsConnection.state.destination.edit.draft.title"
    wait(ben, lambda d: d.execute_script(room_title) == "x" * 94 + "Design")
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "#status", "Live")
    wait(ana, lambda d: title.get_attribute("value") == "x" * 94 + "DesignAB")
    toast_says(ana, "“Title” has 102 characters; it holds 100 at most.")
    assert ana.execute_script("return arguments[0].validity.valid", title) is False
    assert ben.execute_script(room_title) == "x" * 94 + "Design"
    # Once it fits, it goes.
    title.send_keys(Keys.BACKSPACE, Keys.BACKSPACE, Keys.BACKSPACE)
    for driver in (ana, ben):
        wait(driver, lambda d: d.execute_script(room_title) == "x" * 94 + "Desig")


HOLD_TYPING = """
    // Ben's typing leaves his page but never reaches the room (a slow network, held here).
    const socket = window.standupsConnection.socket;
    const send = socket.send.bind(socket);
    window.heldTyping = [];
    window.sendTyping = () => { socket.send = send; };
    socket.send = (data) => data.includes('edit.binding') ? window.heldTyping.push(data) : send(data);"""


def ana_saves_under_bens_typing(server, ana, ben):
    """Ana saves the form while Ben's typing in an attendee's name is held on its way (and
    sent once the test calls `window.sendTyping()`); returns the room's address."""
    room = both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 3)
    ben.execute_script(HOLD_TYPING)
    name = ben.find_elements(By.CSS_SELECTOR, ".attendees input")[1]
    name.send_keys(Keys.END, " (QA)")
    wait(ben, lambda d: d.execute_script("return window.heldTyping.length") > 0)
    click(ana, ".save-edit")
    return room


def test_typing_the_form_closed_under_is_said_and_can_be_put_back(server, ana, ben):
    """Ana saves while Ben's typing is still on its way: the saved standup does not have
    it, and Ben is told what did not make it in, with a button that opens the form again
    with it."""
    ana_saves_under_bens_typing(server, ana, ben)
    for driver in (ana, ben):
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, ".attendee-list")))
    toast_says(ben, "The form closed before your typing reached it: “Blob Jr (QA)” (Attendee 2 name).")
    ben.execute_script("window.sendTyping()")
    click(ben, ".toast .edit-again")
    for driver in (ana, ben):
        wait(driver, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")]
             == ["Blob", "Blob Jr (QA)", "Blob Sr"])
    # Only the refusal of the held change's late arrival is not said: the notice said it.
    assert not any("Nothing is being edited" in toast for toast in toasts(ben))
    assert collect_console_errors(ben) == []


def test_typing_the_form_closed_under_can_be_put_back_from_another_screen(server, ana, ben):
    """The notice holding Ben's typing has no time limit, and outlives its screen: from the
    lobby, "Edit again with it" takes him back to the room and puts the typing in the form."""
    room = ana_saves_under_bens_typing(server, ana, ben)
    toast_says(ben, "The form closed before your typing reached it: “Blob Jr (QA)” (Attendee 2 name).")
    click(ben, ".back")
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".card")))
    # It stays until Ben dismisses it or uses it: no timer takes it down.
    assert ben.execute_script(
        "const item = document.querySelector('#toasts [data-holds-typing]');"
        "return [item.querySelector('.dismiss').textContent, item.timer ?? null]") == ["Dismiss", None]
    click(ben, ".toast .edit-again")
    for driver in (ana, ben):
        wait(driver, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")]
             == ["Blob", "Blob Jr (QA)", "Blob Sr"])
    assert ben.current_url == room
    wait(ben, lambda d: not d.find_elements(By.CSS_SELECTOR, "#toasts [data-holds-typing]"))
    # Dismissed, a notice holding typing goes.
    ben.execute_script("import('/js/toasts.mjs').then(({ keepSaying }) => keepSaying('Held: “x”.'))")
    toast_says(ben, "Held: “x”.")
    click(ben, "#toasts [data-holds-typing] .dismiss")
    wait(ben, lambda d: not d.find_elements(By.CSS_SELECTOR, "#toasts [data-holds-typing]"))
    # The keyboard, on the notice that went, goes to the screen's heading (not to the page).
    assert ben.execute_script("return document.activeElement.matches('.room-title')")
    assert collect_console_errors(ben) == []


def test_typing_after_a_cancel_that_could_not_be_sent_is_kept(server, ana, ben):
    """Ben presses Cancel while his connection is down: the cancel is not sent, the form
    stays, and what he types on in it is his again — when Ana saves meanwhile, he is told it
    did not make it in, rather than it going as if he had thrown it away."""
    both_editing(server, ana, ben)
    ben.execute_script(HOLD_RECONNECT)
    ben.execute_script("window.standupsConnection.socket.close()")
    reconnecting(ben)
    click(ben, ".cancel-edit")
    toast_says(ben, "Not connected")
    title = ben.find_element(By.CSS_SELECTOR, ".edit-form .title")
    title.send_keys(Keys.END, " offline")
    click(ana, ".save-edit")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".attendee-list")))
    ben.execute_script("window.mayReconnect = true")
    text_in(ben, "#status", "Live")
    toast_says(ben, "The form closed before your typing reached it: “Design offline” (Title).")


def test_a_cancel_whose_answer_a_drop_lost_throws_the_typing_away_as_asked(server, ana, ben):
    """Ben types and presses Cancel; the connection drops before the answer. The room did
    cancel: back in it, the form is gone, and his typing is not offered as left out — he
    threw it away."""
    title, _ = both_editing(server, ana, ben)
    theirs = ben.find_element(By.CSS_SELECTOR, ".edit-form .title")
    ben.execute_script("""
        const send = WebSocket.prototype.send;
        WebSocket.prototype.send = function (data) {
          send.call(this, data);
          if (String(data).includes('"cancelEditButtonTapped"')) {
            WebSocket.prototype.send = send;
            this.close();
          }
        };""")
    theirs.send_keys(Keys.END, " thrown away")
    click(ben, ".cancel-edit")
    for driver in (ana, ben):
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, ".attendee-list")))
    text_in(ben, "#status", "Live")
    wait(ben, EC.visibility_of_element_located((By.CSS_SELECTOR, ".undo-bar")))
    assert not any("reached it" in toast for toast in toasts(ben)), toasts(ben)


def test_putting_typing_back_after_a_cancel_undoes_it_keeping_the_others_changes(server, ana, ben):
    """Ana changes the theme and adds an attendee, then cancels while Ben's typing is on its
    way. "Edit again with it" undoes the cancel (Ana's changes come back) and adds Ben's
    typing, rather than opening a new form from the saved standup."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 3)
    click(ana, "label.swatch[title=navy]")
    click(ana, ".add-attendee")
    wait(ana, lambda d: d.execute_script(NEW_ROW_FOCUSED, "Attendee 4 name"))
    ana.switch_to.active_element.send_keys("Eve")
    wait(ben, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")][-1:] == ["Eve"])
    ben.execute_script(HOLD_TYPING)
    ben.find_element(By.CSS_SELECTOR, ".edit-form .title").send_keys(Keys.END, " XYZ")
    wait(ben, lambda d: d.execute_script("return window.heldTyping.length") > 0)
    click(ana, ".cancel-edit")
    toast_says(ben, "The form closed before your typing reached it: “Design XYZ” (Title).")
    ben.execute_script("window.sendTyping()")
    click(ben, ".toast .edit-again")
    draft = "return window.standupsConnection.state.destination?.edit?.draft"
    for driver in (ana, ben):
        wait(driver, lambda d: (d.execute_script(draft) or {}).get("title") == "Design XYZ")
        found = driver.execute_script(draft)
        assert found["theme"] == "navy", found
        assert [a["name"] for a in found["attendees"]] == ["Blob", "Blob Jr", "Blob Sr", "Eve"], found
    assert collect_console_errors(ben) == []


def ana_cancels_under_bens_typing(server, ana, ben, typed):
    """Both edit; Ben types `typed` at the title's end, which reaches Ana; Ana cancels, and Ben
    is offered his typing back."""
    ana_title, ben_title = both_editing(server, ana, ben)
    ben_title.send_keys(Keys.END, typed)
    wait(ana, lambda d: ana_title.get_attribute("value") == "Design" + typed)
    click(ana, ".cancel-edit")
    toast_says(ben, f"Ana cancelled editing, with your typing in it: “Design{typed}” (Title).")


def test_typing_that_reached_a_form_someone_else_cancelled_is_offered_back(server, ana, ben):
    """Ben's typing reached the draft; Ana cancels. Her Undo would bring it back for a few
    seconds; Ben is also offered his typing for good. Put back while the Undo still can, the
    cancel is undone (his text once, not twice); after Ana opened the form again (which takes
    her Undo's place, as both are told), it goes into her new form."""
    ana_cancels_under_bens_typing(server, ana, ben, " B")
    click(ben, ".toast .edit-again")
    draft = "return window.standupsConnection.state.destination?.edit?.draft"
    for driver in (ana, ben):
        wait(driver, lambda d: (d.execute_script(draft) or {}).get("title") == "Design B")
    # Again, and now Ana opens a new form before Ben puts his typing back.
    ben_title = wait(ben, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    ben_title.send_keys(Keys.END, "en")
    wait(ana, lambda d: (d.execute_script(draft) or {}).get("title") == "Design Ben")
    click(ana, ".cancel-edit")
    toast_says(ben, "Ana cancelled editing, with your typing in it: “Design Ben” (Title).")
    click(ana, ".edit")
    toast_says(ben, "Ana started editing: the cancelled changes can no longer be brought back.")
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form")))
    click(ben, ".toast .edit-again")
    for driver in (ana, ben):
        wait(driver, lambda d: (d.execute_script(draft) or {}).get("title") == "Design Ben")
    assert collect_console_errors(ben) == []


def test_typing_offered_back_goes_from_its_toast_once_the_room_holds_it(server, ana, ben):
    """Ben's typing is offered back after Ana's Cancel; Ana's Undo brings the form back with it
    in, and Ana saves: the toast that held it goes by itself, not left to say, for good, that
    something is missing that is not."""
    ana_cancels_under_bens_typing(server, ana, ben, " weekly")
    click(ana, ".undo-bar .undo")
    wait(ben, lambda d: not any("with your typing in it" in toast for toast in toasts(d)))
    click(ana, ".save-edit")
    text_in(ben, ".room-title", "Design weekly")
    assert not any("your typing" in toast for toast in toasts(ben)), toasts(ben)
    assert collect_console_errors(ben) == []


def test_a_discarded_meetings_note_shown_in_a_toast_goes_from_it_once_back_in_its_box(server, ana, ben):
    """Ben discards the meeting as Ana types, and opens the edit form: the box that keeps her
    note goes with the detail, so a toast holds it meanwhile. Ben cancels: the box is back with
    the note, and the toast goes."""
    ben_ends_as_ana_types(server, ana, ben, "Half a thought", ".discard")
    text_in(ana, ".ended", "Meeting discarded.")
    click(ben, ".edit")
    toast_says(ana, "Your note from the discarded meeting: “Half a thought”.")
    click(ben, ".cancel-edit")
    box = wait(ana, EC.visibility_of_element_located((By.CSS_SELECTOR, ".ended textarea")))
    assert box.get_attribute("value") == "Half a thought"
    wait(ana, lambda d: not any("Half a thought" in toast for toast in toasts(d)))
    assert collect_console_errors(ana) == []


def test_typing_half_in_a_form_someone_else_cancelled_goes_back_once(server, ana, ben):
    """Ben's " sync" reached the draft, his " notes" was still on its way when Ana cancelled.
    Put back while the cancel can be undone, the draft it brings back holds " sync" already:
    his typing goes onto it once ("Design sync notes"), not twice."""
    ana_title, ben_title = both_editing(server, ana, ben)
    ben_title.send_keys(Keys.END, " sync")
    wait(ana, lambda d: ana_title.get_attribute("value") == "Design sync")
    ben.execute_script(HOLD_TYPING)
    ben_title.send_keys(" notes")
    wait(ben, lambda d: d.execute_script("return window.heldTyping.length") > 0)
    click(ana, ".cancel-edit")
    toast_says(ben, "Ana cancelled editing, with your typing in it: “Design sync notes” (Title).")
    assert not any("reached it" in toast for toast in toasts(ben)), toasts(ben)
    ben.execute_script("window.sendTyping()")
    click(ben, ".toast .edit-again")
    draft = "return window.standupsConnection.state.destination?.edit?.draft"
    for driver in (ana, ben):
        wait(driver, lambda d: (d.execute_script(draft) or {}).get("title") == "Design sync notes")


def ana_removes_the_attendee_ben_typed_in(server, ana, ben):
    """In the edit form, Ben's " the 3rd" after the third attendee's name reaches the room;
    then Ana removes that attendee."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 3)
    ben.find_elements(By.CSS_SELECTOR, ".attendees input")[2].send_keys(Keys.END, " the 3rd")
    wait(ana, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")]
         == ["Blob", "Blob Jr", "Blob Sr the 3rd"])
    ana.find_elements(By.CSS_SELECTOR, ".attendees li button")[2].click()


def test_a_removed_attendees_name_added_again_after_a_cancel_goes_back_into_its_row(server, ana, ben):
    """Ana removes the attendee Ben was typing in, then cancels the form and opens it again:
    the attendee is there again (the removal was never saved), and "Add it again" puts Ben's
    name into that row rather than into a second one beside it."""
    ana_removes_the_attendee_ben_typed_in(server, ana, ben)
    toast_says(ben, "The attendee you were typing in was removed: “Blob Sr the 3rd” is not in the draft.")
    click(ana, ".cancel-edit")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".attendee-list")))
    click(ana, ".edit")
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 3)
    click(ben, ".toast .add-again")
    for driver in (ana, ben):
        wait(driver, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")]
             == ["Blob", "Blob Jr", "Blob Sr the 3rd"])


def test_a_new_attendees_name_the_save_left_out_comes_back_in_a_new_row(server, ana, ben):
    """Ben adds an attendee and types a name; Ana saves before the name arrives, and the
    save drops the blank row. "Edit again with it" adds a row with that name."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    wait(ben, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .add-attendee"))).click()
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 4)
    wait(ben, lambda d: d.execute_script(NEW_ROW_FOCUSED, "Attendee 4 name"))
    ben.execute_script(HOLD_TYPING)
    ben.switch_to.active_element.send_keys("Dee")
    wait(ben, lambda d: d.execute_script("return window.heldTyping.length") > 0)
    click(ana, ".save-edit")
    toast_says(ben, "The form closed before your typing reached it: “Dee” (Attendee 4 name).")
    ben.execute_script("window.sendTyping()")
    # Ana has opened the form again meanwhile: Ben's typing goes into it.
    click(ana, ".edit")
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form")))
    click(ben, ".toast .edit-again")
    for driver in (ana, ben):
        wait(driver, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")]
             == ["Blob", "Blob Jr", "Blob Sr", "Dee"])
    assert not any("Edit again" in toast for toast in toasts(ben))


def test_a_name_typed_in_an_attendee_someone_removes_can_be_added_again(server, ana, ben):
    """Ben's typing reached the room; then Ana removes that attendee: his name is not gone
    without a word. He is told, and one press adds it again as a new attendee, for both."""
    ana_removes_the_attendee_ben_typed_in(server, ana, ben)
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 2)
    toast_says(ben, "The attendee you were typing in was removed: “Blob Sr the 3rd” is not in the draft.")
    # Ana removed someone Ben never typed in: she is told nothing.
    assert not any("you were typing in" in toast for toast in toasts(ana))
    click(ben, ".toast .add-again")
    for driver in (ana, ben):
        wait(driver, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")]
             == ["Blob", "Blob Jr", "Blob Sr the 3rd"])
    # The keyboard is back in the name, at its end; the toast, the only copy until then, goes.
    assert ben.execute_script("return document.activeElement.value") == "Blob Sr the 3rd"
    assert not any("you were typing in" in toast for toast in toasts(ben))
    # Ben types on in it, then removes it himself: that is no news to him.
    ben.switch_to.active_element.send_keys(" Jr")
    wait(ana, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")]
         == ["Blob", "Blob Jr", "Blob Sr the 3rd Jr"])
    ben.find_elements(By.CSS_SELECTOR, ".attendees li button")[2].click()
    for driver in (ana, ben):
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 2)
    # Anything he was told would be up by the time his Save's answer comes.
    click(ben, ".save-edit")
    text_in(ana, ".toasts", "Ben saved the changes.")
    assert not any("you were typing in" in toast for toast in toasts(ben))
    assert collect_console_errors(ben) == []


def test_typing_in_an_attendee_someone_removes_is_said_and_the_keys_typed_on_change_nothing(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 3)
    ben.execute_script(HOLD_TYPING)
    ben.find_elements(By.CSS_SELECTOR, ".attendees input")[2].send_keys(Keys.END, " the 3rd")
    wait(ben, lambda d: d.execute_script("return window.heldTyping.length") > 0)
    wait(ana, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees li button")) == 3)
    ana.find_elements(By.CSS_SELECTOR, ".attendees li button")[2].click()
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 2)
    toast_says(ben, "The attendee you were typing in was removed: “Blob Sr the 3rd” is not in the draft.")
    # The keyboard is on the list of attendees: not lost on the page, not in someone else's
    # name, not on Add attendee (the space of the next word would press it).
    assert ben.execute_script("return document.activeElement.classList.contains('attendees')")
    ben.switch_to.active_element.send_keys(" Jones" + Keys.ENTER)
    wait(ana, lambda d: "Ben" not in d.find_element(By.CSS_SELECTOR, ".attendees").text)
    for driver in (ana, ben):
        assert [i.get_attribute("value") for i in driver.find_elements(By.CSS_SELECTOR, ".attendees input")] \
            == ["Blob", "Blob Jr"]
    assert collect_console_errors(ben) == []


def test_someone_removing_an_attendee_above_leaves_the_keyboard_where_it_is(server, ana, ben):
    """Ana removes the first attendee while Ben types in the third: his row moves up, and his
    next keys go on into it."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 3)
    sr = ben.find_elements(By.CSS_SELECTOR, ".attendees input")[2]
    sr.send_keys(Keys.END, " the")
    wait(ana, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees li button")) == 3)
    ana.find_elements(By.CSS_SELECTOR, ".attendees li button")[0].click()
    wait(ben, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".attendees input")) == 2)
    # As a person types: to whatever has the keyboard.
    ActionChains(ben).send_keys(" 3rd").perform()
    for driver in (ana, ben):
        wait(driver, lambda d: [i.get_attribute("value") for i in d.find_elements(By.CSS_SELECTOR, ".attendees input")]
             == ["Blob Jr", "Blob Sr the 3rd"])
    assert ben.execute_script("return document.activeElement.getAttribute('aria-label')") == "Attendee 2 name"
    assert collect_console_errors(ben) == []


def test_escape_on_the_name_prompt_keeps_asking(open_server):
    # An --open server asks for a name; Escape must not leave a page that never connects.
    driver = chromium("")  # no name remembered: the page asks
    try:
        driver.get(open_server)
        prompt = wait(driver, EC.visibility_of_element_located((By.CSS_SELECTOR, "#name-dialog input")))
        prompt.send_keys(Keys.ESCAPE)
        # The prompt is (still, or again) open and focused.
        wait(driver, lambda d: d.find_element(By.ID, "name-dialog").get_attribute("open") is not None)
        wait(driver, lambda d: d.switch_to.active_element == prompt)
        prompt.send_keys("Dee" + Keys.ENTER)
        text_in(driver, "#status", "Live")
    finally:
        driver.quit()


def test_a_note_too_long_to_fit_is_refused_whole_and_says_so(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    ana.execute_script("arguments[0].value = 'x'.repeat(995)", note)
    # Typing up to the limit goes in; the key past it says how much fits.
    note.send_keys("abcdefgh")
    assert note.get_attribute("value") == "x" * 995 + "abcde"
    toast_says(ana, "“Add a note” holds 1000 characters at most.")
    # An insertion that would not fit changes nothing (the browser would take its first
    # characters, with no word), and says so.
    note.send_keys(Keys.BACKSPACE * 10)
    ana.execute_cdp_cmd("Input.insertText", {"text": "y" * 50})
    assert note.get_attribute("value") == "x" * 990
    toast_says(ana, "That would make 1040 characters; “Add a note” holds 1000 at most.")
    # A paste likewise: refused before the browser cuts it.
    refused = ana.execute_script("""
        const data = new DataTransfer();
        data.setData("text/plain", "z".repeat(20));
        return !arguments[0].dispatchEvent(new ClipboardEvent("paste",
          { clipboardData: data, bubbles: true, cancelable: true }));""", note)
    assert refused
    toast_says(ana, "That would make 1010 characters")
    # What fits is taken as ever.
    ana.execute_cdp_cmd("Input.insertText", {"text": "y" * 10})
    assert note.get_attribute("value") == "x" * 990 + "y" * 10
    assert collect_console_errors(ana) == []


def test_characters_count_as_people_see_them_in_the_page_and_on_the_server(server, ana, ben):
    """A family emoji is eight UTF-16 units and one character: the page counts it as the
    server does, so a note that fits the server's 1000 characters is taken whole."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    family = "\U0001F468\u200D\U0001F469\u200D\U0001F467"
    ana.execute_script("arguments[0].value = 'x'.repeat(998)", note)
    note.send_keys(Keys.END)
    ana.execute_cdp_cmd("Input.insertText", {"text": family})
    ana.execute_cdp_cmd("Input.insertText", {"text": "e\u0301"})  # e and a combining accent
    assert note.get_attribute("value") == "x" * 998 + family + "e\u0301"
    # A thousand characters now: one more is refused, however few units it has.
    ana.execute_cdp_cmd("Input.insertText", {"text": "y"})
    toast_says(ana, "“Add a note” holds 1000 characters at most.")
    assert note.get_attribute("value") == "x" * 998 + family + "e\u0301"
    note.send_keys(Keys.ENTER)
    # NB: the server takes it: its own count is the same.
    text_in(ben, ".transcript", "Ana: " + "x" * 998 + family + "e\u0301")
    assert collect_console_errors(ana) == []


def test_a_note_that_went_over_the_limit_is_kept_and_not_sent_until_it_fits(server, ana, ben):
    """A composition (an input method, most typing on a phone) or autofill is not refused
    key by key: if it ends over the limit, nothing is cut, the field says so, and the note
    is not sent until it fits."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    note.send_keys("Hello")
    # As an input method leaves it: the text is in, with no key to refuse.
    ana.execute_script("""
        arguments[0].value = 'w'.repeat(1004);
        arguments[0].dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText" }));
        """, note)
    toast_says(ana, "“Add a note” has 1004 characters; it holds 1000 at most.")
    note.send_keys(Keys.ENTER)
    assert note.get_attribute("value") == "w" * 1004
    # NB: Enter went nowhere: the browser's own check holds the form back, so nothing reached
    # the room (its sentence is the page's, not a refusal from the server).
    assert ana.execute_script("return arguments[0].validationMessage", note) == (
        "“Add a note” has 1004 characters; it holds 1000 at most.")
    note.send_keys(Keys.BACKSPACE * 4)
    assert ana.execute_script("return arguments[0].validationMessage", note) == ""
    note.send_keys(Keys.ENTER)
    text_in(ben, ".transcript", "Ana: " + "w" * 1000)
    assert "w" * 1001 not in ben.find_element(By.CSS_SELECTOR, ".transcript").text
    assert collect_console_errors(ana) == []


def test_a_name_too_long_says_so_on_the_join_page(server, ana):
    ana.get(server + "join#" + server.invite.split("#")[1])
    name = wait(ana, EC.element_to_be_clickable((By.NAME, "name")))
    name.clear()
    name.send_keys("N" * 45)
    assert name.get_attribute("value") == "N" * 40
    text_in(ana, "#join-form .form-error", "“Your name” holds 40 characters at most.")
    # The next change takes the sentence down.
    name.send_keys(Keys.BACKSPACE)
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, "#join-form .form-error").text == "")


def test_the_length_slider_follows_the_room_while_it_has_the_keyboard(server, ana, ben):
    both_editing(server, ana, ben)
    slider = ana.find_element(By.CSS_SELECTOR, ".edit-form .duration")
    slider.click()
    # Ben sets 8 minutes while Ana's slider has the keyboard: it moves to 8, label and all.
    ben.execute_script(
        "window.standupsConnection.send({type: 'edit.binding', path: '/duration', value: 480})")
    wait(ana, lambda d: slider.get_attribute("value") == "8")
    text_in(ana, ".duration-label", "8 min")
    # One step on from there, not from where Ana's slider had been: Ben's change stays made.
    slider.send_keys(Keys.ARROW_RIGHT)
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".duration-label").text == "9 min")
    wait(ana, lambda d: d.execute_script(
        "return window.standupsConnection.state.destination.edit.draft.duration") == 540)


def test_a_note_whose_answer_the_drop_lost_is_not_offered_again(server, ana, ben):
    """The note reaches the room but the connection drops before its answer: back in the room,
    the page sees the note in the transcript and empties the field, so pressing Add again does
    not write it twice. A note that never left goes again by itself, once."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    note.send_keys("arrived before the drop")
    ana.execute_script("document.querySelector('.note-form').requestSubmit();"
                       "window.standupsConnection.socket.close()")
    text_in(ben, ".transcript", "Ana: arrived before the drop")
    toast_says(ana, "Your note got into the meeting, though the connection dropped.")
    assert note.get_attribute("value") == ""
    text_in(ana, "#status", "Live")
    # One that was held back and never reached the room goes again once the page is back and
    # has seen that the room lacks it.
    ana.execute_script("""
        const socket = window.standupsConnection.socket;
        const send = socket.send.bind(socket);
        socket.send = (data) => data.includes('noteSubmitted') ? null : send(data);""")
    note.send_keys("never left")
    ana.execute_script("document.querySelector('.note-form').requestSubmit();"
                       "window.standupsConnection.socket.close()")
    text_in(ben, ".transcript", "Ana: never left")
    wait(ana, lambda d: note.get_attribute("value") == "")
    transcript = ben.find_element(By.CSS_SELECTOR, ".transcript").text
    assert transcript.count("arrived before the drop") == 1, transcript
    assert transcript.count("never left") == 1, transcript
    assert not any("may not have reached" in toast for toast in toasts(ana))
    assert collect_console_errors(ana) == []


def test_typing_left_behind_while_offline_is_offered_when_back_in_the_room(server, ana):
    """The server goes away while Ana types in the edit form, and she goes back to the lobby:
    what she typed, which never reached the room, is offered when she is back in the room."""
    from test_web_app import create_standup
    room = create_standup(ana, server)
    ana.get(room)
    text_in(ana, ".presence", "Ana (you)")
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    server.process.kill()
    server.process.wait(timeout=10)
    reconnecting(ana)
    title.send_keys(Keys.END, " offline")
    click(ana, ".back")
    # The server is back, with what it had saved (the open form's draft).
    start_again(server)
    ana.get(room)
    text_in(ana, "#toasts",
            "Your typing had not reached the room when you left it: “Design offline” (Title).")
    click(ana, "#toasts .edit-again")
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value")
         == "Design offline")
    # Offered once: a reload does not offer it again.
    ana.refresh()
    text_in(ana, ".presence", "Ana (you)")
    assert "had not reached the room" not in ana.find_element(By.ID, "toasts").text
    assert [entry for entry in collect_console_errors(ana)
            if "WebSocket" not in entry["message"] and "Failed to load" not in entry["message"]] == []


def test_typing_left_on_a_silent_network_is_offered_when_back_in_the_room(server, relay, ana):
    """The network goes silent while Ana types in the edit form (the page still says Live),
    and she goes back to the lobby: her change went nowhere, and is offered when she is back
    in the room. Typing that did reach the room is not offered when she leaves again."""
    from test_web_app import create_standup
    room = create_standup(ana, server).replace(server, relay.url)
    ana.get(room)
    text_in(ana, ".presence", "Ana (you)")
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    relay.silence()
    title.send_keys(Keys.END, " lost")
    assert ana.find_element(By.ID, "status").text == "Live"
    click(ana, ".back")
    text_in(ana, "#status", "Live")
    ana.get(room)
    text_in(ana, "#toasts",
            "Your typing had not reached the room when you left it: “Design lost” (Title).")
    click(ana, "#toasts .edit-again")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    wait(ana, lambda d: title.get_attribute("value") == "Design lost")
    assert "had not reached the room" not in ana.find_element(By.ID, "toasts").text
    # Online, what is typed reaches the room as she leaves: nothing is offered on her return.
    title.send_keys(" again")
    click(ana, ".back")
    text_in(ana, "#status", "Live")
    ana.get(room)
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    wait(ana, lambda d: title.get_attribute("value") == "Design lost again")
    assert "had not reached the room" not in ana.find_element(By.ID, "toasts").text


def test_a_note_typed_in_a_meeting_that_ended_while_the_page_was_away_is_offered_for_it(server, ana, ben):
    """Ana types a note and goes to the lobby without sending it; Ben ends and saves the meeting
    meanwhile. Back in the room, her note is offered for the meeting saved, not left for the
    next meeting's field. One typed in a meeting discarded meanwhile is kept in the box a
    discarded meeting's note has."""
    room = both_in_a_room(server, ana, ben)
    room_id = room.rsplit("/", 1)[-1]

    def ana_leaves_typing_and_ben_ends(note, how):
        """A meeting starts; Ana types `note` and goes to the lobby; Ben ends it (`how`: the
        alert's button)."""
        click(ben, ".start")
        wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys(note)
        click(ana, ".back")
        text_in(ana, "#status", "Live")
        click(ben, ".end")
        click(ben, f".end-alert {how}")

    ana_leaves_typing_and_ben_ends("typed before leaving", ".save")
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".history details")))
    ana.get(room)
    late = wait(ana, EC.visibility_of_element_located((By.ID, "late-note")))
    assert late.get_attribute("value") == "typed before leaving"
    # Added from the keyboard on its button: the keyboard is not dropped to the page as the
    # note goes (a disabled button loses it), and lands on the room's title with the form.
    ana.find_element(By.CSS_SELECTOR, ".late-note .add").send_keys(Keys.ENTER)
    text_in(ana, "#toasts", "Your note was added to the meeting that ended.")
    assert ana.execute_script("return document.activeElement.matches('.room-title')")
    click(ben, ".history summary")
    text_in(ben, ".history .notes", "Ana: typed before leaving")

    ana_leaves_typing_and_ben_ends("for a discarded one", ".discard")
    text_in(ben, ".undo-bar", "You discarded the meeting.")
    ana.get(room)
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".ended textarea").get_attribute("value")
         == "for a discarded one")
    text_in(ana, ".ended", "A meeting was discarded while you were typing a note.")
    # Kept there, it is not left for the next meeting's field as this one's.
    assert ana.execute_script(f"return sessionStorage.getItem('standups.note.{room_id}')") is None
    assert ana.execute_script(f"return sessionStorage.getItem('standups.discarded.{room_id}')") == "for a discarded one"
    assert collect_console_errors(ana) == []


def test_the_new_standup_form_takes_no_typing_while_its_add_is_on_its_way(server, ana):
    """What Add standup sends is what the form holds until the server answers: keys typed
    meanwhile would be wiped by the form's reset when the answer comes. The form says it is
    busy, its fields take no keys, and the standup is made as sent."""
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys("Zoe")
    title = ana.find_element(By.NAME, "title")
    title.send_keys("Planning")
    ana.execute_script("""
        const socket = window.standupsConnection.socket;
        const send = socket.send.bind(socket);
        window.held = [];
        window.release = () => { socket.send = send; window.held.forEach((data) => send(data)); };
        socket.send = (data) => data.includes('addStandupSubmitted') ? window.held.push(data) : send(data);""")
    title.send_keys(Keys.ENTER)
    wait(ana, lambda d: d.execute_script("return window.held.length") == 1)
    title.send_keys(" typo fix")
    assert title.get_attribute("value") == "Planning"
    assert ana.execute_script(
        "const form = document.getElementById('new-form');"
        "return [form.getAttribute('aria-busy'), form.title.readOnly,"
        " form.querySelector('.add-attendee').disabled]") == ["true", True, True]
    ana.execute_script("window.release()")
    text_in(ana, ".cards", "Planning")
    click(ana, "#new-standup")
    assert ana.execute_script(
        "const form = document.getElementById('new-form');"
        "return [form.title.value, form.getAttribute('aria-busy'), form.title.readOnly]") == ["", None, False]


def test_a_meeting_whose_save_failed_goes_on_with_the_note_back_in_its_field(server, ana, ben):
    """Ana ends and saves the meeting while the database is locked for longer than the server
    waits: the save fails and is undone, and the meeting comes back. Ben, typing a note as it
    ended, was offered it for the meeting saved; it goes back into his note field, and he is
    told the meeting could not be saved."""
    import sqlite3
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ben, EC.element_to_be_clickable((By.ID, "note"))).send_keys("half typed")
    blocker = sqlite3.connect(f"{server.data}/standups.sqlite", timeout=10, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        click(ana, ".end")
        click(ana, ".end-alert .save")
        late = wait(ben, EC.visibility_of_element_located((By.ID, "late-note")))
        assert late.get_attribute("value") == "half typed"
        # The server waits 5 s for the file, then gives the save up.
        toast_says(ben, "The meeting could not be saved, so it goes on: your note is back in its field.")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    note = wait(ben, EC.presence_of_element_located((By.ID, "note")))
    assert note.get_attribute("value") == "half typed"
    assert not ben.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    # His keyboard goes on in the field; the meeting's end alert, back with the meeting, opens
    # beside it, not over it.
    assert ben.execute_script("""
        const alert = document.querySelector('.end-alert');
        return [document.activeElement.id, alert.open, alert.matches(':modal')];""") == ["note", True, False]
    assert collect_console_errors(ben) == []


def test_a_new_standup_not_sent_for_want_of_a_connection_says_so_until_the_lobby_is_live(server, ana):
    """Add standup with the server away: the form says it was not sent and keeps what was
    typed; once the lobby is live again, that is past (not left under the form), and the
    same Add makes it."""
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Planning")
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys("Zoe")
    server.process.kill()
    server.process.wait(timeout=10)
    reconnecting(ana)
    click(ana, "#new-form button.primary")
    text_in(ana, "#new-form .form-error", "Not connected: try again in a moment.")
    start_again(server)
    text_in(ana, "#status", "Live", timeout=15)
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, "#new-form .form-error").text == "")
    assert ana.find_element(By.NAME, "title").get_attribute("value") == "Planning"
    click(ana, "#new-form button.primary")
    text_in(ana, ".card", "Planning")
    assert errors_beside_refused_connections(ana) == []


def test_the_new_standup_form_keeps_its_typing_through_a_reload_and_escape(server, ana):
    """The new-standup form is the page's own until it is added: a reload opens it again with
    what was typed, Escape closes it keeping that, Cancel and Add standup forget it."""
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Planning")
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys("Zoe")
    click(ana, ".add-attendee")
    ana.find_elements(By.CSS_SELECTOR, ".new-attendees input")[-1].send_keys("Yan")
    click(ana, "label.swatch[title=teal]")
    ana.refresh()
    text_in(ana, "#status", "Live")
    form = wait(ana, EC.visibility_of_element_located((By.ID, "new-form")))
    assert ana.find_element(By.NAME, "title").get_attribute("value") == "Planning"
    assert [i.get_attribute("value") for i in ana.find_elements(By.CSS_SELECTOR, ".new-attendees input")] \
        == ["Zoe", "Yan"]
    assert ana.find_element(By.CSS_SELECTOR, "input[name=new-theme][value=teal]").is_selected()
    assert ana.find_element(By.ID, "new-standup").get_attribute("aria-expanded") == "true"

    # Removing a row keeps the keyboard in the form (on the next row, or Add attendee).
    ana.find_elements(By.CSS_SELECTOR, ".new-attendees li button")[0].send_keys(Keys.ENTER)
    assert ana.switch_to.active_element.get_attribute("value") == "Yan"
    # Escape closes it and keeps the typing; New standup shows it again.
    ana.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(ana, lambda d: not form.is_displayed())
    assert ana.switch_to.active_element.get_attribute("id") == "new-standup"
    ana.refresh()
    text_in(ana, "#status", "Live")
    wait(ana, EC.visibility_of_element_located((By.ID, "new-form")))
    assert [i.get_attribute("value") for i in ana.find_elements(By.CSS_SELECTOR, ".new-attendees input")] == ["Yan"]

    # Added: forgotten, and a reload shows the form closed and empty.
    click(ana, "#new-form button.primary")
    text_in(ana, ".cards", "Planning")
    ana.refresh()
    text_in(ana, ".cards", "Planning")
    assert not ana.find_element(By.ID, "new-form").is_displayed()
    click(ana, "#new-standup")
    assert ana.find_element(By.NAME, "title").get_attribute("value") == ""

    # Cancel forgets it too, and gives the keyboard back to New standup.
    ana.find_element(By.NAME, "title").send_keys("Throwaway")
    click(ana, "#new-form .cancel")
    assert ana.switch_to.active_element.get_attribute("id") == "new-standup"
    ana.refresh()
    text_in(ana, "#status", "Live")
    assert not ana.find_element(By.ID, "new-form").is_displayed()
    assert collect_console_errors(ana) == []


def test_signing_out_names_a_new_standup_not_added_yet(server, ana):
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Planning" + Keys.ESCAPE)
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, "#name-dialog .form-error", "“Planning” (a new standup not added yet)")
    text_in(ana, "#name-dialog .sign-out", "Sign out anyway")
    assert collect_console_errors(ana) == []


def test_a_standup_deleted_while_the_page_was_away_says_so_with_what_was_typed(server, ana, ben):
    """Ana's connection is down while Ben deletes the standup and its undo window ends. Back,
    her page is refused (no such room: a bare close to a browser); it finds the standup gone
    and says so, with the note she had typed, instead of reconnecting for ever."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    note.send_keys("Nobody heard this")
    ana.execute_script(HOLD_RECONNECT)
    ana.execute_script("window.standupsConnection.socket.close()")
    reconnecting(ana)
    click(ben, ".end")
    click(ben, ".end-alert .discard")
    click(ben, ".delete")
    click(ben, ".delete-alert .confirm")
    text_in(ben, "h1", "This standup was deleted.", timeout=20)
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "h1", "This standup was deleted.", timeout=30)
    text_in(ana, ".typed-here", "“Nobody heard this”")
    assert ana.find_elements(By.CSS_SELECTOR, ".reconnect") == []
    # To the lobby and back: the page, opened afresh, still shows it.
    click(ana, ".gone a[href='#/']")
    text_in(ana, "#status", "Live")
    ana.back()
    text_in(ana, "h1", "There is no such standup.", timeout=30)
    text_in(ana, ".typed-here", "“Nobody heard this” (your note)")
    # NB: Chromium logs each 404 itself (the refused openings, the look for the standup); the
    # page logs nothing.
    assert [e for e in collect_console_errors(ana) if e["source"] != "network"] == []


def test_a_late_note_on_its_way_as_the_page_reloads_is_not_offered_again(server, ana, ben):
    """Ana adds a late note and the page reloads before its answer comes: the page kept it as
    unsure before it went, so back in the room it looks in the meeting and says it arrived,
    instead of offering it again (pressed again, it went in twice)."""
    ana_types_a_late_note(server, ana, ben)
    ana.execute_script("""
        const send = WebSocket.prototype.send;
        WebSocket.prototype.send = function (data) {
          send.call(this, data);
          if (String(data).includes('"history.noteSubmitted"')) {
            // NB: its answer is not read before the page goes, however fast it comes.
            this.onmessage = null;
            location.reload();
          }
        };""")
    ActionChains(ana).send_keys(Keys.ENTER).perform()
    wait(ben, lambda d: d.execute_script(NEWEST_MEETINGS_NOTES) == [["Blob", "Ana: Half a thought"]])
    text_in(ana, "#toasts", "Your note got into the meeting that ended, though the connection dropped")
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    wait(ana, lambda d: d.execute_script(NEWEST_MEETINGS_NOTES) == [["Blob", "Ana: Half a thought"]])
    assert collect_console_errors(ana) == []


def test_typing_whose_answer_a_drop_hid_and_that_was_saved_is_not_said_to_be_lost(server, ana, ben):
    """Ana's change reaches the room but her connection drops before its answer; while she is
    away Ben saves the form, her change in it. Back, the form closed: her page finds the
    saved standup holds her typing, and says nothing of typing that did not reach it."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    ana.execute_script(HOLD_RECONNECT)
    close_right_after(ana, "edit.binding")
    title.send_keys(Keys.END, " review")
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value")
         == "Design review")
    click(ben, ".save-edit")
    text_in(ben, ".room-title", "Design review")
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "#status", "Live")
    text_in(ana, ".room-title", "Design review")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".attendee-list")))
    assert not any("did not reach" in toast or "before your typing" in toast for toast in toasts(ana))
    assert collect_console_errors(ana) == []


def test_a_note_whose_answer_a_drop_hid_in_a_meeting_saved_meanwhile_is_not_offered_again(server, ana, ben):
    """Ana's note reaches the meeting but her connection drops before its answer; while she is
    away Ben saves and ends the meeting and leaves, and the room closes. Back, her page gets
    the room afresh (no patches to replay): it finds the note in the meeting as saved, and
    does not offer it again as a late note (added, it went in twice)."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    note = wait(ana, EC.element_to_be_clickable((By.ID, "note")))
    ana.execute_script(HOLD_RECONNECT)
    close_right_after(ana, "meeting.noteSubmitted")
    note.send_keys("Shipped it" + Keys.ENTER)
    text_in(ben, ".transcript", "Ana: Shipped it")
    click(ben, ".end")
    click(ben, ".end-alert .save")
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".attendee-list")))
    click(ben, ".back")
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".card")))
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "#status", "Live")
    # NB: the room opened afresh knows nothing of who ended it.
    text_in(ana, ".ended", "saved.")
    assert ana.execute_script("return window.standupsConnection.resumed") is False
    assert not ana.find_element(By.CSS_SELECTOR, ".late-note").is_displayed()
    wait(ana, lambda d: d.execute_script(NEWEST_MEETINGS_NOTES) == [["Blob", "Ana: Shipped it"]])
    assert collect_console_errors(ana) == []


def test_typing_sent_as_the_page_reloads_is_found_among_the_patches_replayed(server, ana, ben):
    """Ana types and reloads at once: the typing goes as the page leaves, and the page kept
    in the tab what it sent. Back (a resumed welcome, her change among the patches it is
    followed by), the page looks for it in the room as it is once caught up, not in the
    state it left with, and says nothing of typing that did not reach the room."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    # NB: the typing's pause never ends (its timer is dropped): it goes only as the page
    # leaves, kept in the tab as typing left unanswered.
    ana.execute_script("""
        const setTimeout = window.setTimeout;
        window.setTimeout = (run, ms, ...rest) => ms >= 0 && ms <= 150 ? 0 : setTimeout(run, ms, ...rest);""")
    title.send_keys(Keys.END, " review")
    assert ana.execute_script(
        "return window.standupsConnection.state.destination.edit.draft.title") == "Design"
    ana.refresh()
    text_in(ana, "#status", "Live")
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value")
         == "Design review")
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value")
         == "Design review")
    assert ana.execute_script("return window.standupsConnection.resumed") is True
    assert not any("did not reach" in toast or "had not reached" in toast for toast in toasts(ana))
    assert collect_console_errors(ana) == []


def test_typing_in_a_form_that_closed_while_away_never_goes_into_the_one_opened_since(server, ana, ben):
    """Ana types while her connection is down; meanwhile Ben cancels the form and opens it
    again. Back (her page replays the form closing and opening), she is told her typing did
    not reach the form, and it is not merged into Ben's new draft behind his back."""
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    ana.execute_script(HOLD_RECONNECT)
    ana.execute_script("window.standupsConnection.socket.close()")
    reconnecting(ana)
    title.send_keys(Keys.END, " offline")
    click(ben, ".cancel-edit")
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".attendee-list")))
    click(ben, ".edit")
    wait(ben, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    ana.execute_script("window.mayReconnect = true")
    text_in(ana, "#status", "Live")
    toast_says(ana, "The form closed before your typing reached it: “Design offline” (Title).")
    # Whatever the page would send on coming back went before this answer.
    ana.execute_async_script("""
        const done = arguments[arguments.length - 1];
        window.standupsConnection.send({ type: "focusChanged", field: null }).then(done, done);""")
    assert ben.execute_script("return window.standupsConnection.state.destination.edit.draft.title") == "Design"
    assert ben.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value") == "Design"
    assert collect_console_errors(ana) == []


def test_a_note_of_a_tab_closed_beside_another_with_a_note_is_offered_there_at_once(server, ana, ben):
    """Ana has the meeting open in two tabs and types a note in each; she closes the second.
    The first, which holds a note of its own, says at once that the closed tab held one, and
    adds it to hers when asked; the browser then keeps it no more."""
    room = both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys("Mine")
    first = ana.current_window_handle
    ana.switch_to.new_window("tab")
    ana.get(room)
    wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys("typed in the second tab")
    ana.close()
    ana.switch_to.window(first)
    text_in(ana, "#toasts", "A tab you closed held a note for this meeting too: “typed in the second tab”.")
    assert ana.find_element(By.ID, "note").get_attribute("value") == "Mine"
    click(ana, "#toasts .toast button:not(.dismiss)")
    wait(ana, lambda d: d.find_element(By.ID, "note").get_attribute("value") == "Mine typed in the second tab")
    assert ana.switch_to.active_element.get_attribute("id") == "note"
    # NB: what is left is the mark that it was taken, for the closed tab should it come back.
    assert ana.execute_script("return JSON.parse(localStorage.getItem('standups.closedTabs')).tabs") == []
    assert not [toast for toast in toasts(ana) if "A tab you closed" in toast]
    # Sent, it is one note of Ana's in the meeting.
    ana.find_element(By.ID, "note").send_keys(Keys.ENTER)
    text_in(ben, ".transcript", "Ana: Mine typed in the second tab")
    assert collect_console_errors(ana) == []


def test_a_discarded_meetings_note_says_where_it_goes_as_the_undo_goes(server, ana, ben):
    """While the discarded meeting can be brought back, its note's box says it goes into it if
    someone does, or else into the next; once it cannot (Ben opened the edit form, which took
    the Undo's place), into the next meeting."""
    ben_ends_as_ana_types(server, ana, ben, "Half a thought", ".discard")
    text_in(ana, ".ended .unsent", "goes into the meeting if someone brings it back, or else into the next one.")
    click(ben, ".edit")
    click(ben, ".cancel-edit")
    text_in(ana, ".ended .unsent", "Your note was not sent: it is kept here, in this tab, and goes into the next meeting.")
    assert ana.find_element(By.CSS_SELECTOR, ".ended textarea").get_attribute("value") == "Half a thought"
    assert collect_console_errors(ana) == []
