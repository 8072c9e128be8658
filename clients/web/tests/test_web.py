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
    browser.get(bridge.url)
    until(browser, lambda d: text(d, "#status").startswith("connected"), "the connection")
    until(browser, lambda d: "of 240 products" in text(d, "#catalog-summary"), "the catalog")
    until(browser, lambda d: "The cart is empty." in text(d, "#cart-lines"), "the empty cart")
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

    browser.find_element(By.ID, "checkout").click()
    until(browser, lambda d: text(d, "#cart-total") == "0.00", "the emptied cart")
    until(browser, lambda d: "Order o-000001 placed" in text(d, "#cart-message"), "the order message")
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
    # The bridge stops and reaps that socket's server after the socket closed, in its own time: wait for
    # it, so that any server seen below was started by a refused upgrade.
    wait_until(lambda: not bridge.servers(), what="the first socket's server to be reaped")
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
