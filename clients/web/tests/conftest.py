"""Fixtures: a bridge on a free port with a fresh database, and headless Chromium (Debian's)."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parent.parent
OUT = WEB / "out"


def children_of(pid: int) -> list[int]:
    """Child processes of `pid`, zombies included (they stay children until reaped)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def wait_until(condition, timeout: float = 60.0, what: str = "condition"):
    """Polls `condition` until it returns something true; `timeout` only decides when a stuck test fails."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class RunningBridge:
    def __init__(self, process: subprocess.Popen, url: str):
        self.process = process
        self.url = url  # http://127.0.0.1:PORT/?token=TOKEN
        self.base, self.token = url.split("/?token=")
        self.ws_url = self.base.replace("http://", "ws://") + "/ws?token=" + self.token

    def servers(self) -> list[int]:
        return children_of(self.process.pid)


@contextlib.contextmanager
def running_bridge(folder: Path, *options: str):
    """A bridge on a free port with a fresh database in `folder`; `options` go to bridge.py (`--faults`)."""
    process = subprocess.Popen(
        [sys.executable, str(WEB / "bridge.py"), "--port", "0", "--database", str(folder / "shop.sqlite"), *options],
        stdout=subprocess.PIPE, stderr=open(folder / "bridge.log", "w"), text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("Storefront web bridge: http://127.0.0.1:"), f"unexpected first line {line!r}"
        running = RunningBridge(process, line.split(": ", 1)[1].strip())
        yield running
        if process.poll() is None:
            wait_until(lambda: not running.servers(), what="every server to be reaped")
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def bridge(tmp_path):
    with running_bridge(tmp_path) as running:
        yield running


@pytest.fixture
def faulty_bridge(tmp_path, request):
    """A bridge whose servers inject faults: parametrize it (indirect) with the `--faults` spec."""
    with running_bridge(tmp_path, "--faults", request.param) as running:
        yield running


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager download anything
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1500,950", "--no-first-run"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options,
                              service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))
    try:
        yield driver
    finally:
        driver.quit()
