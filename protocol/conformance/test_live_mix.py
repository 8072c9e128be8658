"""Live screens across two servers on one database file: a seeded random sequence of ticker, inbox, product
edit and cart actions, sent to either server, with every mirror checked against `viewModel/get`.

The acting server's mirrors must already show each action's effect when its answer arrives (the ordering
guarantee); the other server's must reach the same state through the change feed. Set
`CONFORMANCE_SEED` to repeat a run; the seed is printed with every failure.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass

import pytest

from storefront_session import Mirror, Mirrors
from viewmodel_helpers import action, ok, open_settled, register_account, resume_account

pytestmark = pytest.mark.usefixtures("viewmodels_available")

SEED = int(os.environ.get("CONFORMANCE_SEED", "15"))
STEPS = 40
PRODUCTS = ["p-0001", "p-0002", "p-0003", "p-0004"]
TICKED = PRODUCTS[0]
CONVERGE_TIMEOUT = 10.0


@dataclass
class Side:
    """One server and the screens open on it."""

    name: str
    mirrors: Mirrors
    ticker: Mirror
    inbox: Mirror
    cart: Mirror
    form: Mirror
    detail: Mirror

    @property
    def screens(self) -> list[Mirror]:
        return [self.ticker, self.inbox, self.cart, self.form, self.detail]


def open_side(name: str, mirrors: Mirrors) -> Side:
    return Side(
        name, mirrors,
        ticker=open_settled(mirrors, "priceTicker", {"productId": TICKED}),
        inbox=open_settled(mirrors, "notifications"),
        cart=open_settled(mirrors, "cart"),
        form=open_settled(mirrors, "productForm", {"productId": TICKED}),
        detail=open_settled(mirrors, "productDetail", {"productId": TICKED}))


def shared_view(side: Side) -> dict:
    """What both servers' screens must agree on (one account, one database)."""
    return {
        "cart": side.cart.state["lines"],
        "totals": side.cart.state["totals"],
        "price": side.ticker.state["currentPrice"],
        "stock": side.ticker.state["stock"],
        "history": side.ticker.state["priceHistory"][-1:],
        "inbox": [(item["id"], item["isRead"]) for item in side.inbox.state["items"]],
        "unread": side.inbox.state["unreadCount"],
        "favorite": side.detail.state["isFavorite"],
        "detailPrice": side.detail.state["product"]["price"],
    }


def assert_all_in_sync(side: Side, context: str) -> None:
    for mirror in side.screens:
        current = side.mirrors.get(mirror)
        assert (current["version"], current["state"]) == (mirror.version, mirror.state), (
            f"{context}: {side.name}'s {mirror.type} mirror differs from viewModel/get")


def converge(follower: Side, leader: Side, context: str) -> None:
    """Reads the follower's notifications until its screens show what the leader's show, then checks its
    mirrors against `viewModel/get`."""
    wanted = shared_view(leader)
    deadline = time.monotonic() + CONVERGE_TIMEOUT
    while shared_view(follower) != wanted:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"{context}: {follower.name} did not converge:\n{shared_view(follower)}\n!=\n{wanted}"
        value = follower.mirrors.session.read_value(remaining)
        assert isinstance(value, dict) and "id" not in value, f"unexpected message: {value!r}"
        follower.mirrors.session._notify(value)
    assert_all_in_sync(follower, context)
    assert shared_view(follower) == wanted, f"{context}: {follower.name} changed after converging"


def set_price(side: Side, price: str) -> dict:
    ok(action(side.mirrors, side.form, "setField", field="price", value=price))
    return ok(action(side.mirrors, side.form, "submit"))


def test_a_random_mix_of_ticker_inbox_and_cart_actions_keeps_two_servers_in_step(spawn, tmp_path):
    rng = random.Random(SEED)
    database = str(tmp_path / "live.sqlite")
    first = spawn("--database", database)
    first.initialize()
    first_mirrors = Mirrors(first)
    account = register_account(first_mirrors)
    second = spawn("--database", database)
    second.initialize()
    second_mirrors = Mirrors(second)
    resume_account(second_mirrors, account)
    sides = [open_side("server A", first_mirrors), open_side("server B", second_mirrors)]
    a, b = sides
    if not a.detail.state["isFavorite"]:
        ok(action(a.mirrors, a.detail, "toggleFavorite"))  # price drops of the ticked product reach the inbox
    converge(b, a, "setup")

    kinds = ["add", "add", "remove", "price", "price", "checkout", "readAll", "readOne", "reconnect"]
    for step in range(STEPS):
        side = rng.choice(sides)
        other = b if side is a else a
        kind = rng.choice(kinds)
        context = f"seed {SEED}, step {step}: {kind} on {side.name}"
        mirrors = side.mirrors
        if kind == "add":
            ok(action(mirrors, side.cart, "add", productId=rng.choice(PRODUCTS), quantity=1))
        elif kind == "remove" and side.cart.state["lines"]:
            line = rng.choice(side.cart.state["lines"])
            ok(action(mirrors, side.cart, "setQuantity", productId=line["productId"], quantity=0))
        elif kind == "price":
            before = side.inbox.state["unreadCount"]
            old = side.ticker.state["currentPrice"]
            price = f"{rng.randint(500, 5000) // 100}.{rng.randint(0, 99):02d}"
            set_price(side, price)
            # The answer came: this server's ticker and product detail already show the new price.
            assert side.ticker.state["currentPrice"] == price, context
            assert side.detail.state["product"]["price"] == price, context
            if float(price) < float(old):
                assert side.inbox.state["unreadCount"] >= max(before, 1), context
                top = side.inbox.state["items"][0]
                assert top["kind"] == "priceDropped" and top["productId"] == TICKED and not top["isRead"], context
        elif kind == "checkout" and side.cart.state["lines"]:
            placed = ok(action(mirrors, side.cart, "checkout"))
            top = side.inbox.state["items"][0]
            assert top["kind"] == "orderPlaced" and top["orderId"] == placed["orderId"], context
        elif kind == "readAll":
            ok(action(mirrors, side.inbox, "markAllRead"))
            assert side.inbox.state["unreadCount"] == 0, context
        elif kind == "readOne":
            unread = [item for item in side.inbox.state["items"] if not item["isRead"]]
            if unread:
                before = side.inbox.state["unreadCount"]
                ok(action(mirrors, side.inbox, "markAsRead", id=unread[0]["id"]))
                assert side.inbox.state["unreadCount"] == before - 1, context
        elif kind == "reconnect":
            ok(action(mirrors, side.ticker, "disconnect"))
            assert side.ticker.state["isConnected"] is False, context
            ok(action(mirrors, side.ticker, "connect"))
            if side.ticker.state["phase"] != "loaded":
                mirrors.wait_until(side.ticker, lambda state: state["phase"] == "loaded")
            assert side.ticker.state["isConnected"] is True, context
        assert_all_in_sync(side, context)
        converge(other, side, context)

    assert shared_view(a) == shared_view(b)
    assert len(a.ticker.state["priceHistory"]) <= 100
    assert a.inbox.state["unreadCount"] == sum(1 for item in a.inbox.state["items"] if not item["isRead"]) \
        or a.inbox.state["hasMore"]
