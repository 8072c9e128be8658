"""The inbox, the price ticker, product edits and trending, against the real server: what one server stores
reaches the others on the same database file through the change feed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from conftest import PASSWORD
from storefront_client import Client, StorefrontError


def settled(state) -> bool:
    return state["phase"] not in ("idle", "loading")


async def test_a_ticker_follows_an_edit_made_by_another_server(binary, tmp_path):
    database = str(tmp_path / "shop.sqlite")
    async with await Client.start(binary, database=database) as watcher, \
            await Client.start(binary, database=database) as editor:
        ticker = await watcher.open_ticker("p-0003")
        assert ticker.state["isConnected"] and ticker.state["productId"] == "p-0003"
        assert ticker.state["currentPrice"] == "285.99"
        before = len(ticker.state["priceHistory"])

        form = await editor.open_product_editor("p-0003")
        assert form.state["mode"] == "edit" and form.state["productId"] == "p-0003"
        assert form.state["fields"]["price"] == "285.99"
        await editor.edit_product("p-0003", price="199.00", stock=7)
        # The price and stock show at once; the history follows as stored (its last point is then the change).
        state = await ticker.wait_for(lambda s: s["currentPrice"] == "199.00" and s["stock"] == 7
                                      and s["priceHistory"][-1:] and s["priceHistory"][-1]["price"] == "199.00")
        assert state["priceHistory"][-1]["stock"] == 7
        assert len(state["priceHistory"]) == min(before + 1, 100)
        # The other server's open form, not edited here, shows the stored change.
        await form.wait_for(lambda s: s["fields"]["price"] == "199.00" and s["fields"]["stock"] == "7")

        # Disconnected, the ticker keeps its state; the product detail (live too) shows the next change.
        detail = await watcher.open("productDetail", productId="p-0003")
        await detail.wait_for(settled)
        await watcher.ticker_disconnect(ticker)
        assert not ticker.state["isConnected"]
        await editor.edit_product("p-0003", price="150.00")
        await detail.wait_for(lambda s: s["product"]["price"] == "150.00")
        assert ticker.state["currentPrice"] == "199.00"
        await watcher.ticker_connect(ticker)
        await ticker.wait_for(lambda s: s["isConnected"] and s["currentPrice"] == "150.00")
        await watcher.ticker_refresh(ticker)
        assert ticker.state == (await watcher.get(ticker.handle))["state"]


async def test_an_edit_is_validated_like_a_new_product(client: Client):
    with pytest.raises(StorefrontError) as caught:
        await client.edit_product("p-0003", price="-1", stock="lots")
    assert caught.value.reason == "validationFailed"
    assert {"price", "stock"} <= set(caught.value.details)
    # An unknown product opens and fails, as productDetail does (not retryable).
    ticker = await client.open_ticker("p-9999")
    assert ticker.state["phase"] == "failed" and ticker.state["error"]["retryable"] is False
    assert ticker.state["currentPrice"] is None and ticker.state["priceHistory"] == []
    form = await client.open_product_editor("p-9999")
    assert form.state["phase"] == "failed" and form.state["mode"] == "edit"


async def test_the_inbox_gets_an_order_placed_in_another_server(binary, tmp_path):
    database, token_file = str(tmp_path / "shop.sqlite"), tmp_path / "token"
    async with await Client.start(binary, database=database) as reader:
        with pytest.raises(StorefrontError) as caught:
            await reader.open_inbox()
        assert caught.value.reason == "signInRequired", "a guest has no inbox"
        await reader.register("inbox@example.com", PASSWORD, token_file=token_file)
        inbox = await reader.open_inbox()
        assert inbox.state["items"] == [] and inbox.state["unreadCount"] == 0 and inbox.state["enabled"]

        async with await Client.start(binary, database=database) as shopper:
            await shopper.resume_from(token_file)
            cart = await shopper.open("cart")
            await cart.wait_for(settled)
            orders = []
            for product in ("p-0001", "p-0002"):
                await shopper.cart_add(cart, product)
                orders.append((await shopper.cart_checkout(cart))["orderId"])

        # unreadCount is the store's count (loaded or not): the items may follow it by a notification.
        state = await inbox.wait_for(lambda s: s["unreadCount"] == 2 and len(s["items"]) == 2)
        assert [item["orderId"] for item in state["items"]] == orders[::-1], "newest first"
        assert {item["kind"] for item in state["items"]} == {"orderPlaced"}
        assert not any(item["isRead"] for item in state["items"])

        await reader.notifications_mark_as_read(inbox, state["items"][1]["id"])
        assert inbox.state["unreadCount"] == 1 and inbox.state["items"][1]["isRead"]
        await reader.notifications_mark_all_read(inbox)
        assert inbox.state["unreadCount"] == 0 and all(item["isRead"] for item in inbox.state["items"])
        await reader.notifications_refresh(inbox)
        assert inbox.state == (await reader.get(inbox.handle))["state"]

    # Stored: a new server shows the same inbox, all read.
    async with await Client.start(binary, database=database) as later:
        await later.resume_from(token_file)
        inbox = await later.open_inbox()
        assert [item["orderId"] for item in inbox.state["items"]] == orders[::-1]
        assert inbox.state["unreadCount"] == 0


async def test_trending_counts_views_and_adds(client: Client):
    assert await client.trending() == [], "a new database: nothing viewed or added"
    detail = await client.open("productDetail", productId="p-0001")
    await detail.wait_for(settled)
    await client.product_add_to_cart(detail)
    items = await client.trending()
    top = next(item for item in items if item["product"]["id"] == "p-0001")
    assert top["views"] == 1 and top["cartAdds"] == 1
    assert items[0]["product"]["id"] == "p-0001", "the only product viewed and added"


def cli(binary: str, database: str, token_file, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "storefront_client", "--server", binary, "--database", database,
                           "--token-file", str(token_file), *args], input=stdin, capture_output=True, text=True,
                          timeout=120)


async def test_the_command_line_reads_and_marks_the_inbox(binary, tmp_path):
    database, token_file = str(tmp_path / "shop.sqlite"), tmp_path / "token"
    assert cli(binary, database, token_file, "register", "cli@example.com", stdin=PASSWORD + "\n").returncode == 0
    assert cli(binary, database, token_file, "add", "p-0001", "1").returncode == 0
    assert cli(binary, database, token_file, "checkout").returncode == 0

    shown = cli(binary, database, token_file, "inbox")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "1 unread" and lines[1].startswith("* n-"), shown.stdout
    notification = lines[1].split()[1]
    read = cli(binary, database, token_file, "read", notification)
    assert read.returncode == 0 and read.stdout.splitlines()[0] == "0 unread", read.stdout + read.stderr
    assert read.stdout.splitlines()[1].startswith(f"  {notification}  ")
    assert cli(binary, database, token_file, "read-all").stdout.splitlines()[0] == "0 unread"
    guest = cli(binary, database, tmp_path / "guest-token", "inbox")
    assert guest.returncode == 1 and "signInRequired" in guest.stderr


async def test_the_command_line_edits_and_watches_a_ticker(binary, tmp_path):
    database, token_file = str(tmp_path / "shop.sqlite"), tmp_path / "token"
    # `ticker p-0003 1` prints the price now, then one change: made here by another run.
    watch = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "storefront_client", "--server", binary, "--database", database,
        "--token-file", str(token_file), "ticker", "p-0003", "1", stdout=asyncio.subprocess.PIPE,
        env={**os.environ})
    first = await asyncio.wait_for(watch.stdout.readline(), 60)
    assert first.decode().startswith("p-0003  Smart Linen Keyboard  285.99  stock ")
    edited = cli(binary, database, token_file, "edit", "p-0003", "price=210.00", "stock=12")
    assert edited.returncode == 0, edited.stderr
    assert '"price": "210.00"' in edited.stdout and '"stock": "12"' in edited.stdout
    second = await asyncio.wait_for(watch.stdout.readline(), 60)
    assert second.decode().strip() == "p-0003  Smart Linen Keyboard  210.00  stock 12"
    assert await asyncio.wait_for(watch.wait(), 60) == 0
    refused = cli(binary, database, token_file, "edit", "p-0003", "price=free")
    assert refused.returncode == 1 and "validationFailed" in refused.stderr


async def test_the_command_line_lists_trending_products(binary, tmp_path):
    database, token_file = str(tmp_path / "shop.sqlite"), tmp_path / "token"
    assert cli(binary, database, token_file, "add", "p-0001", "1").returncode == 0
    trending = cli(binary, database, token_file, "trending")
    assert trending.returncode == 0, trending.stderr
    assert trending.stdout.splitlines() == [trending.stdout.splitlines()[0]]
    assert trending.stdout.startswith("p-0001  Cozy Wool Board Game  ") and trending.stdout.rstrip().endswith("views 0  adds 1")
