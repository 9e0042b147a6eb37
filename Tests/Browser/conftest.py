"""Fixtures for the browser tests: a real standups-server and headless Chromium sessions."""
import hashlib
import os
import re
import select
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".build/debug/standups-server"
SCREENSHOTS = ROOT / "build" / "screenshots"
SIZES = {"desktop": (1280, 800), "phone": (390, 844), "small phone": (375, 667),
         # A phone on its side; one whose on-screen keyboard takes half its height.
         "phone on its side": (844, 390), "phone, keyboard up": (390, 400)}


# `make test` runs these tests in both of its lanes (see the Makefile): each test is run by the
# lane that takes it first, by making its file in STANDUPS_BROWSER_TURNS (O_EXCL: one wins).
# The first lane goes from the top, the second, once its own work is done, from the end.
TURNS = os.environ.get("STANDUPS_BROWSER_TURNS")


def taken(folder, item):
    """Whether this run takes `item`, which no other run has taken yet."""
    name = hashlib.sha256(item.nodeid.encode()).hexdigest()
    try:
        os.close(os.open(os.path.join(folder, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """pytest's own loop (_pytest/main.py), over the tests this lane takes."""
    if not TURNS or session.config.option.collectonly:
        return None
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    items = session.items[::-1] if os.environ.get("STANDUPS_BROWSER_FROM_THE_END") else session.items
    # The test after this one is the next this lane takes, taken before this one runs: pytest
    # tears down after a test what the next does not share (a module's server), and a next
    # test that another lane ran instead left this one's module set up under the following.
    mine = (item for item in items if taken(TURNS, item))
    ran = 0
    item = next(mine, None)
    while item is not None:
        nextitem = next(mine, None)
        ran += 1
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)
        item = nextitem
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reporter.ensure_newline()
    reporter.write_line(
        f"{ran} of the {len(items)} browser tests ran in this lane, the others in the other.")
    return True


class Server(str):
    """The app's URL, with the invite link the server printed and its data folder."""
    invite: str
    data: str
    process: subprocess.Popen


def start_server(data, *options):
    """standups-server from this build on a free port; returns it and the URL it serves."""
    process = subprocess.Popen(
        [str(SERVER), "--port", "0", "--data-dir", data, "--public-dir", str(ROOT / "public"),
         *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    match = re.search(r"127\.0\.0\.1:(\d+)", line)
    assert match, f"the server did not start: {line}"
    return process, serves(f"http://127.0.0.1:{match.group(1)}/")


@pytest.fixture
def server():
    """standups-server from this build on a free port, with a fresh data folder."""
    data = tempfile.mkdtemp(prefix="standups-browser-")
    process, address = start_server(data, "--print-invite")
    invite = re.search(r"(http://\S+/join#\S+)", process.stdout.readline())
    assert invite, "the server printed no invite link"
    url = Server(address)
    url.invite, url.data, url.process = invite.group(1), data, process
    yield url
    # NB: the one running now: a test may have restarted it (`url.process`).
    url.process.terminate()
    url.process.wait(timeout=10)


def start_again(server):
    """Starts `server` (the fixture's, stopped by the test) again on its port, with its data."""
    port = re.search(r":(\d+)/", server).group(1)
    server.process = subprocess.Popen(
        [str(SERVER), "--port", port, "--data-dir", server.data, "--public-dir", str(ROOT / "public")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.process.stderr.readline()
    assert re.search(r"127\.0\.0\.1:(\d+)", line), f"the server did not start again: {line}"


@pytest.fixture
def open_server():
    """standups-server with `--open` (a demo: no invite, anyone in by name) on a free port."""
    process, address = start_server(tempfile.mkdtemp(prefix="standups-open-"), "--open")
    yield address
    process.terminate()
    process.wait(timeout=10)


class Relay:
    """A TCP relay in front of the server whose open WebSockets can be made to go silent,
    as a network does when it stops answering without closing anything (a Wi-Fi switch, a
    VPN that dropped): nothing passes either way, nothing closes. New connections still
    pass, as after the network came back. (Its plain HTTP connections are closed instead:
    a browser would wait minutes on a kept-alive one gone silent before it tried another.)"""

    def __init__(self, server_url):
        self.target = int(re.search(r":(\d+)/", server_url).group(1))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = serves(f"http://127.0.0.1:{self.listener.getsockname()[1]}/")
        self.silenced = []
        self.pairs = []
        self.stopped = threading.Event()
        self.swallowing = threading.Event()
        self.swallowed = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            pair = {"silent": threading.Event(), "cut": threading.Event(), "websocket": False}
            if self.swallowing.is_set():
                pair["silent"].set()
                self.swallowed += 1
            self.pairs.append(pair)
            threading.Thread(target=self._pump, args=(client, upstream, pair), daemon=True).start()

    def _pump(self, client, upstream, pair):
        ends = {client: upstream, upstream: client}
        while not self.stopped.is_set() and not pair["cut"].is_set():
            if pair["silent"].is_set():
                self.stopped.wait(0.05)
                continue
            ready, _, _ = select.select(list(ends), [], [], 0.05)
            try:
                for end in ready:
                    data = end.recv(65536)
                    if not data:
                        break
                    if end is client and b"upgrade: websocket" in data.lower():
                        pair["websocket"] = True
                    ends[end].sendall(data)
                else:
                    continue
            except OSError:
                pass
            # One side closed (or reset): so does the other.
            break
        for end in ends:
            end.close()

    def silence(self):
        """Every WebSocket open now goes silent; later connections pass."""
        for pair in self.pairs:
            pair["silent" if pair["websocket"] else "cut"].set()

    def swallow_new(self):
        """New connections are taken and never passed on, nor closed (a network that came back
        half-way: a laptop waking, a VPN half up), until `pass_new`."""
        self.swallowing.set()

    def pass_new(self):
        """New connections pass again (those swallowed stay silent)."""
        self.swallowing.clear()

    def close(self):
        self.stopped.set()
        self.listener.close()


@pytest.fixture
def relay(server):
    relay = Relay(server)
    yield relay
    relay.close()


def sign_in(driver, server):
    """Opens the invite link and joins under the name the browser remembers."""
    driver.get(server.invite)
    WebDriverWait(driver, 10).until(
        EC.element_to_be_clickable((By.CSS_SELECTOR, "#join-form button"))).click()
    WebDriverWait(driver, 10).until(EC.url_to_be(server))


# Every notice a page shows, in order, for `said`: a notice goes after 5 s, which a test
# waiting on other things first may take on a busy machine.
TOAST_LOG = """
    window.standupsToastLog = [];
    addEventListener("DOMContentLoaded", () => {
      const toasts = document.getElementById("toasts");
      if (!toasts) return;
      new MutationObserver(() => {
        for (const toast of toasts.children) {
          if (!window.standupsToastLog.includes(toast.textContent)) window.standupsToastLog.push(toast.textContent);
        }
      }).observe(toasts, { subtree: true, childList: true, characterData: true });
    });"""


def chromium(name, env=None):
    """A headless Chromium whose person goes by `name`; `env`: the browser's environment (its
    TZ, say), else this process's."""
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        service=Service(executable_path="/usr/bin/chromedriver", env=env), options=options)
    prepare_tab(driver, name)
    driver.cleared = set()
    return driver


def prepare_tab(driver, name):
    """The current tab as a new browser's first: its person's name remembered, its notices
    logged (`said`), the desktop's size, no console error seen yet."""
    # The display name is asked once and remembered; give each session its own.
    driver.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": f"localStorage.setItem('standups.name', {name!r});"})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TOAST_LOG})
    resize(driver, "desktop")
    driver.console_errors = []


# Starting a Chromium costs about 1.5 s of CPU, for each of the ~280 people the tests sign
# in: `ana` and `ben` come from browsers kept from one test to the next instead, each given
# back as new (`fresh`). What a page keeps is its origin's, and each test's servers listen on
# ports of their own (`serves`): their origins' data is cleared after the test (and before,
# should a port come again); cookies, which go by host whatever the port, and permissions
# for all. Each test's tabs are closed, and with them what was set for a tab (its size, time
# zone, media, the scripts it runs first). A browser that cannot be given back so is quit.
KEPT = {}
ORIGINS = set()


def serves(url):
    """Notes that this test's pages may keep data under `url`'s origin; returns it."""
    ORIGINS.add(re.match(r"https?://[^/]+", url).group(0))
    return url


def clear_origins(driver, origins):
    for origin in sorted(origins):
        driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})


def fresh(driver, name):
    """`driver` with one new tab, as `chromium(name)` gives it, and nothing kept of this
    test's origins."""
    try:
        driver.switch_to.alert.dismiss()
    except NoAlertPresentException:
        pass
    before = driver.window_handles
    driver.switch_to.window(before[0])
    driver.switch_to.new_window("tab")
    tab = driver.current_window_handle
    for handle in before:
        driver.switch_to.window(handle)
        # NB: its page goes first (what it keeps as it goes is written), then its tab.
        driver.get("about:blank")
        driver.close()
    driver.switch_to.window(tab)
    driver.get("about:blank")
    clear_origins(driver, ORIGINS)
    # NB: again before the browser's next test: what a page wrote as it went may land late.
    driver.cleared = set(ORIGINS)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Browser.resetPermissions", {})
    driver.get_log("browser")
    prepare_tab(driver, name)
    return driver


@pytest.fixture(autouse=True)
def origins():
    """This test's origins (`serves`), none yet."""
    ORIGINS.clear()
    yield ORIGINS


def kept_chromium(name):
    """A browser for `name` kept from an earlier test, or a new one."""
    driver = KEPT.pop(name, None)
    if driver is None:
        return chromium(name)
    # NB: a port of an earlier test's may have come again.
    clear_origins(driver, driver.cleared | ORIGINS)
    return driver


def give_back(name, driver):
    try:
        KEPT[name] = fresh(driver, name)
    except Exception:
        # NB: whatever state it is in (it may have crashed, chromedriver with it, or have no
        # window left).
        try:
            driver.quit()
        except Exception:
            pass


def signed_in(name, server):
    """`name`'s browser (`kept_chromium`), signed in to `server`; given back if that fails."""
    driver = kept_chromium(name)
    try:
        sign_in(driver, server)
    except BaseException:
        give_back(name, driver)
        raise
    return driver


@pytest.fixture(scope="session", autouse=True)
def quit_kept_browsers():
    yield
    for driver in KEPT.values():
        driver.quit()
    KEPT.clear()


def resize(driver, size):
    width, height = SIZES[size]
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def collect_console_errors(driver):
    """Console errors so far (reading the log empties Chromium's buffer)."""
    driver.console_errors += [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    return driver.console_errors


def errors_beside_refused_connections(driver):
    """Console errors so far but Chromium's own lines for a connection refused (a reconnect
    tried while the test has the server down: whether one falls in that window is timing)."""
    return [entry for entry in collect_console_errors(driver)
            if not (entry.get("source") == "network" and "ERR_CONNECTION_REFUSED" in entry["message"])]


def screenshot(driver, screen):
    """Writes build/screenshots/{screen}-desktop.png and -phone.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for size in ("desktop", "phone"):
        resize(driver, size)
        driver.save_screenshot(str(SCREENSHOTS / f"{screen}-{size}.png"))
    resize(driver, "desktop")


@pytest.fixture
def ana(server):
    driver = signed_in("Ana", server)
    yield driver
    give_back("Ana", driver)


@pytest.fixture
def ben(server):
    driver = signed_in("Ben", server)
    yield driver
    give_back("Ben", driver)
