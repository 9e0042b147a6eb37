"""Fixtures for the browser tests: a real standups-server and headless Chromium sessions."""
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "screenshots"
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture
def server():
    """standups-server from this build on a free port, with a fresh data folder."""
    data = tempfile.mkdtemp(prefix="standups-browser-")
    process = subprocess.Popen(
        [str(ROOT / ".build/debug/standups-server"), "--port", "0", "--data-dir", data,
         "--public-dir", str(ROOT / "public")],
        stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    match = re.search(r"127\.0\.0\.1:(\d+)", line)
    assert match, f"the server did not start: {line}"
    yield f"http://127.0.0.1:{match.group(1)}/"
    process.terminate()
    process.wait(timeout=10)


def chromium(name):
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    # The display name is asked once and remembered; give each session its own.
    driver.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": f"localStorage.setItem('standups.name', {name!r});"})
    resize(driver, "desktop")
    driver.console_errors = []
    return driver


def resize(driver, size):
    width, height = SIZES[size]
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def collect_console_errors(driver):
    """Console errors so far (reading the log empties Chromium's buffer)."""
    driver.console_errors += [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    return driver.console_errors


def screenshot(driver, screen):
    """Writes build/screenshots/{screen}-desktop.png and -phone.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for size in ("desktop", "phone"):
        resize(driver, size)
        driver.save_screenshot(str(SCREENSHOTS / f"{screen}-{size}.png"))
    resize(driver, "desktop")


@pytest.fixture
def ana():
    driver = chromium("Ana")
    yield driver
    driver.quit()


@pytest.fixture
def ben():
    driver = chromium("Ben")
    yield driver
    driver.quit()
