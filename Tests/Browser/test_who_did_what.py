"""Who did what, said to everyone in the room; undo for 10 s; the history and its download."""
import csv
import io

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from conftest import chromium, collect_console_errors, resize, screenshot, sign_in, start_again
from test_web_app import both_in_a_room, click, clock_reaches, create_standup, said, text_in, wait


def test_others_hear_who_did_what_and_anyone_can_bring_back_a_discarded_meeting(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    text_in(ben, ".toasts", "Ana started the meeting.")
    click(ben, ".next")
    text_in(ana, ".toasts", "Ben moved on to Blob Jr.")
    ana.find_element(By.ID, "note").send_keys("Keep this note\n")
    text_in(ben, ".transcript", "Ana: Keep this note")

    click(ana, ".end")
    # The dialog Ben gets says who asked; a notice under its backdrop would say it unseen.
    text_in(ben, ".end-alert .asked", "Ana asked to end the meeting.")
    assert "asked to end" not in ben.find_element(By.CSS_SELECTOR, ".toasts").text
    assert not ana.find_element(By.CSS_SELECTOR, ".end-alert .asked").is_displayed()
    click(ana, ".end-alert .discard")
    text_in(ben, ".undo-bar", "Ana discarded the meeting.")
    # The ask to end is past: its toast goes with the meeting.
    assert "asked to end" not in ben.find_element(By.CSS_SELECTOR, ".toasts").text
    # Said once: by the bar that can undo it, not again by a notice.
    assert not ben.find_element(By.CSS_SELECTOR, ".ended").is_displayed()
    text_in(ana, ".undo-bar", "You discarded the meeting.")
    screenshot(ben, "undo-discard")
    click(ben, ".undo-bar .undo")
    # Back for both, on the same speaker, with its notes; and ticking.
    for driver in (ana, ben):
        text_in(driver, ".speaker", "Speaker 2 of 3: Blob Jr")
        text_in(driver, ".transcript", "Ana: Keep this note")
        wait(driver, EC.invisibility_of_element_located((By.CSS_SELECTOR, ".undo-bar")))
    said(ana, "Ben brought the meeting back.")
    before = ana.find_element(By.CSS_SELECTOR, ".elapsed").text
    wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".elapsed").text != before, timeout=5)
    for driver in (ana, ben):
        assert collect_console_errors(driver) == []


def test_an_undo_a_server_restart_took_is_said_to_be_gone(server, ana, ben):
    """The server dies within a discarded meeting's 10 s: the room opened afresh keeps no undo.
    The page says the meeting can no longer be brought back, rather than let its Undo bar
    vanish without a word."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    # The meeting, and its note field, come with the server's answer to Start.
    text_in(ana, ".speaker", "Speaker 1 of 3: Blob")
    ana.find_element(By.ID, "note").send_keys("Keep this note\n")
    text_in(ben, ".transcript", "Ana: Keep this note")
    click(ana, ".end")
    click(ana, ".end-alert .discard")
    text_in(ben, ".undo-bar", "Ana discarded the meeting.")
    server.process.kill()
    server.process.wait(timeout=10)
    start_again(server)
    for driver in (ana, ben):
        said(driver, "The room was reopened while you were away: the discarded meeting can no longer be brought back.")
        assert not driver.find_element(By.CSS_SELECTOR, ".undo-bar").is_displayed()
        text_in(driver, "#status", "Live")


def test_a_double_click_on_next_is_one_press(server, ana, ben):
    """Next double-clicked skips one speaker, and says nothing of a second press refused."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    text_in(ana, ".speaker", "Speaker 1 of 3: Blob")
    # Past the first second of Blob's turn, when a press is taken for one meant for the last.
    clock_reaches(ana, ".elapsed", lambda elapsed: elapsed >= 2, timeout=6)
    ActionChains(ana).double_click(ana.find_element(By.CSS_SELECTOR, ".next")).perform()
    for driver in (ana, ben):
        text_in(driver, ".speaker", "Speaker 2 of 3: Blob Jr")
    # Ben's page heard of it after Ana's answers came: anything Ana was told is up by now.
    text_in(ben, ".toasts", "Ana moved on to Blob Jr.")
    assert "already changed" not in ana.find_element(By.CSS_SELECTOR, ".toasts").text
    assert ana.find_element(By.CSS_SELECTOR, ".speaker").text == "Speaker 2 of 3: Blob Jr"
    # A press after the answer is another press: it skips again.
    click(ana, ".next")
    text_in(ben, ".speaker", "Speaker 3 of 3: Blob Sr")


def test_next_pressed_just_as_someone_else_moved_on_asks_again(server, ana, ben):
    """Two people pressing Next for one speaker skip only that one: a press within a second of
    someone else moving on asks for another press, rather than skipping who just came up."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    text_in(ben, ".speaker", "Speaker 1 of 3: Blob")
    # Ana skips two on purpose: her own second press is not held back.
    click(ana, ".next")
    text_in(ana, ".speaker", "Speaker 2 of 3: Blob Jr")
    text_in(ben, ".speaker", "Speaker 2 of 3: Blob Jr")
    # Ben meant to skip Blob Jr too, and presses as Blob Sr comes up on his screen: his page
    # presses the moment it draws him (a test's own polling could come a second late).
    ben.execute_script("""
        new MutationObserver((_, observer) => {
          if (!document.querySelector('.speaker')?.textContent.includes('Speaker 3 of 3')) return;
          observer.disconnect();
          document.querySelector('.next').click();
        }).observe(document.getElementById('app'), { subtree: true, childList: true, characterData: true });""")
    click(ana, ".next")
    text_in(ana, ".speaker", "Speaker 3 of 3: Blob Sr")
    text_in(ben, ".toasts", "Blob Sr just came up: press Next again to skip them.")
    assert not ben.find_element(By.CSS_SELECTOR, ".end-alert").is_displayed()
    text_in(ana, ".speaker", "Speaker 3 of 3: Blob Sr")
    # Pressed again, it goes: on the last speaker, Next asks to end.
    click(ben, ".next")
    for driver in (ana, ben):
        wait(driver, EC.visibility_of_element_located((By.CSS_SELECTOR, ".end-alert")))
    assert collect_console_errors(ben) == []


def test_a_cancelled_draft_comes_back_with_what_was_typed(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".edit")
    text_in(ben, ".toasts", "Ana started editing.")
    title = wait(ana, EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    title.send_keys(" sync")
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value") == "Design sync")
    click(ben, ".cancel-edit")
    text_in(ana, ".undo-bar", "Ben cancelled editing.")
    click(ana, ".undo-bar .undo")
    for driver in (ana, ben):
        wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title").get_attribute("value") == "Design sync")
    # The keyboard, on Undo, goes into the draft that came back, not to the page's heading.
    assert ana.execute_script("return document.activeElement.classList.contains('title')")
    click(ana, ".save-edit")
    for driver in (ana, ben):
        text_in(driver, ".room-title", "Design sync")
    text_in(ben, ".toasts", "Ana saved the changes.")
    for driver in (ana, ben):
        assert collect_console_errors(driver) == []


def download(driver, selector):
    """What the page's download link gives: status, type and text (fetched as the page would)."""
    href = driver.find_element(By.CSS_SELECTOR, selector).get_attribute("href")
    return driver.execute_async_script(
        """const done = arguments[arguments.length - 1];
        fetch(arguments[0]).then(async (r) => done({status: r.status, type: r.headers.get('content-type'),
          disposition: r.headers.get('content-disposition'), text: await r.text()}));""", href)


def test_the_history_downloads_as_markdown_and_csv(server, ana, ben):
    # Ana's browser is in Paris: the Markdown gives its times there, as the page does.
    ana.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Europe/Paris"})
    both_in_a_room(server, ana, ben)
    # Nothing to download before the first meeting is saved.
    assert not ana.find_element(By.CSS_SELECTOR, ".export").is_displayed()
    click(ana, ".start")
    for driver in (ana, ben):
        text_in(driver, ".speaker", "Speaker 1 of 3: Blob")
    ana.find_element(By.ID, "note").send_keys("Shipped, with \"quotes\"\n")
    text_in(ben, ".transcript", "Shipped")
    clock_reaches(ben, ".elapsed", lambda elapsed: elapsed >= 2, timeout=6)  # it really runs two seconds
    click(ben, ".next")
    text_in(ana, ".speaker", "Speaker 2 of 3: Blob Jr")
    ben.find_element(By.ID, "note").send_keys("=cmd|' /C calc'!A0\n")
    text_in(ana, ".transcript", "Ben: =cmd")
    click(ana, ".end")
    click(ana, ".end-alert .save")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".history details")))
    wait(ana, EC.visibility_of_element_located((By.CSS_SELECTOR, ".export")))

    markdown = download(ana, ".export-md")
    assert markdown["status"] == 200
    assert markdown["type"] == "text/markdown; charset=utf-8"
    assert markdown["disposition"] == 'attachment; filename="design-history.md"'
    lines = markdown["text"].splitlines()
    assert lines[0] == "# Design: meeting history"
    assert "Present: Ana, Ben" in lines
    assert [line for line in lines if line.startswith("## ")][0].split(" · ")[0].endswith(" (Europe/Paris)"), lines
    assert lines.index("### Blob") < lines.index('- **Ana**: Shipped, with "quotes"') < lines.index("### Blob Jr")
    assert "- **Ben**: =cmd\\|' /C calc'!A0" in lines  # shown literally (| escaped)

    table = download(ana, ".export-csv")
    assert table["status"] == 200
    rows = list(csv.DictReader(io.StringIO(table["text"], newline="")))
    assert [(row["speaker"], row["author"], row["note"]) for row in rows] == [
        ("Blob", "Ana", 'Shipped, with "quotes"'),
        ("Blob Jr", "Ben", "'=cmd|' /C calc'!A0"),  # a spreadsheet must not run it
    ]
    # Its length is the time it really ran (Next moves the clock on, not the length).
    assert all(row["present"] == "Ana; Ben" and 2 <= int(row["length_seconds"]) < 60 for row in rows)
    for driver in (ana, ben):
        assert collect_console_errors(driver) == []


def test_a_long_name_without_spaces_wraps_at_phone_width(server, ana):
    long = "Bartholomew" + "x" * 29
    room = create_standup(ana, server)
    driver = chromium(long)
    try:
        sign_in(driver, server)
        resize(driver, "phone")
        overflow = "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        text_in(driver, "#me", long[:10])
        assert driver.execute_script(overflow) == 0, "the header is wider than the phone"
        driver.get(room)
        text_in(driver, ".presence", long[:10])
        assert driver.execute_script(overflow) == 0, "the room is wider than the phone"
        # In the shared form, the others see where that person is: a chip, cut short.
        click(driver, ".edit")
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title"))).click()
        ana.get(room)
        resize(ana, "phone")
        chip = wait(ana, EC.visibility_of_element_located((By.CSS_SELECTOR, ".chips[data-for=title] .chip")))
        assert chip.get_attribute("title") == long
        assert ana.execute_script(overflow) == 0, "the form is wider than the phone"
        # Back in the lobby, the room's card shows the name without widening the page either.
        ana.get(server)
        text_in(ana, ".card .live", long[:10])
        assert ana.execute_script(overflow) == 0, "the lobby is wider than the phone"
        screenshot(ana, "long-name")
        assert collect_console_errors(driver) == []
    finally:
        driver.quit()
        resize(ana, "desktop")


def test_a_long_unbroken_title_wraps_at_phone_width(server, ana):
    title = "Supercalifragilisticexpialidocious" * 2 + "Antidisestablishmentarianism" * 1
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys(title)
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys("Blob")
    click(ana, "#new-form button.primary")
    card = wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".card")))
    room = card.get_attribute("href")
    resize(ana, "phone")
    overflow = "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert ana.execute_script(overflow) == 0, "the lobby is wider than the phone"
    ana.get(room)
    text_in(ana, ".room-title", title[:20])
    assert ana.execute_script(overflow) == 0, "the room is wider than the phone"
    click(ana, ".start")
    text_in(ana, ".speaker", "Blob")
    assert ana.execute_script(overflow) == 0, "the meeting is wider than the phone"
    # A note with no space to break at (a pasted link) wraps in the notes, too.
    link = "https://ci.example/builds/" + "a1b2c3d4" * 30
    note = ana.find_element(By.ID, "note")
    note.send_keys(link)
    note.send_keys(Keys.ENTER)
    text_in(ana, ".transcript", link[:40])
    assert ana.execute_script(overflow) == 0, "a long note made the meeting wider than the phone"
    height = ana.find_element(By.CSS_SELECTOR, ".room-title").size["height"]
    assert height > 40, "the title did not wrap"
    resize(ana, "desktop")
    assert collect_console_errors(ana) == []


def test_older_meetings_show_a_page_at_a_time(server, ana):
    """A standup with 12 meetings: the page shows the 10 recent, then the 2 older on request."""
    from test_web_app import create_standup
    room = create_standup(ana, server)
    ana.get(room)
    text_in(ana, ".presence", "Ana")
    for index in range(12):
        click(ana, ".start")
        wait(ana, EC.element_to_be_clickable((By.ID, "note"))).send_keys(f"Meeting {index}\n")
        text_in(ana, ".transcript", f"Meeting {index}")
        click(ana, ".end")
        click(ana, ".end-alert .save")
        wait(ana, lambda d, n=index: len(d.find_elements(By.CSS_SELECTOR, ".history:not(.older) > li")) == min(n + 1, 10))
        # Saved, also once the state's history is full (it keeps 10; the rest are older).
        text_in(ana, ".ended", "You ended the meeting — saved.")
    text_in(ana, ".facts", "12")
    assert ana.find_element(By.CSS_SELECTOR, ".show-older").is_displayed()
    # From the keyboard: the button goes with the last page, and the keyboard goes to the
    # oldest meeting, not to the top of the page.
    ana.execute_script("document.querySelector('.show-older').focus()")
    ana.switch_to.active_element.send_keys(Keys.ENTER)
    wait(ana, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".history.older > li")) == 2)
    wait(ana, EC.invisibility_of_element_located((By.CSS_SELECTOR, ".show-older")))
    wait(ana, lambda d: d.execute_script(
        "return document.activeElement === document.querySelector('.history.older li:last-child summary')"))
    ana.switch_to.active_element.send_keys(Keys.ENTER)
    text_in(ana, ".history.older", "Meeting 0")
    assert collect_console_errors(ana) == []


def test_time_up_says_the_meeting_was_saved(server, ana, ben):
    """50 speakers: skipping to the last leaves 6 s, then the meeting saves itself."""
    ana.get(server)
    text_in(ana, "#status", "Live")
    ana.execute_script("""return window.standupsConnection.send({type: "addStandupSubmitted", standup: {
        title: "Quick", duration: 300, theme: "teal",
        attendees: Array.from({length: 50}, (_, i) => ({name: `P${i + 1}`}))}})""")
    card = wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".card")))
    room = card.get_attribute("href")
    for driver in (ana, ben):
        driver.get(room)
        text_in(driver, ".room-title", "Quick")
    click(ana, ".start")
    text_in(ben, ".speaker", "Speaker 1 of 50")
    ben.find_element(By.ID, "note").send_keys("Half typed")
    for index in range(49):
        ana.execute_script(
            "return window.standupsConnection.send({type: 'meeting.nextButtonTapped', from: arguments[0]})", index)
    text_in(ana, ".speaker", "Speaker 50 of 50")
    for driver in (ana, ben):
        text_in(driver, ".ended", "Time's up — meeting saved.", timeout=15)
    # The note Ben was typing is offered for the meeting just saved.
    assert ben.find_element(By.ID, "late-note").get_attribute("value") == "Half typed"
    text_in(ben, ".history summary", "s ·")


def test_a_note_being_typed_comes_back_with_a_discarded_meeting(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ben, EC.element_to_be_clickable((By.ID, "note"))).send_keys("typing unsent")
    click(ana, ".end")
    click(ana, ".end-alert .discard")
    # Offered to copy while the meeting is gone…
    wait(ben, lambda d: d.find_element(By.CSS_SELECTOR, ".ended textarea").get_attribute("value") == "typing unsent")
    # …and back in the field when the meeting comes back.
    click(ben, ".undo-bar .undo")
    note = wait(ben, EC.element_to_be_clickable((By.ID, "note")))
    assert note.get_attribute("value") == "typing unsent"
    # Sent, it is gone from the field and kept nowhere: a later meeting starts empty.
    note.send_keys("\n")
    text_in(ana, ".transcript", "Ben: typing unsent")
    click(ana, ".end")
    click(ana, ".end-alert .discard")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".undo-bar")))
    click(ana, ".start")
    note = wait(ben, EC.element_to_be_clickable((By.ID, "note")))
    assert note.get_attribute("value") == ""
    assert collect_console_errors(ben) == []


def test_a_person_in_two_tabs_shows_once_with_how_many(server, ana, ben):
    room = both_in_a_room(server, ana, ben)
    first = ana.current_window_handle
    ana.switch_to.new_window("tab")
    ana.get(room)
    chips = "return [...document.querySelectorAll('.presence .person')].map((chip) => chip.textContent);"
    # NB: "×2" on screen, ", on 2 connections" for a screen reader; you first, then the others.
    wait(ben, lambda d: d.execute_script(chips) == ["Ben (you)", "Ana ×2, on 2 connections"])
    wait(ana, lambda d: d.execute_script(chips) == ["Ana (you) ×2, on 2 connections", "Ben"])
    # What she does in this tab, her first tab says as hers, not as "Ana"'s.
    click(ana, ".start")
    said(ben, "Ana started the meeting.")
    second = ana.current_window_handle
    ana.switch_to.window(first)
    said(ana, "You, in another tab, started the meeting.")
    assert not any("Ana started" in toast for toast in ana.execute_script("return window.standupsToastLog"))
    ana.switch_to.window(second)
    # One tab closed: one Ana, as before.
    ana.close()
    ana.switch_to.window(first)
    wait(ben, lambda d: d.execute_script(chips) == ["Ben (you)", "Ana"])
    assert collect_console_errors(ben) == []


def test_two_people_who_chose_one_name_show_as_two_and_only_one_is_you(server, ben):
    room = create_standup(ben, server)
    ben.get(room)
    chips = "return [...document.querySelectorAll('.presence .person')].map((chip) => chip.textContent);"
    wait(ben, lambda d: d.execute_script(chips) == ["Ben (you)"])
    # Somebody else signs in as "Ben" too: two people, not "Ben (you) ×2".
    other = chromium("Ben")
    try:
        sign_in(other, server)
        other.get(room)
        wait(ben, lambda d: d.execute_script(chips) == ["Ben (you)", "Ben"])
        wait(other, lambda d: d.execute_script(chips) == ["Ben (you)", "Ben"])
        # One of them in a second tab is still one person, with how many.
        other.switch_to.new_window("tab")
        other.get(room)
        wait(ben, lambda d: d.execute_script(chips) == ["Ben (you)", "Ben ×2, on 2 connections"])
        assert collect_console_errors(other) == []
    finally:
        other.quit()
    assert collect_console_errors(ben) == []


def test_a_notice_leaves_the_meetings_buttons_and_note_field_in_sight(server, ana, ben):
    """At the bottom of the screen a notice would lie over Next speaker and End meeting (on a
    small phone) or over the note field people type in (on a laptop) for the seconds it shows,
    and a note set aside for good: it shows at the top."""
    both_in_a_room(server, ana, ben)
    overlapping = """
        const toast = document.querySelector('.toast').getBoundingClientRect();
        return [...document.querySelectorAll('.meeting button, #note')].filter((element) => {
          const box = element.getBoundingClientRect();
          return box.bottom > 0 && box.top < innerHeight && box.left < toast.right
            && box.right > toast.left && box.top < toast.bottom && box.bottom > toast.top;
        }).map((element) => element.textContent || element.id);"""
    resize(ana, "desktop")
    resize(ben, "small phone")
    try:
        click(ana, ".start")
        for driver in (ana, ben):
            wait(driver, EC.visibility_of_element_located((By.ID, "note")))
        text_in(ben, ".toasts", "Ana started the meeting.")
        assert ben.execute_script(overlapping) == []
        click(ben, ".next")
        text_in(ana, ".toasts", "Ben moved on to Blob Jr.")
        # The note field is in sight there (else nothing would be over it to find).
        assert ana.execute_script("return document.querySelector('#note').getBoundingClientRect().top < innerHeight")
        assert ana.execute_script(overlapping) == []
    finally:
        resize(ben, "desktop")


def test_someone_renaming_themselves_in_a_meeting_is_present_once(server, ana, ben):
    """Ana changes her name during the meeting: the saved meeting lists her once, by the name
    she goes by now."""
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    wait(ben, EC.element_to_be_clickable((By.ID, "note")))
    click(ana, "#me")
    field = wait(ana, EC.visibility_of_element_located((By.CSS_SELECTOR, "#name-dialog input")))
    field.clear()
    field.send_keys("Ana C" + Keys.ENTER)
    text_in(ben, ".presence", "Ana C")
    wait(ben, lambda d: "Ana\n" not in d.find_element(By.CSS_SELECTOR, ".presence").text + "\n")
    click(ben, ".end")
    click(ben, ".end-alert .save")
    wait(ana, EC.presence_of_element_located((By.CSS_SELECTOR, ".history details")))
    click(ana, ".history summary")
    text_in(ana, ".history summary", "2 people")
    text_in(ana, ".history .present", "Present: Ana C, Ben")
    assert collect_console_errors(ana) == []
