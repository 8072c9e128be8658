"""Accounts in the page: sign-up, sign-in, the profile, sign-out, and the token kept across reloads.

Each tab (each WebSocket) has a server, and so a session, of its own: a guest until it signs in.
"""
from __future__ import annotations

from selenium.webdriver.common.by import By

from conftest import OUT
from test_web import loaded_page, text, until

#: The tests' password: typed into the page only (never an argument, a log line or a file of the tests').
PASSWORD = "correct horse 1"


def signed_in_as(driver, email: str) -> bool:
    return text(driver, "#account-user").startswith("Signed in as") and f"({email})" in text(driver, "#account-user")


def sign_up(driver, email: str, password: str = PASSWORD) -> None:
    driver.find_element(By.ID, "register-email").send_keys(email)
    driver.find_element(By.ID, "register-password").send_keys(password)
    driver.find_element(By.ID, "register-confirm").send_keys(password)
    driver.find_element(By.ID, "register-terms").click()
    driver.find_element(By.ID, "register-submit").click()
    until(driver, lambda d: signed_in_as(d, email), f"signed in as {email}")


def sign_in(driver, email: str, password: str = PASSWORD) -> None:
    driver.find_element(By.ID, "login-email").clear()
    driver.find_element(By.ID, "login-email").send_keys(email)
    driver.find_element(By.ID, "login-password").send_keys(password)
    driver.find_element(By.ID, "login-submit").click()


def add_from_catalog(driver, product_id: str) -> None:
    """Adds one unit as the catalog's Add button does (the product need not be on the first page)."""
    until(driver, lambda d: d.execute_script("return Boolean(byType.cart)"), "the cart")
    driver.execute_script("return act('cart', 'add', {productId: arguments[0], quantity: 1})", product_id)


def cart_lines(driver) -> list[tuple[str, int]]:
    """The cart as the page holds it: (productId, quantity) per line, once loaded."""
    return driver.execute_script(
        "const c = byType.cart; return c && c.state.phase === 'loaded' ? c.state.lines.map(l => [l.productId, l.quantity]) : null")


def has_cart(driver, expected: list[tuple[str, int]]) -> bool:
    lines = cart_lines(driver)
    return lines is not None and [tuple(line) for line in lines] == expected



def kept_token(driver) -> str | None:
    return driver.execute_script("return sessionStorage.getItem('storefront.sessionToken')")


def test_sign_up_then_reload_keeps_the_person_signed_in_with_the_same_cart(bridge, browser):
    loaded_page(browser, bridge)
    until(browser, lambda d: text(d, "#account-user").startswith("Shopping as a guest"), "the guest")
    add_from_catalog(browser, "p-0001")
    until(browser, lambda d: has_cart(d, [("p-0001", 1)]), "the guest's line")
    sign_up(browser, "ann@example.com")
    until(browser, lambda d: has_cart(d, [("p-0001", 1)]), "the guest's line, now the account's")
    token = kept_token(browser)
    assert token and token.startswith("sft_")
    assert browser.execute_script("return localStorage.getItem('storefront.sessionToken')") == token
    assert browser.find_element(By.ID, "register-password").get_attribute("value") == "", "the password is not kept"
    add_from_catalog(browser, "p-0002")
    until(browser, lambda d: has_cart(d, [("p-0001", 1), ("p-0002", 1)]), "the second line")

    browser.refresh()  # a new socket, so a new server: the kept token signs it in
    until(browser, lambda d: signed_in_as(d, "ann@example.com"), "signed in again after the reload")
    until(browser, lambda d: has_cart(d, [("p-0001", 1), ("p-0002", 1)]), "the same cart after the reload")
    assert text(browser, "#cart-items") == "2"
    until(browser, lambda d: "None yet." in text(d, "#recent-orders"), "the account's (empty) orders")

    # The profile: shown for the account, saved, and the name shows as the signed-in user's.
    until(browser, lambda d: d.find_element(By.ID, "profile-email").get_attribute("value") == "ann@example.com",
          "the profile")
    name = browser.find_element(By.ID, "profile-name")
    name.clear()
    name.send_keys("Ann Example")
    until(browser, lambda d: d.find_element(By.ID, "profile-save").is_enabled(), "the save button")
    browser.find_element(By.ID, "profile-save").click()
    until(browser, lambda d: text(d, "#account-user") == "Signed in as Ann Example (ann@example.com)", "the new name")
    until(browser, lambda d: text(d, "#profile-status") == "Saved.", "the save's outcome")
    OUT.mkdir(exist_ok=True)
    browser.find_element(By.ID, "account").screenshot(str(OUT / "account-signed-in.png"))


def test_two_tabs_signed_into_different_accounts_keep_different_carts(bridge, browser):
    # Two tabs of one browser: they share localStorage, but each keeps its own token in sessionStorage, so
    # each stays signed into its own account, across reloads, whichever signed in last.
    loaded_page(browser, bridge)
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    loaded_page(browser, bridge)
    second = browser.current_window_handle
    until(browser, lambda d: text(d, "#account-user").startswith("Shopping as a guest"), "the second tab's guest")

    browser.switch_to.window(first)
    sign_up(browser, "ann@example.com")
    add_from_catalog(browser, "p-0001")
    until(browser, lambda d: has_cart(d, [("p-0001", 1)]), "ann's cart")

    browser.switch_to.window(second)
    sign_up(browser, "bob@example.com")
    add_from_catalog(browser, "p-0003")
    add_from_catalog(browser, "p-0003")
    until(browser, lambda d: has_cart(d, [("p-0003", 2)]), "bob's cart")

    browser.switch_to.window(first)
    until(browser, lambda d: has_cart(d, [("p-0001", 1)]), "ann's cart, untouched by bob's")
    browser.refresh()
    until(browser, lambda d: signed_in_as(d, "ann@example.com"), "ann still signed in after a reload")
    until(browser, lambda d: has_cart(d, [("p-0001", 1)]), "ann's cart after the reload")

    browser.switch_to.window(second)
    browser.refresh()
    until(browser, lambda d: signed_in_as(d, "bob@example.com"), "bob still signed in after a reload")
    until(browser, lambda d: has_cart(d, [("p-0003", 2)]), "bob's cart after the reload")
    assert len(bridge.servers()) == 2, "one server per tab"


def test_sign_out_shows_an_empty_guest_cart_and_other_windows_of_the_account_follow(bridge, browser):
    loaded_page(browser, bridge)
    sign_up(browser, "cy@example.com")
    add_from_catalog(browser, "p-0003")
    until(browser, lambda d: has_cart(d, [("p-0003", 1)]), "cy's cart")
    token = kept_token(browser)

    # A second tab opens signed in as cy (the browser's last token), showing the same cart.
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    loaded_page(browser, bridge)
    until(browser, lambda d: signed_in_as(d, "cy@example.com"), "the new tab signed in as cy")
    until(browser, lambda d: has_cart(d, [("p-0003", 1)]), "cy's cart in the new tab")
    second = browser.current_window_handle

    browser.switch_to.window(first)
    browser.find_element(By.ID, "logout").click()
    until(browser, lambda d: text(d, "#account-user").startswith("Shopping as a guest"), "the guest after signing out")
    until(browser, lambda d: has_cart(d, []) and "The cart is empty." in text(d, "#cart-lines"), "an empty guest cart")
    assert text(browser, "#cart-total") == "0.00"
    assert kept_token(browser) is None
    assert browser.execute_script("return localStorage.getItem('storefront.sessionToken')") is None
    until(browser, lambda d: text(d, "#recent-orders") == "Sign in to see your orders.", "a guest's orders")
    assert not browser.find_element(By.ID, "member-panel").is_displayed()

    # The token was revoked everywhere: the other tab is a guest too, and says why.
    browser.switch_to.window(second)
    until(browser, lambda d: text(d, "#account-message") == "You were signed out in another window.", "the other tab told")
    until(browser, lambda d: has_cart(d, []), "the other tab's empty guest cart")
    assert kept_token(browser) is None
    browser.refresh()
    until(browser, lambda d: text(d, "#status").startswith("connected") and byType_loaded(d), "the reload")
    assert text(browser, "#account-user").startswith("Shopping as a guest"), f"the revoked token {token[:8]}… is not resumed"


def byType_loaded(driver) -> bool:
    return driver.execute_script("return Boolean(byType.cart && byType.cart.state.phase === 'loaded')")


def test_checkout_as_a_guest_shows_the_sign_in_refusal(bridge, browser):
    loaded_page(browser, bridge)
    add_from_catalog(browser, "p-0001")
    until(browser, lambda d: has_cart(d, [("p-0001", 1)]), "the guest's line")
    browser.find_element(By.ID, "checkout").click()
    until(browser, lambda d: "Sign in to check out. (signInRequired)" in text(d, "#errors"), "the refusal")
    assert has_cart(browser, [("p-0001", 1)]), "nothing placed"


def test_wrong_passwords_lock_sign_in_and_merged_lines_are_capped(bridge, browser):
    loaded_page(browser, bridge)
    sign_up(browser, "dee@example.com")
    browser.execute_script("return act('cart', 'add', {productId: 'p-0001', quantity: 4})")
    until(browser, lambda d: has_cart(d, [("p-0001", 4)]), "dee's four")
    browser.find_element(By.ID, "logout").click()
    until(browser, lambda d: not d.find_element(By.ID, "member-panel").is_displayed(), "signed out")

    # A guest with four more: signing in keeps five (at most 5 per order), and the page says so.
    browser.execute_script("return act('cart', 'add', {productId: 'p-0001', quantity: 4})")
    until(browser, lambda d: has_cart(d, [("p-0001", 4)]), "the guest's four")
    sign_in(browser, "dee@example.com")
    until(browser, lambda d: signed_in_as(d, "dee@example.com"), "signed in")
    until(browser, lambda d: has_cart(d, [("p-0001", 5)]), "the merged, capped line")
    assert "Cozy Wool Board Game: your cart keeps 5, not the 8 you had" in text(browser, "#capped-lines")
    assert "Cozy Wool Board Game" in text(browser, "#cart-notices")
    browser.find_element(By.ID, "logout").click()
    until(browser, lambda d: d.find_element(By.ID, "login-form").is_displayed(), "the sign-in form")

    # Four wrong passwords, each answered before the next is sent (execute_script awaits the promise)...
    for _ in range(4):
        reason = browser.execute_script(
            "return connection.request('login/login', {viewModel: byType.login.handle, email: arguments[0],"
            " password: arguments[1]}).then(() => 'signed in', (e) => e.rpc.data.reason)",
            "dee@example.com", "wrong password 1")
        assert reason == "invalidCredentials"
    # ...and the fifth through the form: the sign-in is locked, and the page says until when.
    sign_in(browser, "dee@example.com", "wrong password 1")
    until(browser, lambda d: d.find_element(By.ID, "account-locked").is_displayed(), "the lock")
    assert text(browser, "#account-locked").startswith("Signing in is locked until")
    assert "Too many failed sign-ins" in text(browser, "#account-message")
    until(browser, lambda d: "signInLocked" in text(d, "#errors"), "the refusal")
