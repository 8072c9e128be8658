"""The client against the real server."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from storefront_client import Client, ConnectionClosed, StorefrontError, line_total, minor_units


def loaded(state) -> bool:
    return state["phase"] in ("loaded", "failed")


async def first_in_stock(client: Client) -> str:
    catalog = await client.open("catalog")
    state = await catalog.wait_for(loaded)
    return next(product["id"] for product in state["products"] if product["inStock"])


async def test_start_initializes_and_ping_works(client: Client):
    assert client.initialize_result["serverInfo"]["name"] == "storefront"
    assert await client.ping() == {}
    assert any(method["name"] == "cart/add" for method in (await client.discover())["methods"])


async def test_mirror_is_current_when_an_action_returns(client: Client):
    product_id = await first_in_stock(client)
    cart = await client.open("cart")
    other = await client.open("cart")
    await cart.wait_for(loaded)
    result = await client.cart_add(cart, product_id, 2)
    assert result["version"] == cart.version
    assert [(line["productId"], line["quantity"]) for line in cart.state["lines"]] == [(product_id, 2)]
    assert other.state["lines"] == cart.state["lines"]
    assert (await client.get(cart.handle))["state"] == cart.state
    totals = cart.state["totals"]
    assert totals["itemCount"] == 2
    assert line_total(cart.state["lines"][0]) == totals["subtotal"], "one line: its total is the subtotal"
    assert minor_units(totals["total"]) == minor_units(totals["subtotal"]) + minor_units(totals["tax"])


async def test_refusals_raise_storefront_error_with_reason(signed_in: Client):
    client = signed_in
    cart = await client.open("cart")
    await cart.wait_for(loaded)
    with pytest.raises(StorefrontError) as caught:
        await client.cart_checkout(cart)
    assert caught.value.code == StorefrontError.REFUSED and caught.value.reason == "emptyCart"
    with pytest.raises(StorefrontError) as caught:
        await client.open("productDetail")
    assert caught.value.code == StorefrontError.INVALID_PARAMS and caught.value.parameter == "args.productId"


async def test_a_version_gap_resyncs_with_get(client: Client):
    product_id = await first_in_stock(client)
    cart = await client.open("cart")
    await cart.wait_for(loaded)
    cart.version -= 1  # pretend a notification was lost
    cart.state = {"stale": True}
    await client.cart_add(cart, product_id, 1)
    state = await cart.wait_for(lambda state: "stale" not in state)
    assert cart.resyncs == 1
    assert state == (await client.get(cart.handle))["state"]


async def test_snapshot_mode(binary):
    async with await Client.start(binary, database=":memory:", state_updates="snapshot") as client:
        product_id = await first_in_stock(client)
        detail = await client.open("productDetail", productId=product_id)
        await detail.wait_for(loaded)
        await client.product_increment_quantity(detail)
        assert detail.state["quantity"] == 2
        assert detail.state == (await client.get(detail.handle))["state"]


async def test_every_typed_call_reaches_its_method(signed_in: Client):
    client = signed_in
    product_id = await first_in_stock(client)
    catalog = await client.open("catalog")
    await catalog.wait_for(loaded)
    await client.catalog_refresh(catalog)
    await client.catalog_set_sort(catalog, "price")
    await client.catalog_set_category(catalog, None)
    await client.catalog_load_more(catalog)
    await client.catalog_toggle_selection(catalog, catalog.state["products"][0]["id"])
    await client.catalog_select_all(catalog)
    await client.catalog_clear_selection(catalog)
    with pytest.raises(StorefrontError, match="-32001"):
        await client.catalog_delete_selected(catalog)
    assert "superseded" not in await client.catalog_search(catalog, "a")

    detail = await client.open("productDetail", productId=product_id)
    await detail.wait_for(loaded)
    await client.product_toggle_favorite(detail)
    await client.product_increment_quantity(detail)
    await client.product_decrement_quantity(detail)
    await client.product_add_to_cart(detail)

    form = await client.open("productForm")
    await form.wait_for(loaded)
    await client.form_set_field(form, "name", "Lamp")
    await client.form_reset(form)
    with pytest.raises(StorefrontError) as caught:
        await client.form_submit(form)
    assert caught.value.reason == "validationFailed"

    cart = await client.open("cart")
    await cart.wait_for(lambda state: state["lines"])
    await client.cart_set_quantity(cart, product_id, 1)
    await client.cart_remove(cart, product_id)
    await client.cart_add(cart, product_id)
    assert "orderId" in await client.cart_checkout(cart)
    await client.cart_clear(cart)

    dashboard = await client.open("dashboard")
    await client.dashboard_reload(dashboard)
    await client.dashboard_reload_section(dashboard, "recentOrders")
    assert dashboard.state["recentOrders"]["items"]
    await dashboard.close()
    with pytest.raises(StorefrontError):
        await client.get(dashboard.handle)


async def test_wait_for_times_out(client: Client):
    cart = await client.open("cart")
    with pytest.raises(asyncio.TimeoutError):
        await cart.wait_for(lambda state: False, timeout=0.2)


async def test_close_reaps_the_process_and_exits_0(binary):
    # The grace period decides when close() gives up and kills (exit code -9): a guard here, not a speed.
    client = await Client.start(binary, database=":memory:", grace_period=60)
    pid = client.process.pid
    assert await client.close() == 0
    assert await client.close() == 0  # twice is fine
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no zombie
    with pytest.raises(ConnectionClosed):
        await client.ping()


async def test_close_kills_a_server_that_does_not_exit(binary):
    client = await Client.start(binary, database=":memory:", grace_period=0.5)
    os.kill(client.process.pid, signal.SIGSTOP)  # it can neither answer nor exit
    code = await client.close()
    assert code == -signal.SIGKILL


async def test_a_dead_server_fails_pending_requests(binary):
    client = await Client.start(binary, database=":memory:")
    client.process.kill()
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(client.ping(), 10)
    await client.close()
