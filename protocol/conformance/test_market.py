"""Price and stock changes: productForm's edit mode, the priceTicker, two servers on one database file,
and `serve --simulate-market` (announced in initialize's capabilities, followed by every mirror)."""

from __future__ import annotations

import pytest

from storefront_session import Mirrors
from viewmodel_helpers import action, ok, open_settled, refused

pytestmark = pytest.mark.usefixtures("viewmodels_available")


def edit_form(mirrors: Mirrors, product_id: str):
    form = open_settled(mirrors, "productForm", {"productId": product_id})
    assert form.state["phase"] == "loaded", form.state
    assert form.state["mode"] == "edit" and form.state["productId"] == product_id
    assert form.state["hasChanges"] is False and form.state["errors"] == {}
    return form


def test_a_create_form_is_in_create_mode_with_a_stock_field(mirrors: Mirrors, validate_state):
    form = open_settled(mirrors, "productForm")
    validate_state("productForm", form.state)
    assert form.state["mode"] == "create" and form.state["productId"] is None and form.state["hasChanges"] is False
    assert form.state["fields"]["stock"] == "100"


def test_the_edit_form_loads_the_product_validates_and_stores_the_change(mirrors: Mirrors, validate_state):
    detail = open_settled(mirrors, "productDetail", {"productId": "p-0007"})
    product = detail.state["product"]
    form = edit_form(mirrors, "p-0007")
    validate_state("productForm", form.state)
    fields = form.state["fields"]
    assert fields["name"] == product["name"] and fields["price"] == product["price"]
    assert fields["stock"] == str(product["stock"])

    for value in ("-1", "2.5", "1000001", "ten"):
        ok(action(mirrors, form, "setField", field="stock", value=value))
        assert "stock" in form.state["errors"] and form.state["isValid"] is False
    refused(action(mirrors, form, "submit"), "validationFailed")
    ok(action(mirrors, form, "setField", field="stock", value="33"))
    ok(action(mirrors, form, "setField", field="price", value="77.70"))
    assert form.state["hasChanges"] is True
    ok(action(mirrors, form, "submit"))
    # Stored and shown everywhere before the answer.
    assert form.state["submitPhase"] == "succeeded" and form.state["hasChanges"] is False
    assert form.state["createdProductId"] is None
    assert detail.state["product"]["price"] == "77.70" and detail.state["product"]["stock"] == 33
    mirrors.assert_in_sync(form)
    mirrors.assert_in_sync(detail)

    ok(action(mirrors, form, "setField", field="name", value="Edited But Not Saved"))
    ok(action(mirrors, form, "reset"))
    assert form.state["fields"]["name"] == product["name"] and form.state["hasChanges"] is False


def test_an_edit_form_of_an_unknown_product_fails(mirrors: Mirrors):
    form = open_settled(mirrors, "productForm", {"productId": "p-nope"})
    assert form.state["phase"] == "failed" and form.state["error"]["retryable"] is False
    assert form.state["mode"] == "edit"


def test_the_ticker_shows_the_product_and_follows_its_changes(mirrors: Mirrors, validate_state):
    ticker = open_settled(mirrors, "priceTicker", {"productId": "p-0011"})
    validate_state("priceTicker", ticker.state)
    state = ticker.state
    assert state["phase"] == "loaded" and state["isConnected"] is True and state["name"]
    history = state["priceHistory"]
    assert 1 <= len(history) <= 100
    assert history[-1]["price"] == state["currentPrice"] and history[-1]["stock"] == state["stock"]

    form = edit_form(mirrors, "p-0011")
    ok(action(mirrors, form, "setField", field="price", value="1.23"))
    ok(action(mirrors, form, "submit"))
    # The ticker shows it, history included, when the answer comes.
    assert ticker.state["currentPrice"] == "1.23"
    assert ticker.state["priceHistory"][-1]["price"] == "1.23"
    assert len(ticker.state["priceHistory"]) == len(history) + 1
    validate_state("priceTicker", ticker.state)
    mirrors.assert_in_sync(ticker)

    ok(action(mirrors, ticker, "disconnect"))
    assert ticker.state["isConnected"] is False
    ok(action(mirrors, form, "setField", field="price", value="2.34"))
    ok(action(mirrors, form, "submit"))
    assert ticker.state["currentPrice"] == "1.23"  # not followed while disconnected
    ok(action(mirrors, ticker, "connect"))
    mirrors.wait_until(ticker, lambda state: state["phase"] == "loaded" and state["currentPrice"] == "2.34")
    assert ticker.state["isConnected"] is True
    ok(action(mirrors, ticker, "refresh"))
    mirrors.assert_in_sync(ticker)


def test_a_checkout_moves_the_tickers_stock(mirrors: Mirrors):
    from viewmodel_helpers import register_account
    register_account(mirrors)
    ticker = open_settled(mirrors, "priceTicker", {"productId": "p-0012"})
    stock = ticker.state["stock"]
    assert stock and stock > 0
    cart = open_settled(mirrors, "cart")
    ok(action(mirrors, cart, "add", productId="p-0012", quantity=1))
    ok(action(mirrors, cart, "checkout"))
    assert ticker.state["stock"] == stock - 1
    assert ticker.state["priceHistory"][-1]["stock"] == stock - 1
    mirrors.assert_in_sync(ticker)


def test_a_ticker_of_an_unknown_product_fails_like_product_detail(mirrors: Mirrors):
    ticker = open_settled(mirrors, "priceTicker", {"productId": "p-nope"})
    assert ticker.state["phase"] == "failed" and ticker.state["error"]["retryable"] is False
    assert ticker.state["currentPrice"] is None and ticker.state["priceHistory"] == []
    missing = mirrors.session.request("viewModel/open", {"type": "priceTicker"})
    assert missing["error"]["code"] == -32602, missing


def test_a_price_changed_by_a_second_server_shows_in_the_first_servers_ticker_and_form(spawn, tmp_path):
    database = str(tmp_path / "market.sqlite")
    first = spawn("--database", database)
    first.initialize()
    second = spawn("--database", database)
    second.initialize()
    a, b = Mirrors(first), Mirrors(second)
    ticker = open_settled(a, "priceTicker", {"productId": "p-0021"})
    watching_form = edit_form(a, "p-0021")
    points = len(ticker.state["priceHistory"])

    form = edit_form(b, "p-0021")
    ok(action(b, form, "setField", field="price", value="4.56"))
    ok(action(b, form, "setField", field="stock", value="7"))
    ok(action(b, form, "submit"))

    a.wait_until(ticker, lambda state: state["priceHistory"][-1]["price"] == "4.56")
    assert ticker.state["currentPrice"] == "4.56" and ticker.state["stock"] == 7
    assert len(ticker.state["priceHistory"]) == points + 1
    a.wait_until(watching_form, lambda state: state["fields"]["price"] == "4.56")
    assert watching_form.state["fields"]["stock"] == "7" and watching_form.state["hasChanges"] is False
    a.assert_in_sync(ticker)
    a.assert_in_sync(watching_form)


def test_the_market_simulation_is_announced_only_when_on_and_every_mirror_follows_it(spawn, tmp_path):
    plain = spawn()
    assert "simulation" not in plain.initialize()["capabilities"]

    database = str(tmp_path / "simulated.sqlite")
    simulated = spawn("--database", database, "--simulate-market", "400", "--simulate-seed", "5")
    capabilities = simulated.initialize()["capabilities"]
    assert capabilities["simulation"] == {"market": {"rate": 400, "seed": 5}}
    mirrors = Mirrors(simulated)
    ticker = open_settled(mirrors, "priceTicker", {"productId": "p-0001"})
    catalog = open_settled(mirrors, "catalog")
    start = ticker.state["priceHistory"][-1]["at"]
    # The demo catalog has 240 products: p-0001 changes about twice a second.
    mirrors.wait_until(ticker, lambda state: state["priceHistory"][-1]["at"] != start, timeout=30)

    # A second server (no simulation) on the file sees the simulated changes too.
    watcher = spawn("--database", database)
    watcher.initialize()
    other = Mirrors(watcher)
    other_ticker = open_settled(other, "priceTicker", {"productId": "p-0002"})
    seen = other_ticker.state["priceHistory"][-1]["at"]
    other.wait_until(other_ticker, lambda state: state["priceHistory"][-1]["at"] != seen, timeout=30)
    for mirror in (ticker, catalog):
        mirrors.assert_in_sync(mirror)
    other.assert_in_sync(other_ticker)


def test_a_seeded_random_mix_of_ticker_form_and_cart_actions_on_two_servers_keeps_every_mirror_true(spawn, tmp_path):
    import random

    rng = random.Random(20261122)
    database = str(tmp_path / "mix.sqlite")
    products = ["p-0031", "p-0032", "p-0033"]
    sides = []
    for _ in range(2):
        server = spawn("--database", database)
        server.initialize()
        mirrors = Mirrors(server)
        side = {
            "mirrors": mirrors,
            "tickers": {pid: open_settled(mirrors, "priceTicker", {"productId": pid}) for pid in products},
            "forms": {pid: edit_form(mirrors, pid) for pid in products},
            "cart": open_settled(mirrors, "cart"),
            "detail": open_settled(mirrors, "productDetail", {"productId": products[0]}),
        }
        sides.append(side)

    for step in range(60):
        side = rng.choice(sides)
        mirrors = side["mirrors"]
        pid = rng.choice(products)
        kind = rng.randrange(6)
        if kind <= 1:
            form = side["forms"][pid]
            ok(action(mirrors, form, "setField", field="price", value=f"{rng.randrange(100, 99_999) / 100:.2f}"))
            if rng.random() < 0.5:
                ok(action(mirrors, form, "setField", field="stock", value=str(rng.randrange(5, 500))))
            response = action(mirrors, form, "submit")
            assert "error" not in response or response["error"]["code"] == -32001, response
        elif kind == 2:
            response = action(mirrors, side["cart"], "add", productId=pid, quantity=1)
            assert "error" not in response or response["error"]["code"] == -32001, response
        elif kind == 3:
            response = action(mirrors, side["cart"], "remove", productId=pid)
            assert "error" not in response or response["error"]["code"] == -32001, response
        elif kind == 4:
            ticker = side["tickers"][pid]
            ok(action(mirrors, ticker, "disconnect" if ticker.state["isConnected"] and rng.random() < 0.5 else "connect"))
        else:
            ok(action(mirrors, side["tickers"][pid], "refresh"))
        if step % 10 == 9:
            for each in sides:
                for mirror in [*each["tickers"].values(), *each["forms"].values(), each["cart"], each["detail"]]:
                    each["mirrors"].assert_in_sync(mirror)

    # Connected again, every ticker on both servers comes to show what is stored, and the same.
    for side in sides:
        for ticker in side["tickers"].values():
            if not ticker.state["isConnected"]:
                ok(action(side["mirrors"], ticker, "connect"))
    for pid in products:
        # A ticker opened now loads what is stored (no more changes are made).
        stored = open_settled(sides[0]["mirrors"], "priceTicker", {"productId": pid}).state
        sides[1]["mirrors"].wait_until(
            sides[1]["tickers"][pid],
            lambda state: state["currentPrice"] == stored["currentPrice"] and state["stock"] == stored["stock"])
        sides[0]["mirrors"].wait_until(
            sides[0]["tickers"][pid],
            lambda state: state["currentPrice"] == stored["currentPrice"] and state["stock"] == stored["stock"])
    for side in sides:
        for mirror in side["tickers"].values():
            side["mirrors"].assert_in_sync(mirror)
