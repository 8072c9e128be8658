"""Errors raised by the client."""

from __future__ import annotations

from typing import Any


class StorefrontError(Exception):
    """A JSON-RPC error answered by the server.

    Attributes:
        code: the JSON-RPC error code (-32001 refused, -32003 failed, -32602 invalid params, ...).
        message: the server's message, for people.
        data: the error's `data` member, or `None`.
    """

    REFUSED = -32001
    FAILED = -32003
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
    def parameter(self) -> str | None:
        """`data.parameter` of an invalid-params (-32602) error, such as `"args.productId"`."""
        return self.data.get("parameter") if isinstance(self.data, dict) else None


class ConnectionClosed(ConnectionError):
    """The server process ended (or the client was closed) before answering."""
