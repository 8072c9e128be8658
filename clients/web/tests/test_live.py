"""Live screens in the page: the product's price ticker and edit form, the inbox and its badge, trending.

What another process stores (a second `storefront serve` on the bridge's database, driven from the test over
its pipes) reaches the page through the change feed, as it would from another person's browser.
"""
from __future__ import annotations

import uuid

from selenium.webdriver.common.by import By

from conftest import OUT
from test_accounts import kept_token, sign_up
from test_web import loaded_page, text, until


def state(driver, type_: str):
    return driver.execute_script("const vm = byType[arguments[0]]; return vm ? vm.state : null", type_)


def key() -> str:
    return str(uuid.uuid4())


def edit_elsewhere(server, product_id: str, **fields: str) -> None:
    """Edits a product in the second server, as its productForm's edit mode does: open, set, submit."""
    form = server.open("productForm", productId=product_id)
    loaded = server.wait_loaded(form)
    assert loaded["mode"] == "edit" and loaded["productId"] == product_id
    for field, value in fields.items():
        server.request("productForm/setField", {"viewModel": form, "field": field, "value": value})
    server.request("productForm/submit", {"viewModel": form, "idempotencyKey": key()})
    server.request("viewModel/close", {"viewModel": form})


def test_a_price_change_made_by_a_second_server_moves_the_ticker(bridge, browser, second_server):
    loaded_page(browser, bridge)
    browser.execute_script("openProduct('p-0003')")
    until(browser, lambda d: text(d, "#detail-name") == "Smart Linen Keyboard", "the product")
    until(browser, lambda d: text(d, "#ticker-price") == "285.99" and text(d, "#ticker-status") == "● live", "the ticker")
    ticker = state(browser, "priceTicker")
    assert ticker["productId"] == "p-0003" and ticker["isConnected"] and ticker["currentPrice"] == "285.99"
    assert text(browser, "#ticker-stock") == f"{ticker['stock']} in stock"

    other = second_server()
    edit_elsewhere(other, "p-0003", price="199.00", stock="7")
    until(browser, lambda d: text(d, "#ticker-price") == "199.00" and text(d, "#ticker-stock") == "7 in stock",
          "the second server's change in the ticker")
    history = state(browser, "priceTicker")["priceHistory"]
    assert history[-1]["price"] == "199.00" and history[-1]["stock"] == 7
    until(browser, lambda d: "Price 199.00" in text(d, "#detail-body"), "the product panel's price")
    OUT.mkdir(exist_ok=True)
    browser.find_element(By.ID, "detail").screenshot(str(OUT / "ticker.png"))

    # Disconnected, the ticker stays as it was while the product panel (live too) follows the next change.
    browser.find_element(By.ID, "ticker-toggle").click()
    until(browser, lambda d: text(d, "#ticker-status") == "○ paused" and text(d, "#ticker-toggle") == "Connect", "paused")
    edit_elsewhere(other, "p-0003", price="150.00")
    until(browser, lambda d: "Price 150.00" in text(d, "#detail-body"), "the product panel's price")
    assert text(browser, "#ticker-price") == "199.00", "a disconnected ticker does not move"
    browser.find_element(By.ID, "ticker-toggle").click()
    until(browser, lambda d: text(d, "#ticker-price") == "150.00" and text(d, "#ticker-status") == "● live",
          "reconnected: the price now")
    # The change missed while disconnected is in the history it reloaded: the move and the sparkline show it.
    assert [p["price"] for p in state(browser, "priceTicker")["priceHistory"][-2:]] == ["199.00", "150.00"]
    assert text(browser, "#ticker-move") == "▼ 49.00"
    assert browser.find_elements(By.ID, "ticker-spark"), "two points or more draw a sparkline"

    # The page's own edit form (productForm in edit mode) moves it too.
    browser.find_element(By.ID, "edit-product").click()
    until(browser, lambda d: d.find_element(By.ID, "edit-price").get_attribute("value") == "150.00", "the edit form")
    price = browser.find_element(By.ID, "edit-price")
    price.clear()
    price.send_keys("120.50")
    until(browser, lambda d: (state(d, "productForm") or {}).get("fields", {}).get("price") == "120.50", "the field sent")
    browser.find_element(By.ID, "edit-save").click()
    until(browser, lambda d: text(d, "#ticker-price") == "120.50" and text(d, "#edit-status") == "Saved.", "the page's own edit")
    assert text(browser, "#ticker-move") == "▼ 29.50"
    browser.find_element(By.ID, "detail").screenshot(str(OUT / "ticker-after-edit.png"))


def test_an_order_placed_elsewhere_arrives_in_the_inbox(bridge, browser, second_server):
    loaded_page(browser, bridge)
    until(browser, lambda d: text(d, "#account-user").startswith("Shopping as a guest"), "the guest")
    assert not browser.find_element(By.ID, "inbox").is_displayed(), "a guest has no inbox"
    assert not browser.find_element(By.ID, "inbox-link").is_displayed()
    sign_up(browser, "inbox@example.com")
    until(browser, lambda d: "No notifications yet." in text(d, "#inbox-items"), "the empty inbox")
    assert not browser.find_element(By.ID, "inbox-badge").is_displayed()

    # Another server signed into the same account (the page's token) places two orders.
    other = second_server()
    login = other.open("login")
    other.request("login/resume", {"viewModel": login, "token": kept_token(browser)})
    cart = other.open("cart")
    other.wait_loaded(cart)

    def order_elsewhere(product_id: str) -> str:
        other.request("cart/add", {"viewModel": cart, "productId": product_id, "quantity": 1, "idempotencyKey": key()})
        return other.request("cart/checkout", {"viewModel": cart, "idempotencyKey": key()})["orderId"]

    first = order_elsewhere("p-0001")
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#inbox-items li.unread[data-kind='orderPlaced']")
          and text(d, "#inbox-badge") == "1", "the order's notification and the badge at 1")
    newest = state(browser, "notifications")["items"][0]
    assert newest["orderId"] == first and not newest["isRead"]
    assert browser.find_element(By.ID, "inbox-badge").is_displayed()
    OUT.mkdir(exist_ok=True)
    browser.save_screenshot(str(OUT / "inbox.png"))

    second = order_elsewhere("p-0002")
    until(browser, lambda d: text(d, "#inbox-badge") == "2", "the badge at 2")
    assert state(browser, "notifications")["items"][0]["orderId"] == second, "newest first"
    assert "new" in browser.find_element(By.CSS_SELECTOR, "#inbox-items li").get_attribute("class").split()

    # Mark one read, then all.
    browser.find_element(By.CSS_SELECTOR, "#inbox-items li button.mark-read").click()
    until(browser, lambda d: text(d, "#inbox-badge") == "1" and len(d.find_elements(By.CSS_SELECTOR, "#inbox-items li.read")) == 1,
          "one read")
    order_elsewhere("p-0003")
    until(browser, lambda d: text(d, "#inbox-badge") == "2", "a third arrival")
    browser.find_element(By.ID, "inbox-mark-all").click()
    until(browser, lambda d: not d.find_element(By.ID, "inbox-badge").is_displayed()
          and not d.find_elements(By.CSS_SELECTOR, "#inbox-items li.unread"), "all read")
    assert state(browser, "notifications")["unreadCount"] == 0
    assert not browser.find_element(By.ID, "inbox-mark-all").is_enabled()

    # Signing out closes the inbox: a guest has none.
    browser.find_element(By.ID, "logout").click()
    until(browser, lambda d: text(d, "#account-user").startswith("Shopping as a guest"), "the guest again")
    until(browser, lambda d: not d.find_element(By.ID, "inbox").is_displayed()
          and not d.find_element(By.ID, "inbox-link").is_displayed(), "no inbox")


def test_trending_shows_views_and_adds_after_a_refresh(bridge, browser):
    loaded_page(browser, bridge)
    until(browser, lambda d: (state(d, "dashboard") or {}).get("trending", {}).get("phase") == "loaded", "the trending section")
    browser.execute_script("openProduct('p-0001')")
    until(browser, lambda d: (state(d, "productDetail") or {}).get("phase") == "loaded", "the product")
    browser.find_element(By.ID, "add-to-cart").click()
    until(browser, lambda d: text(d, "#detail-in-cart") == "1 in your cart", "the add")
    browser.find_element(By.ID, "trending-reload").click()
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#trending li[data-product-id='p-0001']"), "the product trending")
    row = browser.find_element(By.CSS_SELECTOR, "#trending li[data-product-id='p-0001']").text
    assert "1 view · 1 add" in row
