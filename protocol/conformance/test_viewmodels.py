"""Every ViewModel method and action of protocol/README.md, with its refusals."""

from __future__ import annotations

import copy
import re
from decimal import Decimal

import pytest

from storefront_session import Mirrors
from test_lifecycle import assert_error
from viewmodel_helpers import Checkpoint, action, ok, open_settled, refused, register_account, settled

pytestmark = pytest.mark.usefixtures("viewmodels_available")

TYPES = ["catalog", "productDetail", "productForm", "cart", "dashboard", "priceTicker"]


@pytest.fixture
def catalog(mirrors: Mirrors):
    mirror = open_settled(mirrors, "catalog")
    assert mirror.state["phase"] == "loaded", mirror.state
    assert mirror.state["products"], "the demo catalog has products"
    return mirror


@pytest.fixture
def product_ids(catalog) -> list[str]:
    return [product["id"] for product in catalog.state["products"]]


def in_stock_id(catalog) -> str:
    return next(product["id"] for product in catalog.state["products"] if product["inStock"])


# -- open / get / close --------------------------------------------------------------------------


@pytest.mark.parametrize("type_", TYPES)
def test_open_returns_a_handle_a_version_and_the_state_then_the_load_follows(mirrors: Mirrors, type_, validate_state):
    args = {"productId": "p-0001"} if type_ in ("productDetail", "priceTicker") else None
    mirror = mirrors.open(type_, args)
    assert re.fullmatch(r"v\d+", mirror.handle), mirror.handle
    assert isinstance(mirror.version, int)
    validate_state(type_, mirror.state)
    opened_version = mirror.version
    mirrors.wait_until(mirror, lambda state: settled(type_, state))
    assert mirror.version > opened_version or type_ == "productForm", "the loaded state follows as a notification"
    validate_state(type_, mirror.state)
    mirrors.assert_in_sync(mirror)


def test_handles_are_distinct_and_several_of_a_type_may_be_open(mirrors: Mirrors):
    handles = [mirrors.open("cart").handle for _ in range(3)] + [mirrors.open("catalog").handle]
    assert len(set(handles)) == 4


def test_close_kills_the_handle(mirrors: Mirrors):
    mirror = open_settled(mirrors, "cart")
    mirrors.close(mirror)
    for method, params in [("viewModel/get", {}), ("viewModel/close", {}), ("cart/clear", {})]:
        response = mirrors.session.request(method, {"viewModel": mirror.handle, **params})
        error = assert_error(response, -32602, response["id"])
        assert error["data"]["parameter"] == "viewModel"


def test_an_action_sent_before_its_viewmodels_close_is_cancelled_not_invalid(mirrors: Mirrors):
    # The handle was open when the action arrived; the close, read in the same turn, comes before the action
    # starts: the action answers -32800 and does nothing, as one whose screen closes while it runs.
    cart = open_settled(mirrors, "cart")
    other = open_settled(mirrors, "cart")
    detail = open_settled(mirrors, "productDetail", {"productId": "p-0001"})
    session = mirrors.session
    messages = [
        session.request_message("cart/add", {"viewModel": cart.handle, "productId": "p-0001", "quantity": 1}),
        session.request_message("viewModel/close", {"viewModel": cart.handle}),
        session.request_message("productDetail/toggleFavorite", {"viewModel": detail.handle}),
        session.request_message("viewModel/close", {"viewModel": detail.handle}),
    ]
    session.send_at_once(*messages)
    answers = [session.read_until_response(message["id"]) for message in messages]
    for answer in (answers[0], answers[2]):
        assert_error(answer, -32800, answer["id"])
    assert answers[1]["result"] is None and answers[3]["result"] is None
    mirrors.assert_in_sync(other)
    assert other.state["lines"] == []
    fresh = open_settled(mirrors, "productDetail", {"productId": "p-0001"})
    assert fresh.state["isFavorite"] is False and fresh.state["inCart"] == 0, fresh.state


@pytest.mark.parametrize("method, params, parameter", [
    ("viewModel/open", {"type": "basket"}, "type"),
    ("viewModel/open", {}, "type"),
    ("viewModel/open", {"type": 5}, "type"),
    ("viewModel/open", {"type": "productDetail"}, "args.productId"),
    ("viewModel/open", {"type": "productDetail", "args": {"productId": 12}}, "args.productId"),
    ("viewModel/open", {"type": "cart", "args": [1]}, "args"),
    ("viewModel/get", {}, "viewModel"),
    ("viewModel/get", {"viewModel": "v999"}, "viewModel"),
    ("viewModel/get", {"viewModel": 1}, "viewModel"),
    ("viewModel/close", {"viewModel": "nope"}, "viewModel"),
    ("cart/add", {"viewModel": "v999", "productId": "p-0001", "quantity": 1}, "viewModel"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_bad_params_are_32602_naming_the_parameter(ready, method, params, parameter):
    response = ready.request(method, params)
    error = assert_error(response, -32602, response["id"])
    assert error["data"]["parameter"] == parameter, error
    assert isinstance(error["data"]["reason"], str) and error["data"]["reason"]


def test_action_args_missing_or_ill_typed_are_32602(mirrors: Mirrors):
    cart = mirrors.open("cart")
    catalog = mirrors.open("catalog")
    session = mirrors.session
    for method, params, parameter in [
        ("cart/add", {"viewModel": cart.handle, "productId": "p-0001"}, "quantity"),
        ("cart/add", {"viewModel": cart.handle, "productId": "p-0001", "quantity": "two"}, "quantity"),
        ("cart/remove", {"viewModel": cart.handle}, "productId"),
        ("catalog/setSort", {"viewModel": catalog.handle, "sort": "colour"}, "sort"),
        ("catalog/search", {"viewModel": catalog.handle, "query": 3}, "query"),
        ("cart/clear", {"viewModel": catalog.handle}, "viewModel"),  # a handle of another type
        ("catalog/refresh", {}, "viewModel"),
    ]:
        response = session.request(method, params)
        error = assert_error(response, -32602, response["id"])
        assert error["data"]["parameter"] == parameter, (method, params, error)


# -- catalog -------------------------------------------------------------------------------------


def test_catalog_refresh_search_category_sort(mirrors: Mirrors, catalog):
    ok(action(mirrors, catalog, "refresh"))
    result = ok(action(mirrors, catalog, "search", query="zzzz-no-such-product"))
    assert result["version"] == catalog.version and catalog.state["query"] == "zzzz-no-such-product"
    assert catalog.state["products"] == [] and catalog.state["totalCount"] == 0
    ok(action(mirrors, catalog, "search", query=""))
    assert catalog.state["products"]

    ok(action(mirrors, catalog, "setCategory", category="books"))
    assert catalog.state["category"] == "books"
    assert {product["category"] for product in catalog.state["products"]} == {"books"}
    ok(action(mirrors, catalog, "setCategory", category=None))
    assert catalog.state["category"] is None

    ok(action(mirrors, catalog, "setSort", sort="price"))
    prices = [Decimal(product["price"]) for product in catalog.state["products"]]
    assert catalog.state["sort"] == "price" and prices == sorted(prices)
    ok(action(mirrors, catalog, "setSort", sort="name"))
    names = [product["name"] for product in catalog.state["products"]]
    assert names == sorted(names, key=str.casefold) or names == sorted(names)
    mirrors.assert_in_sync(catalog)


def test_catalog_unknown_category_is_refused_and_nothing_changes(mirrors: Mirrors, catalog):
    before = (catalog.version, catalog.state)
    refused(action(mirrors, catalog, "setCategory", category="spaceships"), "categoryNotFound")
    assert (catalog.version, catalog.state) == before
    mirrors.assert_in_sync(catalog)


def test_catalog_load_more_appends(mirrors: Mirrors, catalog):
    assert catalog.state["hasMore"], "the demo catalog has more than one page"
    first = [product["id"] for product in catalog.state["products"]]
    ok(action(mirrors, catalog, "loadMore"))
    now = [product["id"] for product in catalog.state["products"]]
    assert now[:len(first)] == first and len(now) > len(first)
    mirrors.assert_in_sync(catalog)


def test_catalog_selection_and_delete(mirrors: Mirrors, catalog, product_ids):
    refused(action(mirrors, catalog, "deleteSelected"), "nothingSelected")
    refused(action(mirrors, catalog, "toggleSelection", productId="p-nope"), "notListed")
    ok(action(mirrors, catalog, "toggleSelection", productId=product_ids[1]))
    ok(action(mirrors, catalog, "toggleSelection", productId=product_ids[0]))
    assert catalog.state["selection"] == sorted(product_ids[:2])
    ok(action(mirrors, catalog, "toggleSelection", productId=product_ids[1]))
    assert catalog.state["selection"] == [product_ids[0]]
    ok(action(mirrors, catalog, "selectAll"))
    assert catalog.state["selection"] == sorted(product_ids)
    ok(action(mirrors, catalog, "clearSelection"))
    assert catalog.state["selection"] == []

    total = catalog.state["totalCount"]
    ok(action(mirrors, catalog, "toggleSelection", productId=product_ids[0]))
    ok(action(mirrors, catalog, "deleteSelected"))
    assert product_ids[0] not in [product["id"] for product in catalog.state["products"]]
    assert catalog.state["totalCount"] == total - 1 and catalog.state["selection"] == []
    mirrors.assert_in_sync(catalog)


def test_a_superseded_search_answers_superseded(mirrors: Mirrors, catalog):
    session = mirrors.session
    # In one write: the second search comes within the first one's debounce however busy the machine is.
    first = session.request_message("catalog/search", {"viewModel": catalog.handle, "query": "a"})
    second = session.request_message("catalog/search", {"viewModel": catalog.handle, "query": "ab"})
    session.send_at_once(first, second)
    first, second = first["id"], second["id"]
    assert session.read_until_response(first)["result"].get("superseded") is True
    assert "superseded" not in session.read_until_response(second)["result"]  # the newest one completes
    assert catalog.state["query"] == "ab"
    mirrors.assert_in_sync(catalog)


def test_cancel_request_answers_32800(mirrors: Mirrors, catalog):
    session = mirrors.session
    # In one write: the cancellation comes while the search is in flight however busy the machine is (a
    # search already done when its cancellation comes answers its result instead).
    search = session.request_message("catalog/search", {"viewModel": catalog.handle, "query": "lamp"})
    request_id = search["id"]
    session.send_at_once(search, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}})
    assert_error(session.read_until_response(request_id), -32800, request_id)
    mirrors.assert_in_sync(catalog)
    assert session.call("ping") == {}


def test_cancelling_a_finished_or_unknown_request_is_harmless(ready):
    request_id = ready.send_request("ping")
    ready.notify("$/cancelRequest", {"id": request_id})
    ready.notify("$/cancelRequest", {"id": "never-sent"})
    assert ready.read_until_response(request_id)["result"] == {}
    assert ready.call("ping") == {}


def test_an_id_already_in_flight_is_invalid_request(mirrors: Mirrors, catalog):
    session = mirrors.session
    # In one write: the search is still in flight when the ping with its id comes.
    session.send_at_once(
        session.request_message("catalog/search", {"viewModel": catalog.handle, "query": "x"}, request_id="dup"),
        session.request_message("ping", request_id="dup"))
    answers = [session.read_until_response("dup"), session.read_until_response("dup")]
    codes = sorted(answer.get("error", {}).get("code", 0) for answer in answers)
    assert codes == [-32600, 0], answers


def test_shutdown_waits_for_requests_in_flight(mirrors: Mirrors, catalog):
    session = mirrors.session
    # In one write: the search is in flight when shutdown comes (else there is nothing to wait for).
    search = session.request_message("catalog/search", {"viewModel": catalog.handle, "query": "slow"})
    shutdown = session.request_message("shutdown")
    session.send_at_once(search, shutdown)
    search, shutdown = search["id"], shutdown["id"]
    order = []
    while len(order) < 2:
        message = session.read_value()
        if "id" in message:
            order.append(message["id"])
    assert order == [search, shutdown]
    session.notify("exit")
    assert session.wait() == 0


# -- productDetail -------------------------------------------------------------------------------


def test_product_detail_quantity_favourite_and_add_to_cart(mirrors: Mirrors, catalog):
    product_id = in_stock_id(catalog)
    cart_a = open_settled(mirrors, "cart")
    cart_b = open_settled(mirrors, "cart")
    detail = open_settled(mirrors, "productDetail", {"productId": product_id})
    assert detail.state["phase"] == "loaded" and detail.state["product"]["id"] == product_id
    assert detail.state["quantity"] == 1

    refused(action(mirrors, detail, "decrementQuantity"), "invalidQuantity")
    if detail.state["maxQuantity"] >= 2:
        ok(action(mirrors, detail, "incrementQuantity"))
        assert detail.state["quantity"] == 2
        assert Decimal(detail.state["totalPrice"]) == 2 * Decimal(detail.state["product"]["price"])
        ok(action(mirrors, detail, "decrementQuantity"))
    assert detail.state["quantity"] == 1

    favourite = detail.state["isFavorite"]
    ok(action(mirrors, detail, "toggleFavorite"))
    assert detail.state["isFavorite"] is not favourite

    checkpoint = Checkpoint(mirrors)
    ok(action(mirrors, detail, "addToCart"))
    # The ordering guarantee, across ViewModels: both carts have the line when the response is read.
    for cart in (cart_a, cart_b):
        assert [line["productId"] for line in cart.state["lines"]] == [product_id], cart.state
    checkpoint.verify()


def test_product_detail_of_an_unknown_product_fails_its_load(mirrors: Mirrors):
    detail = open_settled(mirrors, "productDetail", {"productId": "p-nope"})
    assert detail.state["phase"] == "failed" and detail.state["error"]["message"]
    # Actions say what is true: the product does not exist (not "still loading").
    error = refused(action(mirrors, detail, "addToCart"), "productNotFound")
    assert "Still loading" not in error["message"]
    ok(action(mirrors, detail, "refresh"))
    assert detail.state["phase"] == "failed"
    mirrors.assert_in_sync(detail)


def test_a_deleted_products_page_shows_what_a_fresh_open_shows(mirrors: Mirrors, catalog):
    # The product is a favourite, in the cart and at a quantity of 2 when it is deleted: the deletion, and the
    # cart's change that takes its line out, leave the page as a fresh open of it is (but for the message,
    # which says the product left rather than that it does not exist).
    product_id = in_stock_id(catalog)
    cart = open_settled(mirrors, "cart")
    detail = open_settled(mirrors, "productDetail", {"productId": product_id})
    if not detail.state["isFavorite"]:
        ok(action(mirrors, detail, "toggleFavorite"))
    ok(action(mirrors, cart, "add", productId=product_id, quantity=1))
    if detail.state["maxQuantity"] >= 2:
        ok(action(mirrors, detail, "incrementQuantity"))
    assert detail.state["inCart"] == 1 and detail.state["isFavorite"] is True

    ok(action(mirrors, catalog, "toggleSelection", productId=product_id))
    ok(action(mirrors, catalog, "deleteSelected"))
    fresh = open_settled(mirrors, "productDetail", {"productId": product_id})
    mirrors.assert_in_sync(detail)
    assert detail.state["phase"] == fresh.state["phase"] == "failed"
    assert detail.state["error"]["retryable"] is fresh.state["error"]["retryable"] is False
    assert {**detail.state, "error": None} == {**fresh.state, "error": None}


def test_increment_up_to_the_maximum_then_refused(mirrors: Mirrors, catalog):
    detail = open_settled(mirrors, "productDetail", {"productId": in_stock_id(catalog)})
    for _ in range(detail.state["maxQuantity"] - 1):
        ok(action(mirrors, detail, "incrementQuantity"))
    before = (detail.version, detail.state)
    error = refused(action(mirrors, detail, "incrementQuantity"))
    assert error["data"]["reason"] in ("quantityExceedsStock", "quantityExceedsMaximum")
    assert (detail.version, detail.state) == before
    mirrors.assert_in_sync(detail)


# -- productForm ---------------------------------------------------------------------------------


def test_product_form_validation_submit_and_reset(mirrors: Mirrors):
    form = open_settled(mirrors, "productForm")
    assert form.state["phase"] == "loaded" and form.state["categories"]
    error = refused(action(mirrors, form, "submit"), "validationFailed")
    assert set(error["data"]["details"]) >= {"name", "price", "category"}, error
    # A refused submit shows every error it lists (the one refusal that changes the state).
    assert form.state["errors"] == error["data"]["details"]
    mirrors.assert_in_sync(form)
    unknown = action(mirrors, form, "setField", field="colour", value="red")
    assert unknown["error"]["code"] == -32602 and unknown["error"]["data"]["parameter"] == "field", unknown
    assert "must be one of name, description, price, category, stock" in unknown["error"]["data"]["reason"]

    ok(action(mirrors, form, "setField", field="price", value="-3"))
    assert "price" in form.state["errors"] and form.state["isValid"] is False
    for field, value in [("name", "Conformance Lamp"), ("description", "A lamp made by a test."),
                         ("price", "12.50"), ("category", form.state["categories"][0]["id"])]:
        ok(action(mirrors, form, "setField", field=field, value=value))
    assert form.state["isValid"] is True and form.state["errors"] == {}
    ok(action(mirrors, form, "submit"))
    assert form.state["submitPhase"] == "succeeded" and form.state["createdProductId"]
    created = form.state["createdProductId"]
    again = refused(action(mirrors, form, "submit"), "alreadySubmitted")
    assert again["data"]["details"]["productId"] == created

    ok(action(mirrors, form, "reset"))
    assert form.state["fields"] == {"name": "", "description": "", "price": "", "category": "", "stock": "100"}
    detail = open_settled(mirrors, "productDetail", {"productId": created})
    assert detail.state["product"]["name"] == "Conformance Lamp"
    assert detail.state["product"]["price"] == "12.50"


# -- cart ----------------------------------------------------------------------------------------


def test_cart_add_set_remove_clear_checkout(mirrors: Mirrors, catalog):
    register_account(mirrors)  # a guest cannot check out
    ids = [product["id"] for product in catalog.state["products"] if product["inStock"]][:2]
    cart = open_settled(mirrors, "cart")
    other = open_settled(mirrors, "cart")
    refused(action(mirrors, cart, "checkout"), "emptyCart")
    refused(action(mirrors, cart, "add", productId=ids[0], quantity=0), "invalidQuantity")
    refused(action(mirrors, cart, "add", productId="p-nope", quantity=1), "productNotFound")
    refused(action(mirrors, cart, "remove", productId=ids[0]), "notInCart")
    error = refused(action(mirrors, cart, "add", productId=ids[0], quantity=1_000_000))
    assert error["data"]["reason"] in ("quantityExceedsStock", "quantityExceedsMaximum")

    ok(action(mirrors, cart, "add", productId=ids[0], quantity=1))
    ok(action(mirrors, cart, "add", productId=ids[0], quantity=1))
    ok(action(mirrors, cart, "add", productId=ids[1], quantity=1))
    assert [(line["productId"], line["quantity"]) for line in cart.state["lines"]] == [(ids[0], 2), (ids[1], 1)]
    totals = cart.state["totals"]
    assert set(totals) == {"itemCount", "subtotal", "tax", "total"} and totals["itemCount"] == 3
    assert Decimal(totals["total"]) == Decimal(totals["subtotal"]) + Decimal(totals["tax"])
    assert all("lineTotal" not in line for line in cart.state["lines"]), "README: clients compute line totals"
    line_totals = [Decimal(line["unitPrice"]) * line["quantity"] for line in cart.state["lines"]]
    assert sum(line_totals) == Decimal(totals["subtotal"])
    assert other.state["lines"] == cart.state["lines"], "carts share the cart service"

    ok(action(mirrors, cart, "setQuantity", productId=ids[0], quantity=0))
    assert [line["productId"] for line in cart.state["lines"]] == [ids[1]]
    ok(action(mirrors, cart, "remove", productId=ids[1]))
    assert cart.state["lines"] == []
    ok(action(mirrors, cart, "add", productId=ids[0], quantity=1))
    ok(action(mirrors, cart, "clear"))
    assert cart.state["lines"] == [] and cart.state["totals"]["itemCount"] == 0
    assert cart.state["totals"]["total"] == "0.00"

    ok(action(mirrors, cart, "add", productId=ids[0], quantity=1))
    dashboard = open_settled(mirrors, "dashboard")
    checkpoint = Checkpoint(mirrors)
    result = ok(action(mirrors, cart, "checkout"))
    assert isinstance(result.get("orderId"), str)
    assert cart.state["lines"] == [] and cart.state["checkoutPhase"] == "succeeded"
    assert cart.state["lastOrder"]["id"] == result["orderId"]
    checkpoint.verify()
    ok(action(mirrors, dashboard, "reloadSection", section="recentOrders"))
    assert dashboard.state["recentOrders"]["items"][0]["id"] == result["orderId"]


def test_a_quantity_change_is_the_lines_quantity_and_the_totals(mirrors: Mirrors, catalog):
    """README, Cart state: one line's quantity changed is two operations, `/lines/<i>/quantity` and `/totals`."""
    ids = [product["id"] for product in catalog.state["products"] if product["inStock"]][:3]
    cart = open_settled(mirrors, "cart")
    ok(action(mirrors, cart, "clear"))
    for product_id in ids:
        ok(action(mirrors, cart, "add", productId=product_id, quantity=1))
    before = copy.deepcopy(cart.state)
    seen = len(mirrors.session.notifications)
    ok(action(mirrors, cart, "setQuantity", productId=ids[1], quantity=2))
    patches = [n["params"]["patch"] for n in mirrors.session.notifications[seen:]
               if n.get("method") == "viewModel/changed" and n["params"]["viewModel"] == cart.handle]
    assert len(patches) == 1, patches
    assert patches[0] == [
        {"op": "replace", "path": "/lines/1/quantity", "value": 2},
        {"op": "replace", "path": "/totals", "value": cart.state["totals"]},
    ]
    assert cart.state["totals"]["itemCount"] == before["totals"]["itemCount"] + 1
    ok(action(mirrors, cart, "clear"))


# -- dashboard -----------------------------------------------------------------------------------


def test_dashboard_reload_and_sections(mirrors: Mirrors):
    register_account(mirrors)  # a guest's recentOrders section is `failed`
    dashboard = open_settled(mirrors, "dashboard")
    assert set(dashboard.state) == {"featured", "categories", "recentOrders", "recommended", "trending"}
    ok(action(mirrors, dashboard, "reload"))
    for section in ("featured", "categories", "recentOrders", "recommended", "trending"):
        ok(action(mirrors, dashboard, "reloadSection", section=section))
        assert dashboard.state[section]["phase"] == "loaded"
    before = (dashboard.version, dashboard.state)
    response = action(mirrors, dashboard, "reloadSection", section="weather")
    assert response["error"]["code"] == -32602 and response["error"]["data"]["parameter"] == "section", response
    assert (dashboard.version, dashboard.state) == before
    mirrors.assert_in_sync(dashboard)


def test_views_and_adds_made_through_product_detail_trend_after_a_dashboard_reload(mirrors: Mirrors, catalog):
    dashboard = open_settled(mirrors, "dashboard")
    assert dashboard.state["trending"] == {"phase": "loaded", "error": None, "items": []}, "a new shop has no views"
    viewed, added = catalog.state["products"][0]["id"], in_stock_id(catalog)
    if viewed == added:
        viewed = catalog.state["products"][1]["id"]
    # Three openings of one product (each is one view; loads within an opening are not), one of another
    # with an add to its cart: scores 3 and 1 + 3 x 1.
    for _ in range(3):
        detail = open_settled(mirrors, "productDetail", {"productId": viewed})
        ok(action(mirrors, detail, "refresh"))
        mirrors.close(detail)
    detail = open_settled(mirrors, "productDetail", {"productId": added})
    ok(action(mirrors, detail, "addToCart"))
    assert dashboard.state["trending"]["items"] == [], "trending is not live: it changes on a reload"

    ok(action(mirrors, dashboard, "reloadSection", section="trending"))

    trending = dashboard.state["trending"]
    assert trending["phase"] == "loaded" and trending["error"] is None
    assert [(item["product"]["id"], item["views"], item["cartAdds"]) for item in trending["items"]] == [
        (added, 1, 1), (viewed, 3, 0)]
    assert trending["items"][0]["product"] == next(
        product for product in catalog.state["products"] if product["id"] == added)
    mirrors.assert_in_sync(dashboard)


def test_an_analytics_outage_fails_only_the_trending_section_and_no_action(spawn):
    session = spawn("--faults", "analytics:failure-rate=1")
    session.initialize()
    mirrors = Mirrors(session)
    product_id = in_stock_id(open_settled(mirrors, "catalog"))
    detail = open_settled(mirrors, "productDetail", {"productId": product_id})
    assert detail.state["phase"] == "loaded"
    ok(action(mirrors, detail, "incrementQuantity"))
    ok(action(mirrors, detail, "addToCart"))
    dashboard = open_settled(mirrors, "dashboard")
    assert dashboard.state["trending"]["phase"] == "failed"
    assert dashboard.state["trending"]["error"]["retryable"] is True
    assert dashboard.state["featured"]["phase"] == "loaded" and dashboard.state["categories"]["phase"] == "loaded"
    ok(action(mirrors, dashboard, "reloadSection", section="trending"))
    assert dashboard.state["trending"]["phase"] == "failed"
    mirrors.assert_in_sync(dashboard)
