"""Retries of failed loads, unknown favourites, units in the cart, cart notices and the form's refusals,
against the real server (faults injected with its `--faults` option)."""

from __future__ import annotations

import asyncio

import pytest

from storefront_client import Client, StorefrontError


def settled(state) -> bool:
    return state["phase"] in ("loaded", "failed")


def faulty(binary: str, spec: str):
    return Client.start(binary, database=":memory:", extra_args=["--faults", spec])


async def test_a_missing_product_fails_and_its_refresh_answers_and_stays_failed(client: Client):
    detail = await client.open("productDetail", productId="p-9999")
    state = await detail.wait_for(settled)
    assert state["phase"] == "failed" and "p-9999" in state["error"]["message"]
    assert state["isFavorite"] is None and state["inCart"] is None and not state["canToggleFavorite"]

    before = detail.version
    result = await client.product_refresh(detail)
    assert result["version"] == detail.version > before and not result.get("superseded")
    assert detail.state == state, "the retry fails the same way"

    # A failed screen's refusal says what is true: the product does not exist (not "still loading").
    with pytest.raises(StorefrontError) as caught:
        await client.product_add_to_cart(detail)
    assert caught.value.reason == "productNotFound" and caught.value.details == {"productId": "p-9999"}


async def test_a_favourites_outage_shows_the_product_with_its_favourite_unknown(binary):
    async with await faulty(binary, "favorites:failure-rate=1") as client:
        detail = await client.open("productDetail", productId="p-0001")
        state = await detail.wait_for(settled)
        assert state["phase"] == "loaded" and state["product"]["id"] == "p-0001"
        assert state["isFavorite"] is None and state["canToggleFavorite"] is False
        assert state["error"]["retryable"] and state["canAddToCart"]

        with pytest.raises(StorefrontError) as caught:
            await client.product_toggle_favorite(detail)
        refusal = caught.value
        assert refusal.code == StorefrontError.REFUSED and refusal.reason == "loadFailed"
        assert refusal.details == {"content": "favorites"} and refusal.retryable

        await client.product_refresh(detail)
        assert detail.state["isFavorite"] is None and detail.state["error"] == state["error"]


async def test_a_cart_outage_fails_the_cart_and_its_refresh_stays_failed(binary):
    async with await faulty(binary, "cart:failure-rate=1") as client:
        cart = await client.open("cart")
        state = await cart.wait_for(settled)
        assert state["phase"] == "failed" and state["error"]["retryable"]
        before = cart.version
        assert (await client.cart_refresh(cart))["version"] == cart.version > before
        assert cart.state["phase"] == "failed"


async def test_a_form_whose_categories_failed_refreshes_and_stays_failed(binary):
    async with await faulty(binary, "catalog:failure-rate=1") as client:
        form = await client.open("productForm")
        state = await form.wait_for(settled)
        assert state["phase"] == "failed" and state["categories"] == []
        before = form.version
        assert (await client.form_refresh(form))["version"] == form.version > before
        assert form.state["phase"] == "failed"


async def test_the_product_counts_the_units_already_in_the_cart(client: Client):
    detail = await client.open("productDetail", productId="p-0001")
    state = await detail.wait_for(settled)
    assert state["inCart"] == 0
    limit = state["maxQuantity"]
    assert limit == min(state["product"]["maxPerOrder"], state["product"]["stock"])

    cart = await client.open("cart")
    await cart.wait_for(settled)
    await client.cart_add(cart, "p-0001", 3)
    # The cart's change reaches the product through the shared services, in a later turn.
    state = await detail.wait_for(lambda state: state["inCart"] == 3)
    assert state["maxQuantity"] == limit - 3


async def test_a_deleted_product_leaves_a_notice_in_the_cart_until_dismissed(client: Client):
    catalog = await client.open("catalog")
    product = (await catalog.wait_for(settled))["products"][0]
    cart = await client.open("cart")
    await cart.wait_for(settled)
    await client.cart_add(cart, product["id"], 1)

    await client.catalog_toggle_selection(catalog, product["id"])
    await client.catalog_delete_selected(catalog)
    state = await cart.wait_for(lambda state: state["notices"])
    assert state["lines"] == []
    [notice] = state["notices"]
    assert notice["productId"] == product["id"] and notice["name"] == product["name"]
    assert notice["reason"] == "productDeleted" and product["name"] in notice["message"]

    await client.cart_dismiss_notices(cart)
    assert cart.state["notices"] == []


async def test_selecting_an_unlisted_product_is_refused_not_listed(client: Client):
    catalog = await client.open("catalog")
    state = await catalog.wait_for(settled)
    assert state["loadMorePhase"] == "idle" and state["loadMoreError"] is None
    unlisted = "p-0240"
    assert unlisted not in [product["id"] for product in state["products"]]
    with pytest.raises(StorefrontError) as caught:
        await client.catalog_toggle_selection(catalog, unlisted)
    assert caught.value.reason == "notListed"


async def test_load_more_appends_a_page_with_its_own_phase(client: Client):
    catalog = await client.open("catalog")
    first = len((await catalog.wait_for(settled))["products"])
    await client.catalog_load_more(catalog)
    state = catalog.state
    assert len(state["products"]) == 2 * first
    assert state["phase"] == "loaded" and state["loadMorePhase"] == "idle" and state["loadMoreError"] is None
    assert "isLoadingMore" not in state


async def test_a_refused_submit_shows_every_error_and_a_second_submit_is_already_submitted(client: Client):
    form = await client.open("productForm")
    state = await form.wait_for(settled)
    with pytest.raises(StorefrontError) as caught:
        await client.form_submit(form)
    assert caught.value.reason == "validationFailed"
    assert form.state["errors"] == caught.value.details and {"name", "price", "category"} <= set(form.state["errors"])

    await client.form_set_field(form, "name", "Walnut Desk Tidy")
    await client.form_set_field(form, "price", "24.50")
    await client.form_set_field(form, "category", state["categories"][0]["id"])
    await client.form_submit(form)
    created = form.state["createdProductId"]
    assert form.state["submitPhase"] == "succeeded" and created

    with pytest.raises(StorefrontError) as caught:
        await client.form_submit(form)
    assert caught.value.reason == "alreadySubmitted" and caught.value.details == {"productId": created}


async def test_a_checkout_outcome_ends_with_the_next_cart_change(signed_in: Client):
    client = signed_in
    cart = await client.open("cart")
    await cart.wait_for(settled)
    await client.cart_add(cart, "p-0001", 1)
    result = await client.cart_checkout(cart)
    assert cart.state["checkoutPhase"] == "succeeded" and cart.state["lastOrder"]["id"] == result["orderId"]
    await client.cart_add(cart, "p-0001", 1)
    assert cart.state["checkoutPhase"] == "idle" and cart.state["lastOrder"] is None


async def test_a_superseded_search_is_a_result_not_an_error(binary):
    # The catalog's latency keeps the first search in flight while the second arrives (both are written at
    # once): the first is replaced, whatever the machine's speed.
    async with await faulty(binary, "catalog:latency=1s") as client:
        catalog = await client.open("catalog")
        await catalog.wait_for(settled)
        first, second = await asyncio.gather(client.catalog_search(catalog, "a"),
                                             client.catalog_search(catalog, "kettle"))
        assert first["superseded"] is True and "superseded" not in second
        assert catalog.state["query"] == "kettle" and catalog.state["phase"] == "loaded"
