"""Lifecycle: initialize, what is allowed before it, shutdown, exit codes, end of input; and transport."""

from __future__ import annotations

import json

import pytest

from storefront_session import Session, encode


def assert_error(response: dict, code: int, request_id) -> dict:
    assert response.get("jsonrpc") == "2.0", response
    assert "result" not in response, response
    assert response["id"] == request_id and type(response["id"]) is type(request_id), response
    error = response["error"]
    assert error["code"] == code, response
    assert isinstance(error["message"], str) and error["message"], response
    return error


def test_initialize_result_has_the_documented_shape(session: Session):
    response = session.request("initialize", {
        "processId": 1234,  # LSP's member: ignored
        "clientInfo": {"name": "conformance"},
        "capabilities": {"stateUpdates": "patch"},
    })
    assert set(response) == {"jsonrpc", "id", "result"}, response
    result = response["result"]
    assert set(result) >= {"protocolVersion", "serverInfo", "capabilities"}, result
    assert isinstance(result["protocolVersion"], str) and result["protocolVersion"]
    assert isinstance(result["serverInfo"]["name"], str) and result["serverInfo"]["name"] == "storefront"
    assert isinstance(result["serverInfo"]["version"], str)
    assert isinstance(result["capabilities"], dict)


def test_initialize_without_params_is_accepted(session: Session):
    assert "protocolVersion" in session.call("initialize")


def test_requests_before_initialize_are_refused_with_32002(session: Session):
    for method, params in [("shutdown", None), ("viewModel/open", {"type": "cart"}), ("no/such", None)]:
        response = session.request(method, params)
        assert_error(response, -32002, response["id"])
    session.initialize()  # and the server still initializes afterwards
    assert session.call("ping") == {}


def test_ping_and_discover_are_allowed_before_initialize(session: Session):
    assert session.call("ping") == {}
    document = session.call("rpc.discover")
    assert isinstance(document, dict) and "methods" in document


def test_notifications_before_initialize_are_not_answered(session: Session):
    session.notify("initialized")
    session.notify("$/cancelRequest", {"id": 99})
    session.notify("no/such/notification", {})
    ping = session.send_request("ping")
    assert session.read_value() == {"jsonrpc": "2.0", "id": ping, "result": {}}


def test_a_second_initialize_is_invalid_request(ready: Session):
    response = ready.request("initialize", {"clientInfo": {"name": "again"}})
    assert_error(response, -32600, response["id"])
    assert ready.call("ping") == {}


def test_shutdown_answers_null_then_refuses_everything_but_exit(ready: Session):
    response = ready.request("shutdown")
    assert response == {"jsonrpc": "2.0", "id": response["id"], "result": None}
    for method in ("ping", "rpc.discover", "initialize", "shutdown"):
        refused = ready.request(method)
        assert_error(refused, -32600, refused["id"])
    ready.notify("exit")
    assert ready.wait() == 0
    assert ready.read_to_end() == []


def test_exit_without_shutdown_exits_1(ready: Session):
    ready.notify("exit")
    assert ready.wait() == 1


def test_exit_before_initialize_exits_1(session: Session):
    session.notify("exit")
    assert session.wait() == 1


def test_end_of_input_answers_everything_then_exits_0(session: Session):
    ids = [session.send_request("ping") for _ in range(5)]
    session.send_request("initialize", {})
    ids.append(ids[-1] + 1)
    ids += [session.send_request("ping") for _ in range(5)]
    session.close_input()
    answered = session.read_to_end()
    assert sorted(message["id"] for message in answered) == sorted(ids)
    assert all("result" in message for message in answered), answered
    assert session.wait() == 0


def test_end_of_input_right_away_exits_0(session: Session):
    session.close_input()
    assert session.read_to_end() == []
    assert session.wait() == 0


# -- transport -------------------------------------------------------------------------------------


def test_auto_framing_answers_in_the_framing_it_was_spoken_to(spawn, framing):
    server = spawn(framing_flag=None)  # no --framing: auto
    if framing == "ndjson":
        server.send_bytes(b"\n  \n")  # leading blank lines do not decide
    assert server.call("ping") == {}
    server.initialize()
    assert server.call("ping") == {}


@pytest.mark.parametrize("framing", ["ndjson"])
def test_ndjson_accepts_crlf_and_skips_blank_lines(spawn):
    server = spawn()
    server.send_bytes(b'\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n\n\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    assert server.read_value() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert server.read_value() == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_ndjson_output_has_no_raw_newline_inside_a_message(spawn, framing):
    server = spawn()
    # A string id with a newline and non-ASCII text: echoed, escaped, on one line.
    request_id = "line\nbreak ☃ é"
    response = server.request("ping", request_id=request_id)
    assert response["id"] == request_id


@pytest.mark.parametrize("framing", ["lsp"])
def test_lsp_length_counts_utf8_bytes_and_other_headers_are_ignored(spawn):
    server = spawn()
    body = json.dumps({"jsonrpc": "2.0", "id": "ü☃🎉", "method": "ping"}, ensure_ascii=False).encode()
    server.send_bytes(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    received = server.read()
    assert received.value == {"jsonrpc": "2.0", "id": "ü☃🎉", "result": {}}


@pytest.mark.parametrize("framing", ["lsp"])
def test_lsp_malformed_header_is_a_parse_error_and_decoding_resumes(spawn):
    server = spawn()
    server.send_bytes(b"Content-Length: banana\r\n\r\n")
    server.send_bytes(encode({"jsonrpc": "2.0", "id": 7, "method": "ping"}, "lsp"))
    error = server.read_value()
    assert error["id"] is None and error["error"]["code"] == -32700, error
    assert server.read_value() == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_a_message_over_the_size_limit_is_skipped_and_answered_32600(spawn):
    server = spawn("--max-message-bytes", "1024")
    big = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"padding": "x" * 5000}}
    server.send(big)
    error = server.read_value()
    assert error["id"] is None and error["error"]["code"] == -32600, error
    assert server.call("ping") == {}


def test_stdout_carries_protocol_bytes_only_even_at_verbose_log_levels(spawn):
    server = spawn("--log-level", "trace")
    server.initialize()
    assert server.call("ping") == {}
    server.request("no/such")
    server.close_input()
    assert server.read_to_end() == []  # anything else on stdout would have failed framing or JSON parsing
    assert server.wait() == 0
