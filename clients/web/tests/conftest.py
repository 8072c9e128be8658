"""Fixtures: a bridge on a free port with a fresh database, and headless Chromium (Debian's)."""
from __future__ import annotations

import contextlib
import itertools
import json
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


def storefront_binary() -> str:
    """The server the bridge starts (its own rule: $STOREFRONT_BIN, the newest repository build, PATH)."""
    sys.path.insert(0, str(WEB))
    try:
        from bridge import find_server
    finally:
        sys.path.remove(str(WEB))
    return find_server(None)


class StdioServer:
    """A second `storefront serve` on the bridge's database, driven from the test over its pipes: what another
    process (a script, an editor, another person's browser) changes arrives in the page through the change feed.
    Requests are answered in order here (one at a time); notifications are read and dropped."""

    def __init__(self, database: Path, log: Path):
        self.process = subprocess.Popen([storefront_binary(), "serve", "--framing", "ndjson", "--database", str(database)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log, "w"), text=True)
        self.ids = itertools.count(1)
        self.request("initialize", {"clientInfo": {"name": "web-tests"}, "capabilities": {"stateUpdates": "snapshot"}})
        self.states: dict[str, dict] = {}

    def request(self, method: str, params: dict | None = None) -> dict:
        """Sends one request and returns its result; raises AssertionError with the error otherwise."""
        id_ = next(self.ids)
        message = {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params is not None else {})}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            assert line, f"the second server exited (status {self.process.poll()})"
            answer = json.loads(line)
            if answer.get("method") == "viewModel/changed":
                self.states[answer["params"]["viewModel"]] = answer["params"]["state"]
            elif answer.get("id") == id_:
                assert "error" not in answer, f"{method}: {answer['error']}"
                return answer["result"]

    def open(self, type_: str, **args) -> str:
        result = self.request("viewModel/open", {"type": type_, "args": args})
        self.states[result["viewModel"]] = result["state"]
        return result["viewModel"]

    def wait_loaded(self, handle: str) -> dict:
        """The state once its phase is no longer loading (its load arrives as a notification)."""
        deadline = time.monotonic() + 60
        while self.states[handle].get("phase") in ("idle", "loading"):
            assert time.monotonic() < deadline, f"{handle} did not load"
            self.request("ping")
            time.sleep(0.05)
        return self.states[handle]

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def second_server(tmp_path):
    """Starts a second server on `tmp_path/shop.sqlite` (the bridge fixture's database) when called."""
    started: list[StdioServer] = []

    def start() -> StdioServer:
        server = StdioServer(tmp_path / "shop.sqlite", tmp_path / f"second-{len(started)}.log")
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


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
