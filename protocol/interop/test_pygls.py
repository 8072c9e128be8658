"""pygls's `JsonRPCClient`, used as published, against the real server.

pygls frames with Content-Length (adding a Content-Type header), uses UUID strings as ids and sends
`"params": null` for a request or notification given no params. Its notification handlers and the
done-callbacks of its request futures run in the order the messages are read, so recording both gives
the order of the wire.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from pygls.client import JsonRPCClient

from conftest import TIMEOUT


class ExitRecordingClient(JsonRPCClient):
    """pygls's client with its `server_exit` hook filled in: `exited` resolves to the server's exit code."""

    def __init__(self) -> None:
        super().__init__()
        self.exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self.exited.set_result(server.returncode)


@pytest.fixture
async def client(server_bin):
    client = ExitRecordingClient()
    await client.start_io(server_bin, "serve", "--database", ":memory:")
    yield client
    # A test that failed half-way leaves its server running. pygls keeps the process only in `_server`.
    if client._server.returncode is None:
        client._server.kill()
    await asyncio.wait_for(client.stop(), TIMEOUT)


def plain(value):
    """pygls hands results and params over as namedtuples (`{}` is an empty one): back to dicts and lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


async def call(client: JsonRPCClient, method: str, params):
    return plain(await asyncio.wait_for(client.protocol.send_request_async(method, params), TIMEOUT))


def sent_messages(caplog) -> list[dict]:
    """What pygls wrote, from its own log line `Sending data: <body>` (logged at INFO before each write)."""
    prefix = "Sending data: "
    return [json.loads(record.getMessage()[len(prefix):])
            for record in caplog.records
            if record.name == "pygls.protocol.json_rpc" and record.getMessage().startswith(prefix)]


async def test_a_pygls_session_opens_a_cart_adds_to_it_pings_and_shuts_down(client, caplog):
    caplog.set_level(logging.INFO, logger="pygls.protocol.json_rpc")
    arrivals: list[tuple] = []  # in the order pygls handled them

    @client.feature("viewModel/changed")
    def changed(params):
        arrivals.append(("changed", params.viewModel, params.version))

    initialized = await call(client, "initialize", {"clientInfo": {"name": "pygls"}})
    assert initialized["serverInfo"]["name"] == "storefront"
    assert isinstance(initialized["protocolVersion"], str)

    opened = await call(client, "viewModel/open", {"type": "cart"})
    handle = opened["viewModel"]
    assert opened["state"]["lines"] == []

    add_params = {"viewModel": handle, "productId": "p-0001", "quantity": 1}
    added = client.protocol.send_request("cart/add", add_params)
    # Runs when pygls reads the answer, before it reads anything after it (nothing is read before we await).
    added.add_done_callback(lambda _: arrivals.append(("answer", "cart/add")))
    version = plain(await asyncio.wait_for(asyncio.wrap_future(added), TIMEOUT))["version"]
    change = ("changed", handle, version)
    assert change in arrivals, f"no viewModel/changed of {handle} at version {version}: {arrivals}"
    assert arrivals.index(change) < arrivals.index(("answer", "cart/add")), arrivals

    assert await call(client, "ping", None) == {}
    assert await call(client, "shutdown", None) is None
    client.protocol.notify("exit", None)
    assert await asyncio.wait_for(asyncio.shield(client.exited), TIMEOUT) == 0

    # What this test is about: pygls really put `"params": null` on the wire for those three.
    sent = {message["method"]: message for message in sent_messages(caplog)}
    for method in ("ping", "shutdown", "exit"):
        assert "params" in sent[method] and sent[method]["params"] is None, sent[method]
