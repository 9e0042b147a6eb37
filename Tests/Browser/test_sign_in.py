"""Only the team gets in, in real Chromium: the invite link, the sign-in page, other origins."""
import http.server
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from conftest import SERVER, chromium, collect_console_errors, screenshot, serves, sign_in
from test_web_app import both_in_a_room, click, create_standup


def text_in(driver, selector, text, timeout=10):
    WebDriverWait(driver, timeout).until(
        EC.text_to_be_present_in_element((By.CSS_SELECTOR, selector), text))


@pytest.fixture
def stranger():
    driver = chromium("Eve")
    yield driver
    driver.quit()


def test_without_the_link_a_browser_sees_how_to_get_in(server, stranger):
    stranger.get(server)
    text_in(stranger, ".signin h1", "Ask your team for the invite link")
    assert "/join#" in stranger.find_element(By.CSS_SELECTOR, ".signin").text
    screenshot(stranger, "sign-in")
    # A room's address is no way round it.
    stranger.get(server + "#/rooms/DEADBEEF-0000-4000-8000-000000000001")
    text_in(stranger, ".signin h1", "Ask your team for the invite link")
    # A wrong invite says so.
    stranger.get(server + "join#not-the-invite")
    WebDriverWait(stranger, 10).until(
        EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button"))).click()
    text_in(stranger, ".form-error", "invite link is not valid")
    # The refused invite's 401 is the only thing the console reports.
    assert [entry for entry in collect_console_errors(stranger)
            if "status of 401" not in entry["message"]] == []


def test_the_invite_link_signs_in_and_leaves_the_address_bar(server, ana):
    # (the `ana` fixture opened the link and pressed Join)
    assert "#" not in ana.current_url
    ana.get(server)
    text_in(ana, "#status", "Live")
    # The fragment is gone at once, before Join is pressed.
    other = chromium("Ben")
    try:
        other.get(server.invite)
        WebDriverWait(other, 10).until(lambda d: d.current_url.endswith("/join"))
        screenshot(other, "join")
        assert not other.find_element(By.CSS_SELECTOR, ".signed-in-note").is_displayed()
        other.find_element(By.CSS_SELECTOR, "#join-form button").click()
        WebDriverWait(other, 10).until(EC.url_to_be(server))
        text_in(other, "#status", "Live")
        # The session cookie is out of the page's reach.
        assert "standups_session" not in other.execute_script("return document.cookie")
        assert collect_console_errors(other) == []
    finally:
        other.quit()
    # Opened again once signed in, the link says so, and where to go.
    ana.get(server.invite)
    text_in(ana, ".signed-in-note", "You are signed in here as Ana.")
    click(ana, ".signed-in-note a")
    WebDriverWait(ana, 10).until(EC.url_to_be(server))
    text_in(ana, "#status", "Live")
    assert collect_console_errors(ana) == []


def test_a_whole_link_pasted_into_a_join_page_without_one_is_taken(server, stranger):
    stranger.get(server + "join")
    text_in(stranger, ".signin h1", "This link has no invite in it")
    assert not stranger.find_element(By.CSS_SELECTOR, "#join-form button").is_enabled()
    # The whole link in the same tab changes only the fragment: nothing loads again.
    stranger.get(server.invite)
    text_in(stranger, ".signin h1", "Join your team's standups")
    WebDriverWait(stranger, 10).until(lambda d: d.current_url.endswith("/join"))
    button = stranger.find_element(By.CSS_SELECTOR, "#join-form button")
    assert button.is_enabled()
    # A name of spaces says what is missing.
    name = stranger.find_element(By.NAME, "name")
    name.clear()
    name.send_keys("   ")
    button.click()
    text_in(stranger, ".form-error", "Type your name")
    name.send_keys("Cy")
    button.click()
    WebDriverWait(stranger, 10).until(EC.url_to_be(server))
    text_in(stranger, "#status", "Live")
    assert collect_console_errors(stranger) == []


def test_rotating_the_invite_sends_everyone_to_the_sign_in_page(server, ana):
    ana.get(server)
    text_in(ana, "#status", "Live")
    rotate_invite(server)
    text_in(ana, ".signin h1", "Ask your team for the invite link", timeout=15)
    text_in(ana, ".signin", "session ended")
    # The new link works.
    sign_in(ana, server)
    text_in(ana, "#status", "Live")


def rotate_invite(server):
    """`standups-server invite --rotate`; the new link becomes the server's invite."""
    rotated = subprocess.run(
        [str(SERVER), "invite", "--rotate", "--data-dir", server.data],
        capture_output=True, text=True, timeout=30, check=True)
    assert "/join#" in rotated.stdout
    server.invite = server + "join#" + rotated.stdout.strip().split("#")[-1]


def test_typing_on_its_way_when_the_invite_is_rotated_comes_back_after_signing_in(server, ana):
    """Ana is typing in the edit form when the invite is rotated: her typing, which never
    reached the room, is kept; she opens the new link in another tab and is back in the room
    with it, and the tab that had to sign in goes back there by itself."""
    room = create_standup(ana, server)
    ana.get(room)
    text_in(ana, ".presence", "Ana")
    click(ana, ".edit")
    title = WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.CSS_SELECTOR, ".edit-form .title")))
    # NB: the typing is still on its way when the session ends: its sends are held.
    ana.execute_script("""
        const connection = window.standupsConnection;
        const send = connection.send.bind(connection);
        connection.send = (action) => action.type === 'edit.binding' ? new Promise(() => {}) : send(action);""")
    title.send_keys(Keys.END, " weekly")
    rotate_invite(server)
    text_in(ana, ".signin h1", "Ask your team for the invite link", timeout=15)
    text_in(ana, ".signin .kept", "goes back to the standup you were in, with what you typed")
    # What was kept, word for word.
    text_in(ana, ".signin .kept-typing", "“Design weekly” (Title)")
    first = ana.current_window_handle
    ana.switch_to.new_window("tab")
    ana.get(server.invite)
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button"))).click()
    WebDriverWait(ana, 10).until(EC.url_to_be(room))
    text_in(ana, ".toast", "Your typing had not reached the room when you had to sign in again: “Design weekly” (Title).")
    click(ana, ".toast .edit-again")
    WebDriverWait(ana, 10).until(lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title")
                                 .get_attribute("value") == "Design weekly")
    # The keyboard is back in the title, after the typing: the next key goes on with it.
    WebDriverWait(ana, 10).until(lambda d: d.switch_to.active_element.get_attribute("data-path") == "/title")
    assert ana.execute_script("return document.activeElement.selectionStart") == len("Design weekly")
    ana.switch_to.window(first)
    WebDriverWait(ana, 10).until(EC.url_to_be(room))
    WebDriverWait(ana, 10).until(lambda d: d.find_element(By.CSS_SELECTOR, ".edit-form .title")
                                 .get_attribute("value") == "Design weekly")
    # The typing was offered once, in the tab in view.
    assert not [toast for toast in ana.find_elements(By.CSS_SELECTOR, ".toast") if "weekly" in toast.text]
    assert collect_console_errors(ana) == []


def test_a_late_note_kept_through_signing_in_again_is_offered_for_its_meeting(server, ana, ben):
    """The note Ana was typing when Ben ended the meeting is still offered when the invite is
    rotated under her: the sign-in page names it, and back in the room it is offered for the
    meeting it was for, not put into another."""
    from test_nothing_typed_is_lost import ben_ends_as_ana_types
    ben_ends_as_ana_types(server, ana, ben, "Half a thought", ".save")
    WebDriverWait(ana, 10).until(
        lambda d: d.find_element(By.ID, "late-note").get_attribute("value") == "Half a thought")
    rotate_invite(server)
    text_in(ana, ".signin .kept-typing", "“Half a thought” (your note for a meeting that ended)", timeout=15)
    ana.get(server.invite)
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button"))).click()
    WebDriverWait(ana, 10).until(EC.url_contains("#/rooms/"))
    late = WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "late-note")))
    assert late.get_attribute("value") == "Half a thought"
    late.send_keys(Keys.ENTER)
    text_in(ana, "#toasts", "Your note was added to the meeting that ended.")
    notes = "return [...document.querySelectorAll('.history > li:first-child details li')].map((li) => li.textContent);"
    WebDriverWait(ana, 10).until(lambda d: d.execute_script(notes) == ["Ana: Half a thought"])
    assert collect_console_errors(ana) == []


def test_a_room_link_opened_before_signing_in_is_where_the_invite_link_leads(server, ana, stranger):
    room = create_standup(ana, server)
    stranger.get(room)
    text_in(stranger, ".signin .kept", "goes back to the standup it was showing")
    sign_in_to(stranger, server.invite)
    WebDriverWait(stranger, 10).until(EC.url_to_be(room))
    text_in(stranger, ".presence", "Eve")
    # The name button says what it holds: renaming, and signing out.
    assert stranger.find_element(By.ID, "me").get_attribute("aria-label") == "Eve: change your name or sign out"
    # Signing out forgets where it was: the next sign-in in this browser starts in the lobby.
    stranger.find_element(By.ID, "me").click()
    click(stranger, "#name-dialog .sign-out")
    text_in(stranger, ".signin", "You signed out of this browser.")
    assert not stranger.find_elements(By.CSS_SELECTOR, ".signin .kept")
    sign_in_to(stranger, server.invite)
    WebDriverWait(stranger, 10).until(EC.url_to_be(server))


def sign_in_to(driver, invite):
    driver.get(invite)
    WebDriverWait(driver, 10).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button"))).click()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def other_origin():
    """A page on another origin (another port) that tries the server's WebSocket."""
    folder = Path(tempfile.mkdtemp(prefix="standups-other-origin-"))
    (folder / "index.html").write_text("<!doctype html><title>Elsewhere</title><p>elsewhere</p>")
    handler = lambda *args, **kwargs: _Quiet(*args, directory=str(folder), **kwargs)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    # NB: 127.0.0.1 on another port is the same site (the session cookie goes along) but
    # another origin: only the Origin check stands in the way.
    yield serves(f"http://127.0.0.1:{httpd.server_address[1]}/")
    httpd.shutdown()


def test_a_page_on_another_origin_is_refused(server, ana, other_origin):
    probe = """
        const done = arguments[arguments.length - 1];
        const socket = new WebSocket(arguments[0]);
        socket.onopen = () => { socket.close(); done("opened"); };
        socket.onclose = (event) => done(`closed ${event.code}`);
    """
    websocket = server.replace("http://", "ws://") + "ws/lobby"
    # Same browser, same (signed-in) cookie jar: from the app's own origin it opens…
    ana.get(server)
    text_in(ana, "#status", "Live")
    assert ana.execute_async_script(probe, websocket) == "opened"
    # …from another origin it is refused before the upgrade.
    ana.get(other_origin)
    assert ana.execute_async_script(probe, websocket) == "closed 1006"


def test_a_person_changes_their_name_and_the_room_sees_it(server, ana, ben):
    from test_web_app import both_in_a_room, click
    both_in_a_room(server, ana, ben)
    text_in(ana, "#me", "Ana")
    click(ana, "#me")
    field = WebDriverWait(ana, 10).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#name-dialog input")))
    field.clear()
    field.send_keys("Ana Banana")
    click(ana, "#name-dialog button.primary")
    text_in(ben, ".presence", "Ana Banana")
    text_in(ana, "#me", "Ana Banana")
    # The session carries it: a reload keeps the new name.
    ana.refresh()
    text_in(ana, ".presence", "Ana Banana (you)")
    assert collect_console_errors(ana) == []


def test_a_person_signs_out_and_the_room_sees_them_go(server, ana, ben):
    from test_web_app import both_in_a_room, click
    both_in_a_room(server, ana, ben)
    click(ana, "#me")
    WebDriverWait(ana, 10).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#name-dialog .sign-out")))
    click(ana, "#name-dialog .sign-out")
    text_in(ana, ".signin", "You signed out of this browser.")
    assert not ana.find_element(By.ID, "me").is_displayed()
    WebDriverWait(ben, 10).until(lambda d: "Ana" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    # The cookie is gone: a reload asks for the invite link.
    ana.refresh()
    text_in(ana, ".signin h1", "Ask your team for the invite link")
    assert collect_console_errors(ana) == []


def test_a_sign_out_is_said_as_one_even_when_the_rooms_close_comes_first(server, ana, ben):
    """The server closes a signed-out session's sockets (4401) before it answers the sign-out.
    Here its answer reaches the page 0.3 s after that close, and any session check takes
    0.6 s: the page still says Ana signed out, not that some session ended (the race a CI
    run lost once)."""
    from test_web_app import both_in_a_room, click
    both_in_a_room(server, ana, ben)
    ana.execute_script("""
        const fetch = window.fetch;
        window.signOutFetches = { pending: 0, sessionChecks: 0 };
        window.fetch = (url, options = {}) => {
          if (!String(url).includes('/api/session')) return fetch(url, options);
          const method = options.method ?? 'GET';
          if (method === 'GET') window.signOutFetches.sessionChecks += 1;
          window.signOutFetches.pending += 1;
          const late = new Promise((resolve) => setTimeout(resolve, method === 'DELETE' ? 300 : 600));
          const answer = fetch(url, options).then((response) => late.then(() => response));
          // Counted as done only once what awaited the answer has run.
          answer.finally(() => setTimeout(() => { window.signOutFetches.pending -= 1; }, 50));
          return answer;
        };""")
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    WebDriverWait(ana, 10).until(lambda d: d.execute_script(
        "return window.signOutFetches.pending === 0 && document.querySelector('.signin') !== null"))
    assert "You signed out of this browser." in ana.find_element(By.CSS_SELECTOR, ".signin").text
    assert ana.find_element(By.ID, "status").text == "Signed out"
    WebDriverWait(ben, 10).until(lambda d: "Ana" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    assert collect_console_errors(ana) == []


def test_signing_out_over_a_note_being_typed_names_it_first(server, ana, ben):
    """A sign-out keeps nothing for the next person: a note the room never got is named, and
    only a second press signs out."""
    from test_web_app import both_in_a_room, click
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).send_keys("Half a thought")
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, "#name-dialog .form-error",
            "Signing out drops what you typed that has not reached the room: “Half a thought” (your note).")
    assert ana.find_element(By.CSS_SELECTOR, "#name-dialog .sign-out").text == "Sign out anyway"
    assert ana.find_element(By.ID, "me").is_displayed()
    # Cancelled, the note is still there to add; asked again, the question is asked again.
    click(ana, "#name-dialog .cancel")
    assert ana.find_element(By.ID, "note").get_attribute("value") == "Half a thought"
    click(ana, "#me")
    assert ana.find_element(By.CSS_SELECTOR, "#name-dialog .sign-out").text == "Sign out"
    click(ana, "#name-dialog .sign-out")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, ".signin", "You signed out of this browser.")
    assert ana.find_elements(By.CSS_SELECTOR, ".kept-typing") == []
    # Nor does the tab keep it (a reload's copy) for whoever signs in next.
    assert ana.execute_script(
        "return Object.keys(sessionStorage).filter((key) => key.startsWith('standups.'))") == []
    assert collect_console_errors(ana) == []


def test_a_sign_out_whose_answer_is_lost_is_done_if_the_session_is_over(server, ana, ben):
    """Ana's sign-out reaches the server, which ends her session, but its answer never reaches
    the page (a cluster's database slow past the page's patience, a network that swallowed
    it): the page asks whether the session is over before it says the server cannot be
    reached. It is: she is signed out, and the note she chose to drop is kept for nobody."""
    from test_web_app import both_in_a_room, click
    ana.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.standupsLiveness = {quietMs: 1000, answerMs: 1000};
        // NB: in a block: a "const fetch" of the page's global scope would be the one its
        // modules call.
        {
          const fetch = window.fetch;
          window.fetch = (url, options = {}) => {
            if (!String(url).includes('/api/session') || options.method !== 'DELETE') return fetch(url, options);
            // The server takes it as the page's deadline runs out (and closes her room then,
            // 4401); its answer is lost.
            return new Promise((_, reject) => options.signal.addEventListener('abort', () => {
              fetch(url, { ...options, signal: undefined }).finally(() => reject(options.signal.reason));
            }));
          };
        }"""})
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).send_keys("Half a thought")
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, ".signin", "You signed out of this browser.")
    assert ana.find_element(By.ID, "status").text == "Signed out"
    assert not ana.execute_script("return document.getElementById('name-dialog').open")
    kept = ana.execute_script("""return [...Object.entries(localStorage), ...Object.entries(sessionStorage)]
        .filter(([, value]) => value.includes('Half a thought')).map(([key]) => key)""")
    assert kept == []
    WebDriverWait(ben, 10).until(lambda d: "Ana" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    assert collect_console_errors(ana) == []


def test_a_person_whose_name_a_bot_takes_chooses_another_and_is_back(server, ana, ben):
    """The session still holds: the page asks for another name, not for the invite link."""
    from test_web_app import both_in_a_room, click
    both_in_a_room(server, ana, ben)
    added = subprocess.run(
        [str(SERVER), "bots", "add", "Ana", "--can", "notes", "--data-dir", server.data],
        capture_output=True, text=True, timeout=30)
    assert added.returncode == 0, added.stderr
    text_in(ana, ".signin h1", "Choose another name")
    text_in(ana, ".signin", "A bot now has your name: choose another to come back in.")
    WebDriverWait(ben, 10).until(lambda d: "Ana" not in d.find_element(By.CSS_SELECTOR, ".presence").text)
    click(ana, ".signin .rename")
    field = WebDriverWait(ana, 10).until(
        EC.visibility_of_element_located((By.CSS_SELECTOR, "#name-dialog input")))
    field.clear()
    # A look-alike of the bot's name is refused too, in the dialog.
    field.send_keys("An\u0430")
    click(ana, "#name-dialog button.primary")
    text_in(ana, "#name-dialog .form-error", "reads like the name of the bot")
    field.clear()
    field.send_keys("Ana B")
    click(ana, "#name-dialog button.primary")
    text_in(ben, ".presence", "Ana B")
    text_in(ana, "#me", "Ana B")
    # NB: the refused look-alike is the one failed request (Chromium logs a 400 as an error).
    unexpected = [error for error in collect_console_errors(ana)
                  if not ("/api/session" in error["message"] and "400" in error["message"])]
    assert unexpected == []


def test_a_name_changed_in_one_tab_is_the_name_in_every_tab(server, ana, ben):
    """Ana has the room open in two tabs and changes her name in one: the other joins again
    under it, so that the room never shows her under both names."""
    from test_web_app import both_in_a_room, click
    room = both_in_a_room(server, ana, ben)
    first = ana.current_window_handle
    ana.switch_to.new_window("tab")
    ana.get(room)
    text_in(ana, ".presence", "Ana (you)")
    second = ana.current_window_handle
    ana.switch_to.window(first)
    click(ana, "#me")
    field = WebDriverWait(ana, 10).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#name-dialog input")))
    field.clear()
    field.send_keys("Ana Banana")
    click(ana, "#name-dialog button.primary")

    def names(driver):
        # NB: read in one go: the list is drawn again as people come and go.
        return sorted(driver.execute_script(
            "return [...document.querySelectorAll('.presence li')].map((item) => item.textContent)"))
    # One person, two tabs, one name.
    WebDriverWait(ben, 10).until(lambda d: names(d) == ["Ana Banana ×2, on 2 connections", "Ben (you)"])
    ana.switch_to.window(second)
    text_in(ana, "#me", "Ana Banana")
    text_in(ana, ".presence", "Ana Banana (you)")
    assert collect_console_errors(ana) == []


def test_a_note_typed_in_a_tab_that_another_tab_signs_out_is_named_first_and_not_kept(server, ana, ben):
    """Ana types a note in one tab and signs out in another: the sign-out names the note
    first; signed out anyway, the tab she typed in names it on its sign-in page, and keeps no
    copy of it for whoever signs in next."""
    from test_web_app import both_in_a_room, click
    room = both_in_a_room(server, ana, ben)
    click(ana, ".start")
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).send_keys("Half a thought")
    typing = ana.current_window_handle
    ana.switch_to.new_window("tab")
    ana.get(room)
    text_in(ana, ".presence", "Ana (you)")
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, "#name-dialog .form-error",
            "Signing out drops what you typed that has not reached the room: “Half a thought” (your note, in another tab).")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, ".signin", "You signed out of this browser.")
    ana.switch_to.window(typing)
    text_in(ana, ".signin .dropped", "This browser was signed out in another tab.")
    text_in(ana, ".signin .dropped-typing", "“Half a thought” (your note)")
    # Nobody is signed in in this tab either: no name to change.
    assert not ana.find_element(By.ID, "me").is_displayed()
    assert ana.find_elements(By.CSS_SELECTOR, ".kept-typing") == []
    assert ana.execute_script(
        "return Object.keys(sessionStorage).filter((key) => key.startsWith('standups.'))") == []
    whoever_signs_in_next_finds_no_note(server, ana, room)


def whoever_signs_in_next_finds_no_note(server, driver, room):
    """Signs in again at `driver`'s browser: the meeting in `room` has no note waiting."""
    driver.get(server.invite)
    WebDriverWait(driver, 10).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button"))).click()
    # NB: signed in once the join page has gone on to the lobby.
    text_in(driver, ".card", "meeting on")
    driver.get(room)
    WebDriverWait(driver, 10).until(EC.element_to_be_clickable((By.ID, "note")))
    assert driver.find_element(By.ID, "note").get_attribute("value") == ""
    assert collect_console_errors(driver) == []


def test_a_note_kept_from_a_closed_tab_is_named_by_a_sign_out_and_not_kept(server, ana, ben):
    """Ana closes a tab with a note typed (the browser keeps it for her next tab in that room)
    and signs out in another, in the lobby: the sign-out names the note first, and keeps it for
    nobody."""
    from test_nothing_typed_is_lost import ana_closes_a_tab_with_a_note
    from test_web_app import click
    room = ana_closes_a_tab_with_a_note(server, ana, ben, "Half a thought")
    ana.get(server)
    text_in(ana, ".card", "meeting on")
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    # NB: kept for the next tab to open its room: the lobby's does not take it.
    text_in(ana, "#name-dialog .form-error",
            "Signing out drops what you typed that has not reached the room: “Half a thought” (your note, in a tab you closed).")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, ".signin", "You signed out of this browser.")
    assert ana.execute_script("return localStorage.getItem('standups.closedTabs')") is None
    whoever_signs_in_next_finds_no_note(server, ana, room)


def test_a_tab_away_while_the_browser_signs_out_does_not_bring_its_typing_back(server, ana, ben):
    """Ana's tab goes to another page with a note typed; in another tab she signs out (the
    note named first) and signs in again. Back in the first tab, the note is not there for
    whoever is signed in now, and the page says why."""
    from test_nothing_typed_is_lost import toast_says
    from test_web_app import both_in_a_room, click
    both_in_a_room(server, ana, ben)
    click(ana, ".start")
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).send_keys("Ana private")
    away = ana.current_window_handle
    ana.get("data:text/html,<p>Elsewhere</p>")
    ana.switch_to.new_window("tab")
    ana.get(server)
    text_in(ana, ".card", "meeting on")
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, "#name-dialog .form-error", "“Ana private” (your note, in another tab)")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, ".signin", "You signed out of this browser.")
    ana.get(server.invite)
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button"))).click()
    text_in(ana, ".card", "meeting on")
    ana.switch_to.window(away)
    ana.back()
    note = WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note")))
    toast_says(ana, "This browser was signed out while this page was away: what was typed here is not kept.")
    assert note.get_attribute("value") == ""
    assert "Ana private" not in ana.find_element(By.TAG_NAME, "body").text
    # NB: but the fixture's own script on the page elsewhere, which has no storage.
    assert [error for error in collect_console_errors(ana)
            if "Storage is disabled inside 'data:' URLs" not in error["message"]] == []


def join_as(driver, invite, name):
    """Opens the invite link and signs in under `name` (the form offers the browser's last)."""
    driver.get(invite)
    field = WebDriverWait(driver, 10).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form input")))
    field.clear()
    field.send_keys(name)
    click(driver, "#join-form button")


def cy_signs_in_where_ana_was_typing(server, ana, ben):
    """Ana is typing a note when the invite is rotated: her session ends with no sign-out, and
    her tab asks to sign in. Cy opens the new link at her browser, in another tab. Ana's tab
    goes back to its room, now Cy's: the note is in neither tab, and the page says why.
    Returns the room's address and the two tabs (Ana's, Cy's)."""
    from test_nothing_typed_is_lost import toast_says
    room = both_in_a_room(server, ana, ben)
    click(ana, ".start")
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).send_keys("Ana private")
    rotate_invite(server)
    text_in(ana, ".signin .kept-typing", "“Ana private”", timeout=15)
    anas = ana.current_window_handle
    ana.switch_to.new_window("tab")
    cys = ana.current_window_handle
    join_as(ana, server.invite, "Cy")
    ana.switch_to.window(anas)
    toast_says(ana, "Someone else signed in at this browser: what was typed here before is kept for the person who typed it, not shown here.")
    assert ana.current_url == room
    text_in(ana, ".presence", "Cy (you)")
    assert WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).get_attribute("value") == ""
    # NB: the invite link's page went on to the room that asked for a sign-in.
    ana.switch_to.window(cys)
    WebDriverWait(ana, 10).until(EC.url_to_be(room))
    text_in(ana, ".presence", "Cy (you)")
    assert WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).get_attribute("value") == ""
    for tab in (cys, anas):
        ana.switch_to.window(tab)
        assert "Ana private" not in ana.find_element(By.TAG_NAME, "body").text
    assert collect_console_errors(ana) == []
    return room, anas, cys


def test_a_note_typed_when_a_session_ended_is_not_shown_to_the_next_person_and_is_back_for_its_own(server, ana, ben):
    room, anas, cys = cy_signs_in_where_ana_was_typing(server, ana, ben)
    ana.switch_to.window(cys)
    ana.close()
    ana.switch_to.window(anas)
    join_as(ana, server.invite, "Ana")
    WebDriverWait(ana, 10).until(EC.url_to_be(room))
    text_in(ana, ".presence", "Ana (you)")
    WebDriverWait(ana, 10).until(
        lambda d: d.find_element(By.ID, "note").get_attribute("value") == "Ana private")
    text_in(ana, "#toasts", "Your note from before you signed in again is back in its field.")
    assert collect_console_errors(ana) == []


def test_a_sign_out_does_not_name_to_one_person_what_another_typed_and_keeps_it_for_nobody(server, ana, ben):
    room, anas, cys = cy_signs_in_where_ana_was_typing(server, ana, ben)
    ana.switch_to.window(cys)
    ana.close()
    ana.switch_to.window(anas)
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    # NB: nothing of Cy's to name: one press signs out.
    text_in(ana, ".signin", "You signed out of this browser.")
    assert ana.execute_script("return localStorage.getItem('standups.closedTabs')") is None
    join_as(ana, server.invite, "Ana")
    # NB: signed in once the join page has gone on to the lobby.
    text_in(ana, ".card", "meeting paused")
    ana.get(room)
    text_in(ana, ".presence", "Ana (you)")
    assert WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).get_attribute("value") == ""
    assert collect_console_errors(ana) == []


def test_a_discarded_meetings_note_kept_while_the_room_shows_the_edit_form_is_named_by_a_sign_out(server, ana, ben):
    """Ben discards the meeting as Ana types; her note waits in its box, and Ben opens the edit
    form, which takes the room's screen. Signing out names the note first."""
    from test_nothing_typed_is_lost import ben_ends_as_ana_types
    ben_ends_as_ana_types(server, ana, ben, "Half a thought", ".discard")
    text_in(ana, ".ended", "Meeting discarded.")
    WebDriverWait(ana, 10).until(lambda d: d.execute_script(
        "return sessionStorage.getItem(Object.keys(sessionStorage).find((key) => key.startsWith('standups.discarded.')))")
        == "Half a thought")
    click(ben, ".edit")
    WebDriverWait(ana, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".edit-form .title")))
    click(ana, "#me")
    click(ana, "#name-dialog .sign-out")
    text_in(ana, "#name-dialog .form-error",
            "Signing out drops what you typed that has not reached the room: “Half a thought” (your note).")
    assert collect_console_errors(ana) == []


def test_a_note_in_a_tab_open_as_another_person_signs_in_at_the_browser_is_kept_for_its_own(server, ana, ben):
    """Ana's tab is in a meeting with a note typed when Cy joins under his own name in another
    tab of the same browser (a shared computer): her tab joins again as Cy's, without her
    note, and says why."""
    from test_nothing_typed_is_lost import toast_says
    room = both_in_a_room(server, ana, ben)
    click(ana, ".start")
    WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).send_keys("Ana private")
    anas = ana.current_window_handle
    ana.switch_to.new_window("tab")
    join_as(ana, server.invite, "Cy")
    ana.switch_to.window(anas)
    toast_says(ana, "Someone else signed in at this browser: what was typed here before is kept for the person who typed it, not shown here.")
    text_in(ana, ".presence", "Cy (you)")
    assert ana.current_url == room
    assert WebDriverWait(ana, 10).until(EC.element_to_be_clickable((By.ID, "note"))).get_attribute("value") == ""
    assert "Ana private" not in ana.find_element(By.TAG_NAME, "body").text
    # Kept, for Ana alone: under her name, in the browser.
    assert ana.execute_script("""return JSON.parse(localStorage.getItem('standups.closedTabs')).tabs
        .filter((record) => record.by === 'Ana').flatMap((record) => Object.values(record.groups))
        .map((group) => Object.entries(group).find(([key]) => key.startsWith('standups.note.'))?.[1])""") == ["Ana private"]
    assert collect_console_errors(ana) == []
