"""A raw-bytes session with `storefront serve` over pipes, in either framing.

The tests speak bytes so that they check the wire contract itself, not a client library's reading of
it. A reader thread splits stdout into messages (by the framing under test) and queues them; every read
has a timeout, so a server that stays silent fails a test instead of hanging it.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import queue
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import jsonpatch

from postgres_databases import POSTGRES

FRAMINGS = ("ndjson", "lsp")

#: Seconds to wait for one message before the test fails: a guard against a hung server, not a measure
#: of speed, so generous (the machine may be busy building).
READ_TIMEOUT = float(os.environ.get("STOREFRONT_READ_TIMEOUT", "60"))

_EOF = object()


class ProtocolViolation(AssertionError):
    """The server wrote something the contract does not allow (bad framing, a non-JSON body, ...)."""


def encode(message: Any, framing: str) -> bytes:
    """One message (or batch), framed. `message` may be bytes (sent as the body) or a JSON value."""
    body = message if isinstance(message, bytes) else json.dumps(message, separators=(",", ":")).encode()
    if framing == "ndjson":
        return body + b"\n"
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def server_command(binary: str, framing: str | None, extra: Iterable[str] = ()) -> list[str]:
    """The argv of `storefront serve` with the framing under test and an in-memory shop when supported.
    Under STOREFRONT_DATABASE, its `--database` is on PostgreSQL instead (see postgres_databases)."""
    argv = [binary, "serve"]
    if framing is not None:
        argv += ["--framing", framing]
    if supports_option(binary, "--database"):
        argv += ["--database", ":memory:"]
    argv += list(extra)
    return POSTGRES.translate(binary, argv) if POSTGRES else argv


_help_cache: dict[str, str] = {}


def supports_option(binary: str, option: str) -> bool:
    """Whether `storefront serve --help` mentions `option` (the shop store's flags land over time)."""
    if binary not in _help_cache:
        done = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True, timeout=60)
        _help_cache[binary] = done.stdout + done.stderr
    return option in _help_cache[binary]


@dataclass
class Received:
    """One message read from stdout: the parsed JSON and the exact body bytes."""

    value: Any
    raw: bytes


class Session:
    """One running `storefront serve` process and its framed stdout."""

    def __init__(self, argv: list[str], framing: str):
        self.framing = framing
        self.argv = argv
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        self._messages: queue.Queue[Any] = queue.Queue()
        self._ids = itertools.count(1)
        self._stashed: dict[Any, dict] = {}
        self.stderr_lines: list[bytes] = []
        #: Every message body read from stdout, exactly as written (for scans of everything the server wrote).
        self.stdout_bodies: list[bytes] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        #: Notifications read while waiting for a response, in order, not yet taken by a test.
        self.notifications: list[Any] = []
        #: Hooks called with each notification as it is read (mirrors use this).
        self.listeners: list[Callable[[dict], None]] = []

    # -- reading ---------------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            while True:
                body = self._read_frame(stream)
                if body is None:
                    break
                self.stdout_bodies.append(body)
                try:
                    value = json.loads(body)
                except ValueError as error:  # the server must write JSON only
                    self._messages.put(ProtocolViolation(f"not JSON on stdout: {body[:200]!r} ({error})"))
                    continue
                self._messages.put(Received(value, body))
        except ProtocolViolation as violation:
            self._messages.put(violation)
        finally:
            self._messages.put(_EOF)

    def _read_frame(self, stream) -> bytes | None:
        if self.framing == "ndjson":
            line = stream.readline()
            if not line:
                return None
            if not line.endswith(b"\n"):
                raise ProtocolViolation(f"last line has no newline: {line[:200]!r}")
            return line[:-1]
        headers: dict[str, str] = {}
        while True:
            line = stream.readline()
            if not line:
                if headers:
                    raise ProtocolViolation("end of output inside a header block")
                return None
            if line == b"\r\n":
                break
            if not line.endswith(b"\r\n") or b":" not in line:
                raise ProtocolViolation(f"bad header line: {line[:200]!r}")
            name, value = line[:-2].split(b":", 1)
            headers[name.decode().strip().lower()] = value.decode().strip()
        if "content-length" not in headers:
            raise ProtocolViolation(f"header block without Content-Length: {headers}")
        length = int(headers["content-length"])
        body = stream.read(length)
        while len(body) < length:
            more = stream.read(length - len(body))
            if not more:
                raise ProtocolViolation("end of output inside a body")
            body += more
        return body

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr_lines.append(line)

    def read(self, timeout: float = READ_TIMEOUT) -> Received:
        """The next message, raw; fails the test after `timeout` seconds or at end of output."""
        try:
            item = self._messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout} s{self._stderr_tail()}") from None
        if item is _EOF:
            self._messages.put(_EOF)  # stay at end of output for later reads
            raise AssertionError(f"the server closed its output{self._stderr_tail()}")
        if isinstance(item, ProtocolViolation):
            raise item
        return item

    def read_value(self, timeout: float = READ_TIMEOUT) -> Any:
        """The next message as JSON, notifications included (they are not routed to listeners)."""
        return self.read(timeout).value

    def read_until_response(self, request_id: Any, timeout: float = READ_TIMEOUT) -> dict:
        """Reads until the response to `request_id`; notifications on the way go to listeners and
        ``notifications``; other responses are kept for later ``read_until_response`` calls."""
        if request_id in self._stashed:
            return self._stashed.pop(request_id)
        while True:
            value = self.read_value(timeout)
            if isinstance(value, dict) and "method" in value and "id" not in value:
                self._notify(value)
                continue
            if isinstance(value, dict) and value.get("id") == request_id and type(value.get("id")) is type(request_id):
                return value
            key = value.get("id") if isinstance(value, dict) else None
            if key is None:
                raise AssertionError(f"unexpected message while waiting for id {request_id!r}: {value!r}")
            self._stashed[key] = value

    def _notify(self, value: dict) -> None:
        self.notifications.append(value)
        for listener in self.listeners:
            listener(value)

    def read_to_end(self, timeout: float = READ_TIMEOUT) -> list[Any]:
        """Every message until the server closes its output."""
        values = []
        while True:
            try:
                item = self._messages.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"the server did not close its output within {timeout} s") from None
            if item is _EOF:
                self._messages.put(_EOF)
                return values
            if isinstance(item, ProtocolViolation):
                raise item
            values.append(item.value)

    def _stderr_tail(self) -> str:
        tail = b"".join(self.stderr_lines[-10:]).decode(errors="replace")
        return f"\n--- server stderr (tail) ---\n{tail}" if tail else ""

    # -- writing ---------------------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        """Sends one message or batch (a JSON value, or bytes used as the body), framed."""
        self.send_bytes(encode(message, self.framing))

    def next_id(self) -> int:
        return next(self._ids)

    def request_message(self, method: str, params: Any = None, request_id: Any = None) -> dict:
        """A request with a new id (or `request_id`), to send later."""
        request_id = self.next_id() if request_id is None else request_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        return message

    def send_request(self, method: str, params: Any = None, request_id: Any = None) -> Any:
        """Sends a request without reading; returns its id."""
        message = self.request_message(method, params, request_id)
        self.send(message)
        return message["id"]

    def send_at_once(self, *messages: Any) -> None:
        """Sends several messages in one write (small enough for the pipe to take whole), so the server
        reads them together and dispatches them in one turn, before the work of any has begun. What one
        does to another (supersedes it, cancels it, reuses its id) then does not depend on how long the
        client took between them."""
        self.send_bytes(b"".join(encode(message, self.framing) for message in messages))

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def request(self, method: str, params: Any = None, request_id: Any = None) -> dict:
        """Sends a request and returns its whole response object (result or error)."""
        return self.read_until_response(self.send_request(method, params, request_id))

    def call(self, method: str, params: Any = None) -> Any:
        """Sends a request and returns its result; fails the test on an error response."""
        response = self.request(method, params)
        assert "error" not in response, f"{method} {params!r} failed: {response['error']!r}"
        return response["result"]

    def initialize(self, capabilities: dict | None = None) -> dict:
        params: dict[str, Any] = {"clientInfo": {"name": "conformance", "version": "1"}}
        if capabilities is not None:
            params["capabilities"] = capabilities
        result = self.call("initialize", params)
        self.notify("notifications/initialized", {})
        return result

    # -- ending ----------------------------------------------------------------------------------

    def close_input(self) -> None:
        assert self.process.stdin is not None
        if not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass

    def wait(self, timeout: float = READ_TIMEOUT) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the server did not exit within {timeout} s{self._stderr_tail()}") from None

    def kill(self) -> None:
        """Ends the process if it still runs and reaps it (no zombies left behind by a failing test)."""
        self.close_input()
        if self.process.poll() is None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()



# -- ViewModel mirrors -------------------------------------------------------------------------------


@dataclass
class Mirror:
    """What a client knows of one open ViewModel: the opened state with every notification applied."""

    handle: str
    type: str
    version: int
    state: Any
    history: list[int] = field(default_factory=list)

    def apply(self, params: dict) -> None:
        version = params["version"]
        assert version == self.version + 1, (
            f"{self.handle}: version {version} follows {self.version}; versions must rise by exactly 1")
        if "patch" in params:
            assert "state" not in params, f"a notification carries both patch and state: {params!r}"
            self.state = jsonpatch.apply_patch(self.state, params["patch"], in_place=False)
        else:
            self.state = copy.deepcopy(params["state"])
        self.version = version
        self.history.append(version)


class Mirrors:
    """Mirrors of every ViewModel a test opened on a session, fed by its notifications."""

    def __init__(self, session: Session, on_state: Callable[[Mirror], None] | None = None):
        self.session = session
        self.by_handle: dict[str, Mirror] = {}
        self.on_state = on_state
        session.listeners.append(self._on_notification)

    def _on_notification(self, message: dict) -> None:
        if message.get("method") != "viewModel/changed":
            return
        params = message["params"]
        mirror = self.by_handle.get(params["viewModel"])
        assert mirror is not None, f"a notification for a ViewModel nobody opened (or closed): {params!r}"
        mirror.apply(params)
        if self.on_state:
            self.on_state(mirror)

    def open(self, type_: str, args: dict | None = None) -> Mirror:
        params: dict[str, Any] = {"type": type_}
        if args is not None:
            params["args"] = args
        result = self.session.call("viewModel/open", params)
        assert set(result) == {"viewModel", "version", "state"}, result
        mirror = Mirror(result["viewModel"], type_, result["version"], result["state"])
        self.by_handle[mirror.handle] = mirror
        if self.on_state:
            self.on_state(mirror)
        return mirror

    def close(self, mirror: Mirror) -> None:
        assert self.session.call("viewModel/close", {"viewModel": mirror.handle}) is None
        del self.by_handle[mirror.handle]

    def get(self, mirror: Mirror) -> dict:
        return self.session.call("viewModel/get", {"viewModel": mirror.handle})

    def assert_in_sync(self, mirror: Mirror) -> None:
        """viewModel/get equals the mirror (notifications read on the way are applied first)."""
        current = self.get(mirror)
        assert current["viewModel"] == mirror.handle
        assert current["version"] == mirror.version, (mirror.handle, current["version"], mirror.version)
        assert current["state"] == mirror.state, f"{mirror.handle}: mirror differs from viewModel/get"

    def wait_until(self, mirror: Mirror, predicate: Callable[[Any], bool], timeout: float = READ_TIMEOUT) -> None:
        """Reads notifications until `predicate(mirror.state)` holds."""
        while not predicate(mirror.state):
            value = self.session.read_value(timeout)
            assert isinstance(value, dict) and "id" not in value, f"unexpected message: {value!r}"
            self.session._notify(value)
