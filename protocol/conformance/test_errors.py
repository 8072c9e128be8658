"""Error codes of malformed and unknown messages, and ids echoed exactly."""

from __future__ import annotations

import pytest

from storefront_session import Session
from test_lifecycle import assert_error


@pytest.mark.parametrize("body", [b"{", b"not json", b'{"jsonrpc":"2.0","id":1,"method":"ping"', b'"\xff\xfe"'],
                         ids=["truncated", "text", "unterminated", "invalid-utf8"])
def test_unparsable_messages_are_parse_errors_with_null_id(ready: Session, body: bytes):
    ready.send(body)
    assert_error(ready.read_value(), -32700, None)
    assert ready.call("ping") == {}  # the stream goes on


@pytest.mark.parametrize("message", [42, "ping", None, True, {"id": 1.5, "jsonrpc": "2.0", "method": "ping"},
                                     {"id": {}, "jsonrpc": "2.0", "method": "ping"},
                                     {"id": [1], "jsonrpc": "2.0", "method": "ping"},
                                     {"id": True, "jsonrpc": "2.0", "method": "ping"}],
                         ids=["number", "string", "null", "bool", "float-id", "object-id", "array-id", "bool-id"])
def test_invalid_requests_without_a_readable_id_answer_with_null_id(ready: Session, message):
    ready.send(message)
    assert_error(ready.read_value(), -32600, None)


@pytest.mark.parametrize("message", [
    {"jsonrpc": "1.0", "id": 5, "method": "ping"},
    {"id": 5, "method": "ping"},
    {"jsonrpc": 2.0, "id": 5, "method": "ping"},
    {"jsonrpc": "2.0", "id": 5},
    {"jsonrpc": "2.0", "id": 5, "method": 17},
    {"jsonrpc": "2.0", "id": 5, "method": "ping", "params": 3},
    {"jsonrpc": "2.0", "id": 5, "method": "ping", "params": "x"},
], ids=["jsonrpc-1.0", "no-jsonrpc", "jsonrpc-number", "no-method", "method-number", "params-number",
        "params-string"])
def test_invalid_requests_with_a_readable_id_echo_it(ready: Session, message):
    ready.send(message)
    assert_error(ready.read_value(), -32600, 5)


def test_params_null_means_no_params(ready: Session):
    # Emacs's jsonrpc.el and pygls send "params": null for a method without params.
    ready.send({"jsonrpc": "2.0", "id": 41, "method": "ping", "params": None})
    assert ready.read_value() == {"jsonrpc": "2.0", "id": 41, "result": {}}


def test_params_null_for_a_method_with_required_params_names_the_first_missing_one(ready: Session):
    ready.send({"jsonrpc": "2.0", "id": 42, "method": "viewModel/get", "params": None})
    error = assert_error(ready.read_value(), -32602, 42)
    assert error["data"]["parameter"] == "viewModel"


def test_unknown_method_is_32601_naming_it(ready: Session):
    response = ready.request("cart/fly", {"viewModel": "v1"})
    error = assert_error(response, -32601, response["id"])
    assert error["data"]["method"] == "cart/fly"


def test_unknown_notification_is_not_answered(ready: Session):
    ready.notify("cart/fly", {})
    ready.notify("ping")  # a method sent as a notification: not answered either
    request_id = ready.send_request("ping")
    assert ready.read_value() == {"jsonrpc": "2.0", "id": request_id, "result": {}}


def test_invalid_params_name_the_parameter(session: Session):
    response = session.request("initialize", {"clientInfo": {"name": 5}})
    error = assert_error(response, -32602, response["id"])
    assert error["data"]["parameter"] == "clientInfo.name", error
    assert isinstance(error["data"]["reason"], str)
    session.initialize()  # a refused initialize does not count


@pytest.mark.parametrize("request_id", [0, -1, 7, 2**53, "", "abc", "ü☃🎉", "1", "  spaced  ", "a\"quote\\"],
                         ids=lambda value: repr(value))
def test_ids_are_echoed_exactly(ready: Session, request_id):
    ready.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    response = ready.read_value()
    assert response == {"jsonrpc": "2.0", "id": request_id, "result": {}}
    assert type(response["id"]) is type(request_id)


def test_an_error_response_echoes_a_string_id(ready: Session):
    response = ready.request("no/such", request_id="req-1")
    assert_error(response, -32601, "req-1")
