"""Storing actions carry idempotency keys and are resent safely after a timeout; expected versions; against the
real server (its `--faults` latency stands in for a server slower than the client's timeout).

No test waits for time to pass: a timeout is the behaviour under test, the server's latency is what makes it
fire, and `shutdown` (answered once every request in flight has been) tells when given-up attempts are done.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from storefront_client import STORING_ACTIONS, Client, ConnectionClosed, RequestTimeout, StorefrontError


def settled(state) -> bool:
    return state["phase"] in ("loaded", "failed")


def quantities(state) -> dict[str, int]:
    return {line["productId"]: line["quantity"] for line in state["lines"]}


def record_writes(client: Client) -> list[dict]:
    """Every message the client writes from now on, in order."""
    written: list[dict] = []
    write = client._write

    async def recording(message):
        written.append(message)
        await write(message)

    client._write = recording
    return written


async def open_cart(client: Client):
    cart = await client.open("cart")
    await cart.wait_for(settled)
    return cart


async def test_the_storing_actions_are_those_the_server_takes_keys_for(client: Client):
    methods = (await client.discover())["methods"]
    actions = [m for m in methods if "/" in m["name"] and not m["name"].startswith(("viewModel/", "$/"))]
    keyed = {m["name"] for m in actions if any(p["name"] == "idempotencyKey" for p in m["params"])}
    assert keyed == {f"{type_}/{name}" for type_, names in STORING_ACTIONS.items() for name in names}
    assert all(any(p["name"] == "expectedVersion" for p in m["params"]) for m in actions)


async def test_each_storing_call_carries_a_new_key_and_other_actions_none(client: Client):
    cart = await open_cart(client)
    written = record_writes(client)
    await client.cart_add(cart, "p-0001", 1)
    await cart.action("add", productId="p-0001", quantity=1)
    await client.cart_dismiss_notices(cart)
    adds = [m["params"] for m in written if m["method"] == "cart/add"]
    keys = [params["idempotencyKey"] for params in adds]
    assert len(set(keys)) == 2 and all(uuid.UUID(key) for key in keys)
    assert quantities(cart.state) == {"p-0001": 2}, "two calls, two keys: both applied"
    [dismiss] = [m["params"] for m in written if m["method"] == "cart/dismissNotices"]
    assert dismiss == {"viewModel": cart.handle}
    with pytest.raises(ValueError):
        await cart.action("dismissNotices", idempotency_key="not-a-storing-action")


async def test_a_timed_out_add_is_resent_with_its_key_applied_once_and_answered_replayed(binary):
    # Each attempt takes the cart's 500 ms of latency before it is stored, longer than the 200 ms the client
    # waits: every attempt that reaches the latency is given up, and the first resend that arrives after the
    # first attempt was stored is answered from the server's record at once.
    async with await Client.start(binary, database=":memory:", extra_args=["--faults", "cart:latency=500ms"]) as client:
        cart = await open_cart(client)
        written = record_writes(client)
        result = await client.cart_add(cart, "p-0001", 2, timeout=0.2, retries=10)
        assert result["replayed"] is True and result["version"] == cart.version
        attempts = [m for m in written if m["method"] == "cart/add"]
        assert len(attempts) >= 2 and client.resends == len(attempts) - 1
        assert len({m["id"] for m in attempts}) == len(attempts), "each resend is a new request"
        assert len({m["params"]["idempotencyKey"] for m in attempts}) == 1, "with the same key"
        assert quantities(cart.state) == {"p-0001": 2}

        # The attempts given up still run in the server; shutdown answers once every one has.
        await client.shutdown()
        assert quantities(cart.state) == {"p-0001": 2}, "applied once"


async def test_a_call_whose_attempts_all_time_out_raises_with_its_key_and_calling_again_with_it_applies_once(binary):
    async with await Client.start(binary, database=":memory:", extra_args=["--faults", "cart:latency=600ms"]) as client:
        cart = await open_cart(client)
        with pytest.raises(RequestTimeout) as caught:
            await client.cart_add(cart, "p-0001", 1, timeout=0.1, retries=1)
        timeout = caught.value
        assert timeout.method == "cart/add" and timeout.attempts == 2 and client.resends == 1
        assert timeout.idempotency_key and isinstance(timeout, TimeoutError)

        await client.cart_add(cart, "p-0001", 1, idempotency_key=timeout.idempotency_key)
        await client.shutdown()
        assert quantities(cart.state) == {"p-0001": 1}, "three requests with one key: applied once"


async def test_a_client_restarted_on_the_same_file_is_answered_from_the_record(binary, tmp_path):
    database = str(tmp_path / "shop.sqlite")
    # Checking out needs an account: the second client resumes the first one's session with its token.
    async with await Client.start(binary, database=database) as first:
        token = (await first.register("restart@example.com", "restart pass 1"))["token"]
        cart = await open_cart(first)
        await first.cart_add(cart, "p-0001", 1, idempotency_key="add-1")
        order = await first.cart_checkout(cart, idempotency_key="checkout-1")
        assert "replayed" not in order

    async with await Client.start(binary, database=database) as second:
        await second.resume(token)
        cart = await open_cart(second)
        assert cart.state["lines"] == []
        again = await second.cart_add(cart, "p-0001", 1, idempotency_key="add-1")
        assert again["replayed"] is True and cart.state["lines"] == [], "not added again"
        placed = await second.cart_checkout(cart, idempotency_key="checkout-1")
        assert placed["replayed"] is True and placed["orderId"] == order["orderId"]


async def test_a_lost_server_leaves_the_key_for_a_new_client_to_resend(binary, tmp_path):
    database = str(tmp_path / "shop.sqlite")
    # Both clients are one account's sessions (a guest's cart is its server's own): the second resumes the token.
    async with await Client.start(binary, database=database, extra_args=["--faults", "cart:latency=300ms"]) as first:
        token = (await first.register("lost@example.com", "lost pass 1"))["token"]
        cart = await open_cart(first)
        written = record_writes(first)
        sent = asyncio.Event()
        write = first._write

        async def noting(message):
            await write(message)
            if message.get("method") == "cart/add":
                sent.set()

        first._write = noting
        adding = asyncio.create_task(first.cart_add(cart, "p-0001", 1))
        await asyncio.wait_for(sent.wait(), 30)
        first.process.kill()
        with pytest.raises(ConnectionClosed) as caught:
            await adding
        [add] = [m for m in written if m["method"] == "cart/add"]
        key = caught.value.idempotency_key
        assert key == add["params"]["idempotencyKey"]

    async with await Client.start(binary, database=database) as second:
        await second.resume(token)
        cart = await open_cart(second)
        await second.cart_add(cart, "p-0001", 1, idempotency_key=key)
        # Whether the killed server stored it or not, the key makes it one unit.
        assert quantities(cart.state) == {"p-0001": 1}


async def test_the_same_key_with_other_params_is_refused_as_reused(client: Client):
    cart = await open_cart(client)
    await client.cart_add(cart, "p-0001", 1, idempotency_key="k")
    for other in ({"product_id": "p-0002", "quantity": 1}, {"product_id": "p-0001", "quantity": 2}):
        with pytest.raises(StorefrontError) as caught:
            await client.cart_add(cart, idempotency_key="k", **other)
        refusal = caught.value
        assert refusal.code == StorefrontError.REFUSED and refusal.reason == "idempotencyKeyReused"
        assert refusal.details == {"idempotencyKey": "k"} and not refusal.retryable
    with pytest.raises(StorefrontError) as caught:
        await client.cart_remove(cart, "p-0001", idempotency_key="k")
    assert caught.value.reason == "idempotencyKeyReused"
    assert quantities(cart.state) == {"p-0001": 1}


async def test_a_stale_expected_version_is_a_version_conflict_and_changes_nothing(client: Client):
    cart = await open_cart(client)
    shown = cart.version
    result = await client.cart_add(cart, "p-0001", 1, expected_version=shown)
    assert result["version"] == cart.version > shown
    with pytest.raises(StorefrontError) as caught:
        await client.cart_add(cart, "p-0001", 1, expected_version=shown)
    conflict = caught.value
    assert conflict.code == StorefrontError.VERSION_CONFLICT == -32004
    assert conflict.current_version == cart.version and conflict.data["expectedVersion"] == shown
    assert quantities(cart.state) == {"p-0001": 1}

    detail = await client.open("productDetail", productId="p-0001")
    await detail.wait_for(settled)
    with pytest.raises(StorefrontError) as caught:
        await client.product_increment_quantity(detail, expected_version=detail.version - 1)
    assert caught.value.code == StorefrontError.VERSION_CONFLICT
    await client.product_increment_quantity(detail, expected_version=detail.version)


async def test_a_resend_with_an_expected_version_is_applied_once_and_says_how_many_attempts_it_took(binary):
    # The first attempt is stored after 500 ms and moves the cart's version; the resend that arrives next is
    # answered replayed, or (as the server checks expectedVersion before the key) refused -32004 with
    # attempts > 1: either way the units are in the cart once.
    async with await Client.start(binary, database=":memory:", extra_args=["--faults", "cart:latency=500ms"]) as client:
        cart = await open_cart(client)
        shown = cart.version
        try:
            result = await client.cart_add(cart, "p-0001", 1, expected_version=shown, timeout=0.2, retries=10)
            assert result["replayed"] is True
        except StorefrontError as error:
            assert error.code == StorefrontError.VERSION_CONFLICT and error.attempts > 1
            assert error.current_version == cart.version > shown
        await client.shutdown()
        assert quantities(cart.state) == {"p-0001": 1}
