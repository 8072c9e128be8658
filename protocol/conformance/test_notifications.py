"""The inbox (issue 15): the `notifications` ViewModel, fed live across servers on one database file.
Driven by what rpc.discover declares and by protocol/README.md ("Notifications"); every wait is a failure
guard, never a timing verdict."""

from __future__ import annotations

import pytest

from test_accounts import server, shop_file  # noqa: F401  (fixtures)
from test_lifecycle import assert_error
from viewmodel_helpers import action, ok, open_settled, refused, register_account, resume_account

pytestmark = pytest.mark.usefixtures("viewmodels_available", "notifications_available")


@pytest.fixture
def notifications_available(contract) -> None:
    if "notifications" not in contract.actions:
        pytest.skip("this server does not serve notifications yet")


def checkout(mirrors, cart, product_id: str) -> str:
    ok(action(mirrors, cart, "add", productId=product_id, quantity=1))
    return ok(action(mirrors, cart, "checkout"))["orderId"]


def test_a_guest_has_no_inbox(server):
    guest = server()
    refused(guest.session.request("viewModel/open", {"type": "notifications"}), "signInRequired")
    assert guest.session.call("ping") == {}


def test_orders_arrive_live_in_every_server_and_reads_show_everywhere(server, shop_file):
    a = server(shop_file)
    account = register_account(a)
    b = server(shop_file)
    resume_account(b, account)
    inbox_a = open_settled(a, "notifications")
    assert inbox_a.state == {
        "phase": "loaded", "error": None, "items": [], "unreadCount": 0, "hasMore": False,
        "loadMorePhase": "idle", "loadMoreError": None, "enabled": True}

    # A checkout in this server: its inbox shows the order by the time the checkout answers.
    cart_a = open_settled(a, "cart")
    first = checkout(a, cart_a, "p-0003")
    assert [item["orderId"] for item in inbox_a.state["items"]] == [first], inbox_a.state
    item = inbox_a.state["items"][0]
    assert item["kind"] == "orderPlaced" and item["isRead"] is False and item["productId"] is None, item
    assert item["id"].startswith("n-") and first in item["body"], item
    assert inbox_a.state["unreadCount"] == 1

    # A checkout in another server arrives at the top.
    cart_b = open_settled(b, "cart")
    second = checkout(b, cart_b, "p-0005")
    a.wait_until(inbox_a, lambda state: len(state["items"]) == 2)
    assert [item["orderId"] for item in inbox_a.state["items"]] == [second, first]
    assert inbox_a.state["unreadCount"] == 2
    a.assert_in_sync(inbox_a)

    inbox_b = open_settled(b, "notifications")
    assert inbox_b.state["items"] == inbox_a.state["items"]

    refused(action(a, inbox_a, "markAsRead", id="n-999999"), "notificationNotFound")
    ok(action(a, inbox_a, "markAsRead", id=inbox_a.state["items"][1]["id"]))
    assert [item["isRead"] for item in inbox_a.state["items"]] == [False, True]
    assert inbox_a.state["unreadCount"] == 1
    b.wait_until(inbox_b, lambda state: state["unreadCount"] == 1)
    assert [item["isRead"] for item in inbox_b.state["items"]] == [False, True]

    ok(action(b, inbox_b, "markAllRead"))
    assert inbox_b.state["unreadCount"] == 0 and all(item["isRead"] for item in inbox_b.state["items"])
    a.wait_until(inbox_a, lambda state: state["unreadCount"] == 0)
    assert all(item["isRead"] for item in inbox_a.state["items"])
    a.assert_in_sync(inbox_a)
    b.assert_in_sync(inbox_b)
    assert server.validated >= {"notifications"}


def test_an_account_with_notifications_off_gets_none(server, shop_file):
    a = server(shop_file)
    register_account(a)
    profile = open_settled(a, "profile")
    inbox = open_settled(a, "notifications")
    ok(action(a, profile, "setNotificationsEnabled", enabled=False))
    ok(action(a, profile, "save"))
    a.wait_until(inbox, lambda state: state["enabled"] is False)
    cart = open_settled(a, "cart")
    checkout(a, cart, "p-0003")
    ok(action(a, inbox, "refresh"))
    assert inbox.state["items"] == [] and inbox.state["unreadCount"] == 0, inbox.state


def test_paging_loads_older_notifications_twenty_at_a_time(server, shop_file):
    a = server(shop_file)
    register_account(a)
    cart = open_settled(a, "cart")
    orders = [checkout(a, cart, "p-0003") for _ in range(22)]
    inbox = open_settled(a, "notifications")
    assert len(inbox.state["items"]) == 20 and inbox.state["hasMore"] is True
    assert inbox.state["unreadCount"] == 22
    ok(action(a, inbox, "loadMore"))
    assert [item["orderId"] for item in inbox.state["items"]] == list(reversed(orders))
    assert inbox.state["hasMore"] is False and inbox.state["loadMorePhase"] == "idle"
    a.assert_in_sync(inbox)


def test_wrong_or_missing_params_of_mark_as_read_are_32602(server):
    a = server()
    register_account(a)
    inbox = open_settled(a, "notifications")
    for params in [{}, {"id": 7}, {"id": None}, {"id": ["n-1"]}]:
        response = a.session.request("notifications/markAsRead", {"viewModel": inbox.handle, **params})
        error = assert_error(response, -32602, response["id"])
        assert error["data"]["parameter"] == "id", (params, error)
    a.assert_in_sync(inbox)
