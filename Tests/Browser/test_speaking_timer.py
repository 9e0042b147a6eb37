"""The speaking timer in real Chromium: the turn, who is next, the chime (muted and remembered)."""
from selenium.webdriver.common.by import By

from conftest import collect_console_errors, resize, screenshot
from test_web_app import both_in_a_room, click, clock_reaches, text_in, wait


def chimes(driver):
    return driver.execute_script("return window.standupsChimes ?? 0")


def test_the_speaker_s_turn_who_is_next_and_a_chime_on_each_change(server, ana, ben):
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    for driver in (ana, ben):
        text_in(driver, ".speaker", "Speaker 1 of 3: Blob")
        text_in(driver, ".up-next", "Up next: Blob Jr")
        # 300 s for three people: 100 s each, counting down.
        clock_reaches(driver, ".turn-left", lambda left: 97 <= left <= 99)
    screenshot(ana, "speaking-timer")
    assert chimes(ana) == 0

    click(ben, ".next")
    text_in(ana, ".speaker", "Speaker 2 of 3: Blob Jr")
    text_in(ana, ".up-next", "Up next: Blob Sr")
    wait(ana, lambda d: chimes(d) == 1)

    # Ana mutes the chime; it stays muted after a reload.
    click(ana, ".chime-toggle")
    assert ana.find_element(By.CSS_SELECTOR, ".chime-toggle").get_attribute("aria-pressed") == "false"
    ana.refresh()
    text_in(ana, ".speaker", "Speaker 2 of 3: Blob Jr")
    assert ana.find_element(By.CSS_SELECTOR, ".chime-toggle").get_attribute("aria-pressed") == "false"
    click(ben, ".next")
    text_in(ana, ".speaker", "Speaker 3 of 3: Blob Sr")
    text_in(ana, ".up-next", "Last speaker")
    assert chimes(ana) == 0  # (a fresh page after the reload, and muted)
    for driver in (ana, ben):
        assert collect_console_errors(driver) == []


def test_a_reload_alone_in_the_room_keeps_the_meeting_going(server, ana):
    """The only person in the room reloads: the room empties for a moment, and the meeting
    goes on by itself when they are back, instead of waiting paused for a Resume."""
    from test_web_app import create_standup
    room = create_standup(ana, server)
    ana.get(room)
    text_in(ana, ".presence", "Ana")
    click(ana, ".start")
    clock_reaches(ana, ".elapsed", lambda elapsed: elapsed >= 1, timeout=6)
    # Every state the reloaded page puts on screen, even for a moment: the room did pause while
    # it was empty, and those patches come back with the resumed welcome; drawn one by one,
    # "Paused: everyone had left." flashed up before the meeting went on.
    ana.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.standupsPausesShown = [];
        new MutationObserver(() => {
          const paused = document.querySelector(".paused");
          if (paused && !paused.hidden) window.standupsPausesShown.push(paused.textContent.trim());
        }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    """})
    ana.refresh()
    text_in(ana, ".presence", "Ana (you)")
    # It ticks on, and nothing says it paused.
    clock_reaches(ana, ".elapsed", lambda elapsed: elapsed >= 3, timeout=8)
    assert not ana.find_element(By.CSS_SELECTOR, ".paused").is_displayed()
    assert ana.execute_script("return window.standupsPausesShown") == []
    assert collect_console_errors(ana) == []


def test_only_attendees_are_offered_a_notice_and_a_blocked_one_says_so(server, ana, ben):
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Notify")
    # NB: as the attendee was typed, in small letters: it is still Ana.
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys("ana")
    click(ana, ".add-attendee")
    ana.find_elements(By.CSS_SELECTOR, ".new-attendees input")[-1].send_keys("Blob")
    click(ana, "#new-form button.primary")
    room = wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".card")).get_attribute("href")
    origin = server.rstrip("/")
    ana.execute_cdp_cmd("Browser.setPermission", {
        "permission": {"name": "notifications"}, "setting": "denied", "origin": origin})
    ana.get(room)
    ben.get(room)
    text_in(ben, ".presence", "Ana")
    click(ana, ".start")
    text_in(ben, ".speaker", "Speaker 1 of 2: ana")
    # Ben is no attendee: he is never up, and is offered no notice of it, but told why.
    assert not ben.find_element(By.CSS_SELECTOR, ".notify-toggle").is_displayed()
    text_in(ben, ".notify-why", "Turn notices are for attendees: “Ben” is not one.")
    assert not ana.find_element(By.CSS_SELECTOR, ".notify-why").is_displayed()
    screenshot(ben, "notify-why")
    click(ana, ".notify-toggle")
    text_in(ana, ".toasts", "Notifications are blocked for this site")
    assert ana.find_element(By.CSS_SELECTOR, ".notify-toggle").get_attribute("aria-pressed") == "false"
    for driver in (ana, ben):
        assert collect_console_errors(driver) == []


def test_a_speaker_s_long_name_is_cut_short_with_an_ellipsis_in_the_ring(server, ana):
    """The longest name an attendee may have, at phone width: the speaker's line takes two
    lines of the ring at most, cut short with an ellipsis, not in the middle of a word with
    nothing to say so; the whole line shows on hover."""
    name = "Blob One offline-Bartholomew-Maximilian-"
    assert len(name) == 40
    ana.get(server)
    text_in(ana, "#status", "Live")
    click(ana, "#new-standup")
    ana.find_element(By.NAME, "title").send_keys("Design")
    ana.find_element(By.CSS_SELECTOR, ".new-attendees input").send_keys(name)
    click(ana, "#new-form button.primary")
    ana.get(wait(ana, lambda d: d.find_element(By.CSS_SELECTOR, ".card")).get_attribute("href"))
    resize(ana, "phone")
    click(ana, ".start")
    text_in(ana, ".speaker", "Speaker 1 of 1: Blob One")
    line = ana.execute_script("""
        const speaker = document.querySelector('.speaker');
        const style = getComputedStyle(speaker);
        const ring = document.querySelector('.ring-center').getBoundingClientRect();
        const box = speaker.getBoundingClientRect();
        return { title: speaker.title, clamp: style.webkitLineClamp,
                 lines: Math.round(speaker.clientHeight / parseFloat(style.lineHeight)),
                 cut: speaker.scrollHeight > speaker.clientHeight,
                 inRing: box.top >= ring.top && box.bottom <= ring.bottom };""")
    assert line == {"title": f"Speaker 1 of 1: {name}", "clamp": "2", "lines": 2, "cut": True, "inRing": True}
    screenshot(ana, "long-speaker-name")
    resize(ana, "desktop")
    assert collect_console_errors(ana) == []
