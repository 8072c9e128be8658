"""The page in headless Chromium through the bridge, and the bridge's refusals."""
from __future__ import annotations

import asyncio
import http.server
import json
import threading
from decimal import Decimal

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from conftest import OUT, wait_until


def text(driver, css: str) -> str:
    elements = driver.find_elements(By.CSS_SELECTOR, css)
    return elements[0].text if elements else ""



def until(driver, condition, what: str, timeout: float = 60):
    # The page re-renders on every patch: an element found just before may be replaced before its text is
    # read. That is not the condition failing, so it is polled again (any other error still ends the wait).
    # The wait ends as soon as the condition holds; `timeout` only decides when a stuck page fails.
    wait = WebDriverWait(driver, timeout, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException])
    try:
        return wait.until(lambda d: condition(d))
    except Exception:
        raise AssertionError(f"timed out waiting for {what}; page text:\n{text(driver, 'body')}") from None


def test_search_add_checkout_and_dashboard(bridge, browser):
    from test_accounts import sign_up  # checking out needs an account

    browser.get(bridge.url)
    until(browser, lambda d: text(d, "#status").startswith("connected"), "the connection")
    until(browser, lambda d: "of 240 products" in text(d, "#catalog-summary"), "the catalog")
    until(browser, lambda d: "The cart is empty." in text(d, "#cart-lines"), "the empty cart")
    sign_up(browser, "shopper@example.com")
    until(browser, lambda d: "None yet." in text(d, "#recent-orders"), "the dashboard")
    assert len(bridge.servers()) == 1, "one server for the one socket"

    browser.find_element(By.ID, "search").send_keys("kettle")
    until(browser, lambda d: text(d, "#catalog-summary") == "4 of 4 products for “kettle”", "the search results")
    assert "Everyday Steel Kettle" in text(browser, "#products")

    browser.find_element(By.CSS_SELECTOR, "li[data-product-id='p-0112'] button.add").click()
    until(browser, lambda d: text(d, "#cart-total") == "23.79", "the total after adding from the catalog")

    browser.find_element(By.CSS_SELECTOR, "li[data-product-id='p-0106'] button.details").click()
    until(browser, lambda d: text(d, "#detail-name") == "Modern Leather Kettle", "the product detail")
    browser.find_element(By.ID, "qty-plus").click()
    until(browser, lambda d: text(d, "#detail-quantity") == "2", "the quantity")
    browser.find_element(By.ID, "add-to-cart").click()
    until(browser, lambda d: text(d, "#cart-subtotal") == "679.97", "the subtotal after adding from the product")
    subtotal, tax, total = (Decimal(text(browser, f"#cart-{n}")) for n in ("subtotal", "tax", "total"))
    assert total == subtotal + tax and tax > 0
    assert "2 × Modern Leather Kettle" in text(browser, "#cart-lines")
    assert text(browser, "#cart-items") == "3"
    # Line totals are computed by the page (the state has none); they add up to the server's subtotal.
    line_totals = [Decimal(e.text) for e in browser.find_elements(By.CSS_SELECTOR, "#cart-lines li .price")]
    assert len(line_totals) == 2 and sum(line_totals) == subtotal

    # A refused action is shown to the user.
    browser.execute_script("act('cart', 'setQuantity', {productId: 'p-0112', quantity: 100000})")
    until(browser, lambda d: "quantityExceeds" in text(d, "#errors"), "the refusal")

    OUT.mkdir(exist_ok=True)
    browser.save_screenshot(str(OUT / "storefront.png"))

    # While the page's own checkout is unanswered (held here until released) the button says so and is
    # disabled, whether or not the server sends a `submitting` state (it sends none when the order is stored
    # before it would wait), so a second click sends no second checkout.
    browser.execute_script("""
        window.checkoutsSent = 0;
        window.checkoutHeld = new Promise((resolve) => { window.releaseCheckout = resolve; });
        const request = connection.request.bind(connection);
        connection.request = async (method, params) => {
            if (method === "cart/checkout") { window.checkoutsSent += 1; await window.checkoutHeld; }
            return request(method, params);
        };""")
    browser.find_element(By.ID, "checkout").click()
    until(browser, lambda d: text(d, "#checkout") == "Placing the order…", "the checkout shown in flight")
    assert not browser.find_element(By.ID, "checkout").is_enabled()
    browser.execute_script("document.getElementById('checkout').click()")  # a second click: nothing is sent
    browser.execute_script("window.releaseCheckout()")
    until(browser, lambda d: text(d, "#cart-total") == "0.00", "the emptied cart")
    until(browser, lambda d: "Order o-000001 placed" in text(d, "#cart-message"), "the order message")
    until(browser, lambda d: text(d, "#checkout") == "Checkout", "the button once answered")
    assert browser.execute_script("return window.checkoutsSent") == 1
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#recent-orders li[data-order-id='o-000001']"),
          "the order on the dashboard")
    assert str(total) in text(browser, "#recent-orders")
    browser.save_screenshot(str(OUT / "storefront-after-checkout.png"))

    # Leaving the page closes the socket: its server is stopped and reaped.
    browser.get("about:blank")
    wait_until(lambda: not bridge.servers(), what="the server to be reaped after the page closed")


def test_wrong_token_gets_no_page(bridge, browser):
    browser.get(bridge.base + "/?token=wrong")
    assert "403 Forbidden" in text(browser, "body")
    browser.get(bridge.base + "/")
    assert "403 Forbidden" in text(browser, "body")


async def handshake(url: str, origin: str | None):
    async with connect(url, origin=origin) as ws:
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        return json.loads(await ws.recv())


def test_websocket_needs_token_and_own_origin(bridge):
    assert asyncio.run(handshake(bridge.ws_url, bridge.base)) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    # That socket's server is stopped and reaped after the socket closed, not before: wait for it, so that
    # the check below sees only what the refused upgrades did.
    wait_until(lambda: not bridge.servers(), what="the accepted socket's server to be reaped")
    for url, origin in [(bridge.ws_url.replace(bridge.token, "wrong"), bridge.base),
                        (bridge.ws_url.split("?")[0], bridge.base),
                        (bridge.ws_url, "http://evil.example"),
                        (bridge.ws_url, "http://127.0.0.1:1"),
                        (bridge.ws_url, None)]:
        with pytest.raises(InvalidStatus) as refused:
            asyncio.run(handshake(url, origin))
        assert refused.value.response.status_code == 403
    assert not bridge.servers(), "a refused upgrade starts no server"


def test_foreign_page_cannot_open_the_socket(bridge, browser):
    """A page from another origin that knows the token still cannot connect."""
    page = f"""<!doctype html><title>waiting</title><script>
      const ws = new WebSocket({json.dumps(bridge.ws_url)});
      ws.onopen = () => {{ document.title = "opened"; }};
      ws.onerror = () => {{ document.title = "refused"; }};
    </script>""".encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    foreign = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://127.0.0.1:{foreign.server_address[1]}/")
        until(browser, lambda d: d.title != "waiting", "the foreign page's attempt")
        assert browser.title == "refused"
        assert not bridge.servers()
    finally:
        foreign.shutdown()


PATCH_CASES = [  # (document, patch, expected or None when the patch must fail): RFC 6902 appendix A and more
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"foo": "bar", "baz": "qux"}),
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": "qux"}], {"foo": ["bar", "qux"]}),
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/2", "value": "qux"}], None),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    ({"baz": "qux"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo"}),
    ({"baz": "qux"}, [{"op": "replace", "path": "/nope", "value": 1}], None),
    ({"a": 1}, [{"op": "replace", "path": "", "value": [1]}], [1]),
    ({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    ({"foo": ["all", "grass", "cows", "eat"]}, [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),
    ({"a": {"b": [1]}}, [{"op": "copy", "from": "/a/b", "path": "/c"}], {"a": {"b": [1]}, "c": [1]}),
    ({"baz": "qux", "foo": ["a", 2, "c"]},
     [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),
    ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], None),
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}, {"op": "replace", "path": "/~1", "value": 1}],
     {"/": 1, "~1": 10}),
    ({"error": None}, [{"op": "replace", "path": "/error", "value": {"message": "x"}}], {"error": {"message": "x"}}),
    ({"a": 1}, [{"op": "replace", "path": "/a", "value": 2}, {"op": "test", "path": "/a", "value": 3}], None),
]


def test_json_patch_applier_in_the_page(bridge, browser):
    browser.get(bridge.url)
    until(browser, lambda d: text(d, "#status").startswith("connected"), "the connection")
    results = browser.execute_script("""
        return arguments[0].map(([doc, patch]) => {
          const before = JSON.stringify(doc);
          try {
            const result = applyPatch(doc, patch);
            return {ok: true, result, untouched: JSON.stringify(doc) === before};
          } catch (error) {
            return {ok: false, error: String(error), untouched: JSON.stringify(doc) === before};
          }
        });""", [[doc, patch] for doc, patch, _ in PATCH_CASES])
    for (doc, patch, expected), result in zip(PATCH_CASES, results):
        assert result["untouched"], f"{patch} modified its input"
        if expected is None:
            assert not result["ok"], f"{patch} on {doc} should fail"
        else:
            assert result["ok"] and result["result"] == expected, f"{patch} on {doc}: {result}"


LINE_TOTAL_CASES = [  # (unitPrice, quantity, line total): exact in minor units, never binary floating point
    ("400.99", 2, "801.98"),
    ("0.10", 3, "0.30"),
    ("19.99", 3, "59.97"),
    ("1.15", 100, "115.00"),
    ("5", 1, "5.00"),
    ("0.5", 3, "1.50"),
    ("-3.10", 2, "-6.20"),
    ("90071992547409.93", 100, "9007199254740993.00"),
    ("12,50", 1, "–"),
    ("1.999", 1, "–"),
]


def test_line_totals_are_computed_in_minor_units(bridge, browser):
    browser.get(bridge.url)
    until(browser, lambda d: text(d, "#status").startswith("connected"), "the connection")
    results = browser.execute_script(
        "return arguments[0].map(([unitPrice, quantity]) => lineTotal({unitPrice, quantity}));",
        [[price, quantity] for price, quantity, _ in LINE_TOTAL_CASES])
    assert results == [expected for _, _, expected in LINE_TOTAL_CASES]


def test_killing_the_bridge_leaves_no_server(bridge):
    async def open_socket_and_kill():
        async with connect(bridge.ws_url, origin=bridge.base) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            await ws.recv()
            servers = bridge.servers()
            assert len(servers) == 1
            bridge.process.kill()
            bridge.process.wait()
            return servers[0]

    server = asyncio.run(open_socket_and_kill())

    def gone() -> bool:
        try:
            with open(f"/proc/{server}/status") as status:
                return "zombie" in status.read()  # left to init to reap, its parent being dead
        except FileNotFoundError:
            return True

    wait_until(gone, what="the server to exit after the bridge was killed")


# -------------------------------------------------------------------- failures shown, and their retries

def loaded_page(driver, bridge):
    driver.get(bridge.url)
    until(driver, lambda d: text(d, "#status").startswith("connected"), "the connection")


def version(driver, type_: str) -> int:
    return driver.execute_script("return byType[arguments[0]].version", type_)


def phase(driver, type_: str) -> str:
    return driver.execute_script("return byType[arguments[0]].state.phase", type_)


def test_a_missing_product_offers_a_retry_that_fails_again(bridge, browser):
    loaded_page(browser, bridge)
    browser.execute_script("openProduct('p-9999')")
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#detail-problem button.retry"), "the retry button")
    assert "Could not load: Product p-9999 does not exist." in text(browser, "#detail-problem")
    before = version(browser, "productDetail")
    browser.find_element(By.CSS_SELECTOR, "#detail-problem button.retry").click()
    # The retry reloads (loading, then failed again): a later version, failed, and the retry offered again.
    until(browser, lambda d: version(d, "productDetail") > before and phase(d, "productDetail") == "failed"
          and d.find_elements(By.CSS_SELECTOR, "#detail-problem button.retry"), "the retry's answer")
    assert "Product p-9999 does not exist." in text(browser, "#detail-problem")


@pytest.mark.parametrize("faulty_bridge", ["favorites:failure-rate=1"], indirect=True)
def test_a_favourites_outage_shows_the_product_with_its_favourite_unknown(faulty_bridge, browser):
    loaded_page(browser, faulty_bridge)
    browser.execute_script("openProduct('p-0003')")
    until(browser, lambda d: text(d, "#detail-name") == "Smart Linen Keyboard", "the product")
    favourite = browser.find_element(By.ID, "favorite")
    assert favourite.text == "Favourite unknown" and not favourite.is_enabled()
    assert "The favorites service is unavailable" in text(browser, "#detail-problem")
    assert text(browser, "#detail-in-cart") == "None in your cart yet"

    # Units already in the cart: added from the product, they are counted, and the maximum shrinks.
    browser.find_element(By.ID, "qty-plus").click()
    until(browser, lambda d: text(d, "#detail-quantity") == "2", "the quantity")
    browser.find_element(By.ID, "add-to-cart").click()
    until(browser, lambda d: text(d, "#detail-in-cart") == "2 in your cart", "the units in the cart")
    assert browser.execute_script("return byType.productDetail.state.maxQuantity") == 3
    # After the add's success the favourite is still unknown: the page still says why, with the retry.
    assert "The favorites service is unavailable" in text(browser, "#detail-problem")
    OUT.mkdir(exist_ok=True)
    browser.find_element(By.ID, "detail").screenshot(str(OUT / "product-panel.png"))

    before = version(browser, "productDetail")
    browser.find_element(By.CSS_SELECTOR, "#detail-problem button.retry").click()
    until(browser, lambda d: version(d, "productDetail") > before and phase(d, "productDetail") == "loaded"
          and d.find_elements(By.CSS_SELECTOR, "#detail-problem"), "the retry's answer")
    assert browser.find_element(By.ID, "favorite").text == "Favourite unknown"
    assert not browser.find_element(By.ID, "favorite").is_enabled()


@pytest.mark.parametrize("faulty_bridge", ["cart:failure-rate=1"], indirect=True)
def test_a_failed_cart_offers_a_retry_and_claims_no_total(faulty_bridge, browser):
    loaded_page(browser, faulty_bridge)
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#cart-problem button.retry"), "the cart's retry")
    assert "Could not load the cart: The cart service is unavailable" in text(browser, "#cart-problem")
    assert text(browser, "#cart-total") == "–" and not browser.find_element(By.ID, "checkout").is_enabled()
    before = version(browser, "cart")
    browser.find_element(By.CSS_SELECTOR, "#cart-problem button.retry").click()
    until(browser, lambda d: version(d, "cart") > before and phase(d, "cart") == "failed"
          and d.find_elements(By.CSS_SELECTOR, "#cart-problem button.retry"), "the retry's answer")


@pytest.mark.parametrize("faulty_bridge", ["orders:failure-rate=1"], indirect=True)
def test_a_failed_dashboard_section_offers_its_reload(faulty_bridge, browser):
    from test_accounts import sign_up  # a guest's orders fail anyway ("Sign in to see your orders.")

    loaded_page(browser, faulty_bridge)
    sign_up(browser, "orders@example.com")
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#recent-orders-problem button.retry"), "the section's retry")
    assert "The orders service is unavailable" in text(browser, "#recent-orders-problem")
    assert "None yet." not in text(browser, "#recent-orders")
    before = version(browser, "dashboard")
    browser.find_element(By.CSS_SELECTOR, "#recent-orders-problem button.retry").click()
    until(browser, lambda d: version(d, "dashboard") > before
          and browser.execute_script("return byType.dashboard.state.recentOrders.phase") == "failed"
          and d.find_elements(By.CSS_SELECTOR, "#recent-orders-problem button.retry"), "the reload's answer")


def test_a_deleted_product_leaves_a_dismissible_notice_in_the_cart(bridge, browser):
    loaded_page(browser, bridge)
    browser.find_element(By.ID, "search").send_keys("kettle")
    until(browser, lambda d: text(d, "#catalog-summary") == "4 of 4 products for “kettle”", "the search results")
    browser.find_element(By.CSS_SELECTOR, "li[data-product-id='p-0112'] button.add").click()
    until(browser, lambda d: text(d, "#cart-total") == "23.79", "the product in the cart")

    # The page has no delete control: the catalog's actions are sent as a catalog screen would.
    browser.execute_script("return act('catalog', 'toggleSelection', {productId: 'p-0112'})"
                           ".then(() => act('catalog', 'deleteSelected'))")
    until(browser, lambda d: "Everyday Steel Kettle was removed from your cart" in text(d, "#cart-notices"), "the notice")
    assert "The cart is empty." in text(browser, "#cart-lines") and text(browser, "#cart-total") == "0.00"
    assert browser.find_elements(By.CSS_SELECTOR, "#cart-notices li[data-product-id='p-0112']")
    OUT.mkdir(exist_ok=True)
    browser.find_element(By.ID, "cart").screenshot(str(OUT / "cart-notice.png"))
    browser.find_element(By.ID, "dismiss-notices").click()
    until(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "#cart-notices .notice"), "the notice dismissed")
    assert browser.execute_script("return byType.cart.state.notices") == []


CATALOG_PAGE = {"phase": "loaded", "error": None, "query": "", "category": None, "sort": "name", "products": [],
                "totalCount": 240, "hasMore": True, "selection": [], "loadMorePhase": "idle", "loadMoreError": None}


def test_load_more_appends_a_page_and_shows_its_own_phase(bridge, browser):
    loaded_page(browser, bridge)
    until(browser, lambda d: text(d, "#catalog-summary") == "20 of 240 products", "the first page")
    browser.find_element(By.ID, "load-more").click()
    until(browser, lambda d: text(d, "#catalog-summary") == "40 of 240 products", "the second page")
    assert browser.find_element(By.ID, "load-more").text == "Load more"

    # A page failing is not something the server can be made to do on cue (a catalog fault fails the first
    # load too), so the states the server documents are rendered directly.
    def render(**changes) -> tuple[str, bool, str]:
        browser.execute_script("renderers.catalog(arguments[0])", {**CATALOG_PAGE, **changes})
        button = browser.find_element(By.ID, "load-more")
        shown = browser.find_element(By.ID, "load-more-error")
        return button.text, button.is_enabled(), shown.text if shown.is_displayed() else ""

    assert render(loadMorePhase="loading") == ("Loading more…", False, "")
    assert render(loadMorePhase="failed", loadMoreError={"message": "The catalog service is unavailable.", "retryable": True}) \
        == ("Retry loading more", True, "Could not load more: The catalog service is unavailable.")
    assert render(loadMorePhase="failed", hasMore=False,
                  loadMoreError={"message": "x", "retryable": True})[:2] == ("Retry loading more", True)
    assert render() == ("Load more", True, "")
