"""Errors raised by the client."""

from __future__ import annotations

from typing import Any


class StorefrontError(Exception):
    """A JSON-RPC error answered by the server.

    Attributes:
        code: the JSON-RPC error code (-32001 refused, -32003 failed, -32004 version conflict, -32602 invalid
            params, ...).
        message: the server's message, for people.
        data: the error's `data` member, or `None`.
        attempts: how many times the request was sent (more than 1 when a storing action was resent after a
            timeout). A version conflict (-32004) answered to a resend may mean that an earlier attempt was
            stored and moved the version itself: the server checks `expectedVersion` before the key.
    """

    attempts: int = 1

    REFUSED = -32001
    FAILED = -32003
    VERSION_CONFLICT = -32004
    SERVER_NOT_INITIALIZED = -32002
    REQUEST_CANCELLED = -32800
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data

    @property
    def reason(self) -> str | None:
        """`data.reason` of a refused (-32001) or failed (-32003) action, such as `"outOfStock"`,
        `"loadFailed"` or `"alreadySubmitted"`: passed through as the server sends it (an open set)."""
        return self.data.get("reason") if isinstance(self.data, dict) else None

    @property
    def details(self) -> dict:
        """`data.details` of a refused or failed action (e.g. `{"content": "favorites"}` for `loadFailed`,
        `{"productId": ...}` for `alreadySubmitted`); `{}` when there are none."""
        details = self.data.get("details") if isinstance(self.data, dict) else None
        return details if isinstance(details, dict) else {}

    @property
    def retryable(self) -> bool:
        """`data.retryable`: whether trying again (for `loadFailed`, the ViewModel's refresh) may help."""
        return bool(self.data.get("retryable")) if isinstance(self.data, dict) else False

    @property
    def current_version(self) -> int | None:
        """`data.currentVersion` of a version conflict (-32004): the version the ViewModel is at, where the
        call's `expected_version` named an older one (nothing changed)."""
        return self.data.get("currentVersion") if isinstance(self.data, dict) else None

    @property
    def parameter(self) -> str | None:
        """`data.parameter` of an invalid-params (-32602) error, such as `"args.productId"`."""
        return self.data.get("parameter") if isinstance(self.data, dict) else None


class ConnectionClosed(ConnectionError):
    """The server process ended (or the client was closed) before answering.

    Attributes:
        idempotency_key: the key of the storing action that was waiting (generated or given), or `None`.
            The change may or may not have been stored: call it again with this key (from a new client on
            the same database) to have it applied once, or answered `{"replayed": True}` if it was.
    """

    idempotency_key: str | None = None


class RequestTimeout(TimeoutError):
    """No answer came within the call's `timeout`, to the request or to any of its resends.

    The attempts were given up, not cancelled: a change may still be stored after this is raised. Calling
    again with `idempotency_key` applies it at most once.

    Attributes:
        method: the JSON-RPC method.
        timeout: the seconds each attempt waited.
        attempts: how many times the request was sent (1 + resends).
        idempotency_key: the key every attempt carried, or `None` for a call that stores nothing (never resent).
    """

    def __init__(self, method: str, timeout: float, attempts: int, idempotency_key: str | None = None):
        super().__init__(f"{method}: no answer within {timeout} s ({attempts} attempt{'s' if attempts != 1 else ''})")
        self.method = method
        self.timeout = timeout
        self.attempts = attempts
        self.idempotency_key = idempotency_key
