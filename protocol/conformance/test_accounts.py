"""Accounts (issue 14): registration, login and profile ViewModels, sessions across servers, and each
account's own data. Driven by what rpc.discover declares (types, actions, params, state schemas, refusal
reasons) and by protocol/README.md; every wait is a failure guard, never a timing verdict."""

from __future__ import annotations

import copy
import json

import pytest

from storefront_session import Mirror, Mirrors, Session
from test_lifecycle import assert_error
from viewmodel_helpers import (PASSWORD, Checkpoint, SignedIn, action, ok, open_settled, refused, register_account,
                               resume_account, signed_in, unique_email)

pytestmark = pytest.mark.usefixtures("viewmodels_available", "accounts_available")

ACCOUNT_TYPES = ("registration", "login", "profile")


@pytest.fixture
def accounts_available(contract) -> None:
    missing = [type_ for type_ in ACCOUNT_TYPES if type_ not in contract.actions]
    if missing:
        pytest.skip(f"this server does not serve {', '.join(missing)} yet")


@pytest.fixture
def shop_file(tmp_path) -> str:
    """A database file the servers of one test share."""
    return str(tmp_path / "accounts.sqlite")


@pytest.fixture
def server(spawn, validate_state):
    """Starts an initialized server (on `database` when given) and returns Mirrors that validate every
    state, opened or notified, against its schema from rpc.discover."""
    validated: set[str] = set()

    def start(database: str | None = None, *extra: str) -> Mirrors:
        session = spawn(*(["--database", database] if database else []), *extra)
        session.initialize()

        def check(mirror: Mirror) -> None:
            validate_state(mirror.type, mirror.state)
            validated.add(mirror.type)
        return Mirrors(session, on_state=check)

    start.validated = validated
    return start


def fill_registration(mirrors: Mirrors, form: Mirror, email: str, password: str = PASSWORD,
                      confirmation: str | None = None, terms: bool = True) -> None:
    for field, value in [("email", email), ("password", password),
                         ("confirmPassword", password if confirmation is None else confirmation)]:
        ok(action(mirrors, form, "setField", field=field, value=value))
    ok(action(mirrors, form, "setAcceptedTerms", accepted=terms))


def phases_seen(mirrors: Mirrors, mirror: Mirror, since: int) -> list[str]:
    """The `phase` values a ViewModel's notifications carried since notification `since` (patches
    re-applied from the state before them)."""
    phases = []
    for notification in mirrors.session.notifications[since:]:
        params = notification["params"]
        if notification["method"] != "viewModel/changed" or params["viewModel"] != mirror.handle:
            continue
        for operation in params.get("patch", []):
            if operation["path"] == "/phase":
                phases.append(operation["value"])
            elif operation["path"] == "":
                phases.append(operation["value"]["phase"])
        if "state" in params:
            phases.append(params["state"]["phase"])
    return phases


def login_with(mirrors: Mirrors, login: Mirror, email: str, password: str) -> dict:
    return action(mirrors, login, "login", email=email, password=password)


def line_quantities(cart: Mirror) -> dict[str, int]:
    return {line["productId"]: line["quantity"] for line in cart.state["lines"]}


# -- schemas through whole stories ---------------------------------------------------------------


def test_every_state_matches_its_schema_through_a_whole_story(server, shop_file, contract):
    a = server(shop_file)
    catalog = open_settled(a, "catalog")
    product_ids = [product["id"] for product in catalog.state["products"] if product["inStock"]][:3]
    cart = open_settled(a, "cart")
    dashboard = open_settled(a, "dashboard")
    login = a.open("login")
    assert login.state["phase"] == "loggedOut" and login.state["user"] is None, login.state
    form = a.open("registration")
    assert form.state["signedIn"] is False

    email = unique_email("story")
    fill_registration(a, form, email)
    a.wait_until(form, lambda state: not state["checking"])
    assert form.state["errors"] == {} and form.state["isFormValid"] is True, form.state
    checkpoint = Checkpoint(a)
    account = signed_in(email, PASSWORD, ok(action(a, form, "register")))
    # Every open ViewModel of the connection shows the sign-in when the answer comes.
    assert form.state["signedIn"] is True and form.state["submitPhase"] == "succeeded"
    assert login.state["phase"] == "loggedIn" and login.state["user"]["id"] == account.account_id, login.state
    checkpoint.verify()

    ok(action(a, cart, "add", productId=product_ids[0], quantity=1))
    detail = open_settled(a, "productDetail", {"productId": product_ids[1]})
    ok(action(a, detail, "toggleFavorite"))
    order = ok(action(a, cart, "checkout"))["orderId"]
    assert dashboard.state["recentOrders"]["items"][0]["id"] == order

    profile = open_settled(a, "profile")
    assert profile.state["phase"] == "loaded" and profile.state["accountId"] == account.account_id
    assert profile.state["fields"]["email"].casefold() == email.casefold(), profile.state
    for field, value in [("name", "Story Shopper"), ("bio", "Line one\nLine two")]:
        ok(action(a, profile, "setField", field=field, value=value))
    ok(action(a, profile, "setNotificationsEnabled", enabled=False))
    assert profile.state["hasChanges"] is True and profile.state["isValid"] is True
    checkpoint = Checkpoint(a)
    ok(action(a, profile, "save"))
    assert profile.state["savePhase"] == "succeeded" and profile.state["hasChanges"] is False, profile.state
    assert login.state["user"]["name"] == "Story Shopper", "every open ViewModel of the account shows the save"
    checkpoint.verify()

    ok(action(a, cart, "add", productId=product_ids[2], quantity=1))
    checkpoint = Checkpoint(a)
    ok(action(a, login, "logout"))
    # The ordering guarantee: at the answer every open ViewModel shows the fresh guest.
    assert login.state["phase"] == "loggedOut" and login.state["user"] is None
    assert cart.state["lines"] == [], "a sign-out gives a fresh, empty guest cart"
    assert dashboard.state["recentOrders"]["phase"] == "failed", "a guest has no orders to show"
    assert detail.state["isFavorite"] is False
    checkpoint.verify()

    checkpoint = Checkpoint(a)
    token = signed_in(email, PASSWORD, ok(login_with(a, login, email, PASSWORD))).token
    assert login.state["phase"] == "loggedIn"
    assert line_quantities(cart) == {product_ids[2]: 1}
    assert [item["id"] for item in dashboard.state["recentOrders"]["items"]] == [order]
    assert detail.state["isFavorite"] is True
    checkpoint.verify()

    b = server(shop_file)
    resume_account(b, SignedIn(email, PASSWORD, token, account.account_id, {}))
    cart_b = open_settled(b, "cart")
    assert cart_b.state["lines"] == cart.state["lines"]
    profile_b = open_settled(b, "profile")
    assert profile_b.state["fields"] == profile.state["fields"]
    assert profile_b.state["fields"]["notificationsEnabled"] is False
    dashboard_b = open_settled(b, "dashboard")
    assert [item["id"] for item in dashboard_b.state["recentOrders"]["items"]] == [order]
    detail_b = open_settled(b, "productDetail", {"productId": product_ids[1]})
    assert detail_b.state["isFavorite"] is True
    for mirrors in (a, b):
        for mirror in mirrors.by_handle.values():
            mirrors.assert_in_sync(mirror)
    assert set(ACCOUNT_TYPES) <= server.validated, server.validated


# -- registration --------------------------------------------------------------------------------


def test_a_registration_field_is_checked_after_its_last_change(server):
    mirrors = server()
    form = mirrors.open("registration")
    ok(action(mirrors, form, "setField", field="email", value="not-an-address"))
    # At the answer the check is pending (it runs 300 ms later, in a turn of its own).
    assert form.state["checking"] == ["email"] and form.state["errors"] == {}, form.state
    assert form.state["isFormValid"] is False
    mirrors.wait_until(form, lambda state: "email" in state["errors"])  # a failure guard, not a timing verdict
    assert form.state["checking"] == [] and isinstance(form.state["errors"]["email"], str)
    assert set(form.state["errors"]) == {"email"}, "only touched fields show their error"

    ok(action(mirrors, form, "setField", field="email", value=unique_email()))
    assert "email" in form.state["checking"]
    mirrors.wait_until(form, lambda state: "email" not in state["errors"] and not state["checking"])

    # The confirmation is checked against the password, both touched.
    ok(action(mirrors, form, "setField", field="password", value="abcdefg1"))
    ok(action(mirrors, form, "setField", field="confirmPassword", value="abcdefg2"))
    mirrors.wait_until(form, lambda state: not state["checking"])
    assert set(form.state["errors"]) == {"confirmPassword"}, form.state
    ok(action(mirrors, form, "setField", field="confirmPassword", value="abcdefg1"))
    mirrors.wait_until(form, lambda state: not state["checking"])
    assert form.state["errors"] == {}, form.state
    # isFormValid is derived from the values at once, not after the check.
    assert form.state["isFormValid"] is False
    ok(action(mirrors, form, "setAcceptedTerms", accepted=True))
    assert form.state["isFormValid"] is True, form.state
    mirrors.assert_in_sync(form)


def test_a_newer_change_replaces_the_pending_check(server):
    mirrors = server()
    form = mirrors.open("registration")
    session = mirrors.session
    # In one write: the second change comes within the first one's 300 ms however busy the machine is.
    first = session.request_message("registration/setField",
                                    {"viewModel": form.handle, "field": "email", "value": "not-an-address"})
    second = session.request_message("registration/setField",
                                     {"viewModel": form.handle, "field": "email", "value": unique_email()})
    shown: list[dict] = []  # the errors after each of the form's notifications (mirrors apply them first)
    session.listeners.append(
        lambda n: shown.append(copy.deepcopy(form.state["errors"])) if n["params"]["viewModel"] == form.handle else None)
    session.send_at_once(first, second)
    ok(session.read_until_response(first["id"]))
    ok(session.read_until_response(second["id"]))
    mirrors.wait_until(form, lambda state: not state["checking"])
    assert form.state["errors"] == {}, form.state
    assert shown and not any(shown), f"the replaced value's check ran: {shown}"


def test_register_while_invalid_is_refused_and_shows_every_invalid_field(server):
    mirrors = server()
    form = mirrors.open("registration")
    ok(action(mirrors, form, "setField", field="email", value="not-an-address"))
    error = refused(action(mirrors, form, "register"), "validationFailed")
    details = error["data"]["details"]
    assert {"email", "password", "acceptedTerms"} <= set(details), error
    assert all(isinstance(message, str) and message for message in details.values()), error
    # The refusal shows every invalid field, touched or not (as productForm/submit does).
    assert form.state["errors"] == details, form.state
    assert form.state["signedIn"] is False and form.state["submitPhase"] != "succeeded"
    mirrors.assert_in_sync(form)

    fill_registration(mirrors, form, unique_email(), confirmation="other-pass-2", terms=False)
    error = refused(action(mirrors, form, "register"), "validationFailed")
    assert set(error["data"]["details"]) == {"confirmPassword", "acceptedTerms"}, error
    ok(action(mirrors, form, "setField", field="confirmPassword", value=PASSWORD))
    ok(action(mirrors, form, "setAcceptedTerms", accepted=True))
    ok(action(mirrors, form, "register"))
    assert form.state["signedIn"] is True


def test_a_registered_email_is_taken_whatever_its_case(server, shop_file):
    email = unique_email("Taken")
    register_account(server(shop_file), email)
    mirrors = server(shop_file)
    form = mirrors.open("registration")
    fill_registration(mirrors, form, email.upper().replace("@EXAMPLE.COM", "@example.com"))
    error = refused(action(mirrors, form, "register"), "emailTaken")
    assert isinstance(form.state["errors"].get("email"), str), form.state
    assert form.state["signedIn"] is False
    assert "token" not in json.dumps(error)
    mirrors.assert_in_sync(form)
    login = mirrors.open("login")
    assert login.state["phase"] == "loggedOut"


# -- the sign-in state machine -------------------------------------------------------------------


def test_login_phases_refusals_and_tokens(server, shop_file):
    a = server(shop_file)
    account = register_account(a)
    login = a.open("login")
    assert login.state["phase"] == "loggedIn" and login.state["user"]["id"] == account.account_id
    before = (login.version, copy.deepcopy(login.state))
    refused(login_with(a, login, account.email, account.password), "alreadySignedIn")
    refused(action(a, login, "resume", token=account.token), "alreadySignedIn")
    assert (login.version, login.state) == before, "a refusal leaves the state unchanged"
    form = a.open("registration")
    fill_registration(a, form, unique_email())
    refused(action(a, form, "register"), "alreadySignedIn")

    # The register token resumes in a new server process.
    b = server(shop_file)
    resume_account(b, account)

    ok(action(a, login, "logout"))
    assert login.state["phase"] == "loggedOut" and login.state["user"] is None

    for email, password in [(account.email, "wrong-pass-1"), (unique_email("nobody"), "wrong-pass-1")]:
        seen = len(a.session.notifications)
        error = refused(login_with(a, login, email, password), "invalidCredentials")
        assert phases_seen(a, login, seen) == ["loggingIn", "failed"], a.session.notifications[seen:]
        assert login.state["phase"] == "failed" and login.state["user"] is None
        assert login.state["message"] == error["message"], "the state says why, as the refusal does"
    seen = len(a.session.notifications)
    token = signed_in(account.email, account.password, ok(login_with(a, login, account.email, account.password))).token
    assert phases_seen(a, login, seen) == ["loggingIn", "loggedIn"]
    assert login.state["user"]["id"] == account.account_id and login.state["message"] is None

    # The login token resumes in a new server process, and signing out ends it everywhere.
    c = server(shop_file)
    c_login = c.open("login")
    seen = len(c.session.notifications)
    ok(action(c, c_login, "resume", token=token))
    assert phases_seen(c, c_login, seen) == ["loggingIn", "loggedIn"]
    ok(action(c, c_login, "logout"))
    refused(action(c, c_login, "resume", token=token), "sessionInvalid")
    assert c_login.state["phase"] == "failed" and c_login.state["message"], c_login.state
    a.wait_until(login, lambda state: state["phase"] == "loggedOut")  # signed out in another server
    assert login.state["user"] is None and login.state["message"], login.state
    for forged in ["", "sft_", "sft_" + "A" * 43, token + "x", "not a token", account.token]:
        refused(action(c, c_login, "resume", token=forged), "sessionInvalid")
    assert c_login.state["phase"] == "failed"


def test_signing_out_in_one_server_makes_every_other_one_a_guest(server, shop_file):
    a = server(shop_file)
    account = register_account(a)
    b = server(shop_file)
    resume_account(b, account)
    login_b = b.open("login")
    cart_a = open_settled(a, "cart")
    cart_b = open_settled(b, "cart")
    ok(action(a, cart_a, "add", productId="p-0001", quantity=1))
    b.wait_until(cart_b, lambda state: line_quantities(cart_b) == {"p-0001": 1})
    ok(action(a, a.open("login"), "logout"))
    b.wait_until(login_b, lambda state: state["phase"] == "loggedOut")
    assert login_b.state["user"] is None and login_b.state["message"], login_b.state
    b.wait_until(cart_b, lambda state: state["phase"] == "loaded" and state["lines"] == [])
    refused(action(b, cart_b, "checkout"), "signInRequired")


def test_a_session_signed_out_in_one_server_writes_nothing_through_another(server, shop_file):
    """Server B holds the session that server A signs out. B's next writes, sent as soon as A has answered,
    are refused (`signInRequired`) and store nothing for the account, whether or not B's change-log poll has
    read the sign-out by then: the store checks the session in each write's own transaction. Either way B is
    a guest once its first write is answered (a refusal moves it there as the poll would), so an add B accepts
    can only be a guest's own. Five rounds, so that the store's check is exercised however often the poll
    (or PostgreSQL's notification) comes first."""
    a = server(shop_file)
    account = register_account(a)
    login_a = a.open("login")
    cart_a = open_settled(a, "cart")
    b = server(shop_file)
    login_b = b.open("login")
    cart_b = open_settled(b, "cart")
    ok(action(a, cart_a, "add", productId="p-0001", quantity=1))
    token = account.token
    for _ in range(5):
        ok(action(b, login_b, "resume", token=token))
        b.wait_until(cart_b, lambda state: line_quantities(cart_b) == {"p-0001": 1})

        ok(action(a, login_a, "logout"))
        add = action(b, cart_b, "add", productId="p-0002", quantity=1)
        checkout = action(b, cart_b, "checkout")

        if "error" in add:
            refused(add, "signInRequired")
        else:  # B had read the sign-out first: a guest's add, to the guest's own new cart (emptied again, so
            # that the next sign-in's merge does not bring it to the account)
            assert ok(add) and login_b.state["phase"] == "loggedOut", (add, login_b.state)
            assert line_quantities(cart_b) == {"p-0002": 1}, cart_b.state
            ok(action(b, cart_b, "remove", productId="p-0002"))
        refused(checkout, "signInRequired")
        assert login_b.state["phase"] == "loggedOut" and login_b.state["user"] is None, login_b.state
        assert login_b.state["message"], login_b.state
        b.wait_until(cart_b, lambda state: state["phase"] == "loaded" and "p-0001" not in line_quantities(cart_b))

        # The account, as A sees it signed in again: its one line, and no order.
        token = ok(login_with(a, login_a, account.email, account.password))["token"]
        a.wait_until(cart_a, lambda state: state["phase"] == "loaded")
        assert line_quantities(cart_a) == {"p-0001": 1}, cart_a.state
        dashboard_a = open_settled(a, "dashboard")
        assert dashboard_a.state["recentOrders"]["items"] == [], dashboard_a.state["recentOrders"]
        a.close(dashboard_a)


def test_repeated_failures_lock_signing_in_for_that_email(server):
    mirrors = server()
    account = register_account(mirrors)
    login = mirrors.open("login")
    ok(action(mirrors, login, "logout"))
    reasons = [refused(login_with(mirrors, login, account.email, f"wrong-pass-{n}"))["data"]["reason"]
               for n in range(5)]
    assert reasons[:4] == ["invalidCredentials"] * 4, reasons
    assert reasons[4] in ("invalidCredentials", "signInLocked"), reasons
    # After 5 failures within 15 minutes even the right password is refused, and the state says until when.
    error = refused(login_with(mirrors, login, account.email, account.password), "signInLocked")
    details = error["data"]["details"]
    assert int(details["retryAfter"]) > 0 and details["lockedUntil"], error
    assert error["data"]["retryable"] is True
    assert login.state["phase"] == "failed" and login.state["lockedUntil"] == details["lockedUntil"], login.state
    # Another email is not locked.
    other = unique_email("other")
    refused(login_with(mirrors, login, other, "wrong-pass-1"), "invalidCredentials")
    mirrors.assert_in_sync(login)


# -- passwords never leave ------------------------------------------------------------------------


def test_a_password_never_appears_in_anything_the_server_writes(server, shop_file):
    passwords = ["Zq7registerSecret", "Zq7loginWrongSecret", "Zq7mismatchSecret", "Zq7profileSecret",
                 "Zq7" + "long" * 300]
    register_pw, wrong_pw, mismatch_pw, other_pw, long_pw = passwords
    a = server(shop_file, "--log-level", "trace")
    form = a.open("registration")
    email = unique_email("secret")
    fill_registration(a, form, email, register_pw, confirmation=mismatch_pw)
    a.wait_until(form, lambda state: not state["checking"])
    refused(action(a, form, "register"), "validationFailed")
    ok(action(a, form, "setField", field="confirmPassword", value=register_pw))
    account = signed_in(email, register_pw, ok(action(a, form, "register")))
    login = a.open("login")
    ok(action(a, login, "logout"))
    for password in (wrong_pw, long_pw, other_pw):
        refused(login_with(a, login, email, password))
    refused(login_with(a, login, unique_email(), wrong_pw))
    refused(login_with(a, login, register_pw, register_pw))  # typed into the email field
    # Wrong types and a body that is not JSON, both carrying a password.
    a.session.request("login/login", {"viewModel": login.handle, "email": email, "password": [register_pw]})
    a.session.request("login/login", {"viewModel": login.handle, "email": {"pw": register_pw}, "password": 5})
    a.session.send(b'{"jsonrpc":"2.0","id":"broken","method":"login/login","params":{"password":"'
                   + register_pw.encode() + b'"')
    read_parse_error(a.session)
    account = signed_in(email, register_pw, ok(login_with(a, login, email, register_pw)))
    b = server(shop_file, "--log-level", "trace")
    resume_account(b, account)
    for mirrors in (a, b):
        session = mirrors.session
        session.close_input()
        session.read_to_end()
        assert session.wait() == 0
        written = b"".join(session.stdout_bodies) + b"".join(session.stderr_lines)
        for password in passwords + [json.dumps(p)[1:-1] for p in passwords]:
            assert password.encode() not in written, f"a password appears in the server's output: {password[:20]}..."
        assert account.token.encode() not in b"".join(session.stderr_lines), "a session token appears in the log"


def read_parse_error(session: Session) -> None:
    """Reads up to the -32700 answer of a body that is not JSON (notifications on the way are applied)."""
    while True:
        value = session.read_value()
        if isinstance(value, dict) and "id" not in value:
            session._notify(value)
            continue
        assert_error(value, -32700, None)
        return


# -- each account's own data ---------------------------------------------------------------------


def test_each_account_sees_only_its_own_cart_favourites_and_orders(server, shop_file):
    alice = server(shop_file)
    register_account(alice, unique_email("alice"))
    bob = server(shop_file)
    register_account(bob, unique_email("bob"))

    cart_a = open_settled(alice, "cart")
    ok(action(alice, cart_a, "add", productId="p-0003", quantity=1))
    order = ok(action(alice, cart_a, "checkout"))["orderId"]
    ok(action(alice, cart_a, "add", productId="p-0001", quantity=2))
    detail_a = open_settled(alice, "productDetail", {"productId": "p-0002"})
    if detail_a.state["isFavorite"] is False:
        ok(action(alice, detail_a, "toggleFavorite"))
    assert detail_a.state["isFavorite"] is True

    cart_b = open_settled(bob, "cart")
    assert cart_b.state["lines"] == [], "bob sees alice's cart"
    detail_b = open_settled(bob, "productDetail", {"productId": "p-0002"})
    assert detail_b.state["isFavorite"] is False, "bob sees alice's favourite"
    dashboard_b = open_settled(bob, "dashboard")
    assert dashboard_b.state["recentOrders"]["phase"] == "loaded"
    assert order not in [item["id"] for item in dashboard_b.state["recentOrders"]["items"]]
    assert dashboard_b.state["recentOrders"]["items"] == []

    # Bob's changes stay bob's: alice's ViewModels, reloaded from the store, do not show them.
    ok(action(bob, cart_b, "add", productId="p-0004", quantity=1))
    ok(action(bob, detail_b, "toggleFavorite"))
    ok(action(bob, cart_b, "checkout"))
    ok(action(alice, cart_a, "refresh"))
    assert line_quantities(cart_a) == {"p-0001": 2}
    ok(action(alice, detail_a, "refresh"))
    assert detail_a.state["isFavorite"] is True
    ok(action(bob, detail_b, "toggleFavorite"))
    ok(action(alice, detail_a, "refresh"))
    assert detail_a.state["isFavorite"] is True, "bob's un-favouriting reached alice"
    dashboard_a = open_settled(alice, "dashboard")
    assert [item["id"] for item in dashboard_a.state["recentOrders"]["items"]] == [order]

    # A guest on the same file sees neither and may not check out or open a profile.
    guest = server(shop_file)
    cart_g = open_settled(guest, "cart")
    assert cart_g.state["lines"] == []
    assert open_settled(guest, "productDetail", {"productId": "p-0002"}).state["isFavorite"] is False
    ok(action(guest, cart_g, "add", productId="p-0005", quantity=1))
    refused(action(guest, cart_g, "checkout"), "signInRequired")
    assert line_quantities(cart_g) == {"p-0005": 1}, "a refused checkout leaves the cart"
    response = guest.session.request("viewModel/open", {"type": "profile"})
    assert refused(response, "signInRequired")
    dashboard_g = open_settled(guest, "dashboard")
    assert dashboard_g.state["recentOrders"]["phase"] == "failed", dashboard_g.state
    assert dashboard_g.state["recentOrders"]["items"] == []
    ok(action(alice, cart_a, "refresh"))
    assert line_quantities(cart_a) == {"p-0001": 2}


def test_signing_in_merges_the_guest_cart_capped_by_what_can_be_ordered(server, shop_file):
    a = server(shop_file)
    account = register_account(a)
    detail = open_settled(a, "productDetail", {"productId": "p-0001"})
    most = detail.state["maxQuantity"]
    assert most >= 1, detail.state
    cart = open_settled(a, "cart")
    ok(action(a, cart, "add", productId="p-0001", quantity=most))

    b = server(shop_file)
    guest_cart = open_settled(b, "cart")
    ok(action(b, guest_cart, "add", productId="p-0001", quantity=1))
    ok(action(b, guest_cart, "add", productId="p-0002", quantity=1))
    login = b.open("login")
    ok(login_with(b, login, account.email, account.password))
    b.wait_until(guest_cart, lambda state: state["phase"] == "loaded" and len(state["lines"]) == 2)
    assert line_quantities(guest_cart) == {"p-0001": most, "p-0002": 1}, guest_cart.state
    capped = [(line["productId"], line["kept"]) for line in login.state["cappedLines"]]
    assert capped == [("p-0001", most)], login.state
    notices = [(notice["productId"], notice["reason"]) for notice in guest_cart.state["notices"]]
    assert ("p-0001", "quantityCapped") in notices, guest_cart.state
    a.wait_until(cart, lambda state: line_quantities(cart) == {"p-0001": most, "p-0002": 1})


# -- bad input -----------------------------------------------------------------------------------

BAD_EMAILS = {
    "10000-characters": "x" * 9988 + "@example.com",
    "control-character": "sho\u0007pper@example.com",
    "newline-inside": "shop\nper@example.com",
    "sql-or": "x' OR '1'='1@example.com",
    "sql-drop": "x@example.com'; DROP TABLE accounts; --",
    "sql-comment": "admin@example.com'--",
    "json-in-string": '{"email":"a@b.cc"}',
    "json-injection": 'a@example.com","accountId":1,"x":"',
}


def assert_nothing_stored(mirrors: Mirrors, email: str) -> None:
    """A login with `email` is refused as unknown or invalid: no account was created for it."""
    login = mirrors.open("login")
    error = refused(login_with(mirrors, login, email, PASSWORD))
    assert error["data"]["reason"] in ("invalidCredentials", "validationFailed"), error
    mirrors.close(login)


@pytest.mark.parametrize("email", BAD_EMAILS.values(), ids=BAD_EMAILS.keys())
def test_a_bad_email_is_a_field_error_and_nothing_is_stored(server, email):
    mirrors = server()
    form = mirrors.open("registration")
    fill_registration(mirrors, form, email)
    mirrors.wait_until(form, lambda state: not state["checking"])
    assert isinstance(form.state["errors"].get("email"), str), f"{email[:40]!r} is not an address: {form.state['errors']}"
    assert form.state["isFormValid"] is False
    error = refused(action(mirrors, form, "register"), "validationFailed")
    assert "email" in error["data"]["details"], error
    assert form.state["signedIn"] is False
    assert mirrors.session.call("ping") == {}
    assert_nothing_stored(mirrors, email)


def test_a_password_holding_nul_is_taken_whole(server):
    # Text holding U+0000 is -32602 in params (the store would cut it), but a password is hashed from its exact
    # bytes and never stored as text: it is taken whole, and signs in only whole.
    mirrors = server()
    password = "Nul\u0000-password-9"
    account = register_account(mirrors, password=password)
    login = mirrors.open("login")
    ok(action(mirrors, login, "logout"))
    refused(login_with(mirrors, login, account.email, "Nul"), "invalidCredentials")
    ok(login_with(mirrors, login, account.email, password))
    assert login.state["user"] is not None, login.state
    response = action(mirrors, login, "login", email=account.email + "\u0000", password=password)
    assert response["error"]["code"] == -32602 and response["error"]["data"]["parameter"] == "email", response


BAD_PROFILE_FIELDS = [
    ("name", "n" * 10_000), ("name", "Bad\u0001Name"), ("name", "   "),
    ("bio", "b" * 10_000), ("bio", "bell\u0007"), ("email", "x" * 9988 + "@example.com"),
    ("email", "x' OR '1'='1@example.com"),
]


def test_bad_profile_fields_are_field_errors_and_nothing_is_stored(server, shop_file):
    a = server(shop_file)
    register_account(a)
    profile = open_settled(a, "profile")
    stored = copy.deepcopy(profile.state["fields"])
    for field, value in BAD_PROFILE_FIELDS:
        ok(action(a, profile, "setField", field=field, value=value))
        assert isinstance(profile.state["errors"].get(field), str), (field, value[:40], profile.state["errors"])
        assert profile.state["isValid"] is False
        error = refused(action(a, profile, "save"), "validationFailed")
        assert field in error["data"]["details"], error
        ok(action(a, profile, "discardChanges"))
        assert profile.state["fields"] == stored and profile.state["errors"] == {}
    ok(action(a, profile, "refresh"))
    assert profile.state["fields"] == stored, "a refused save stored something"


@pytest.mark.parametrize("b_shows_a_first", [False, True], ids=["b-saves-at-once", "b-shows-a-first"])
def test_a_profile_save_keeps_what_another_server_saved_in_the_fields_it_did_not_change(server, shop_file,
                                                                                        b_shows_a_first):
    """Two servers on one database, one account: A saves the bio and the notifications switch and is
    answered; B, whose user changed only the name, saves next. `save` stores only the fields whose draft
    differs from the stored profile (protocol/README.md), so B's save never undoes A's acknowledged one,
    whether B's screen already showed it (in the fields its user did not change) or not."""
    a = server(shop_file)
    account = register_account(a)
    b = server(shop_file)
    resume_account(b, account)
    profile_a = open_settled(a, "profile")
    profile_b = open_settled(b, "profile")
    ok(action(b, profile_b, "setField", field="name", value="Named On B"))
    ok(action(a, profile_a, "setField", field="bio", value="Saved on A."))
    ok(action(a, profile_a, "setNotificationsEnabled", enabled=not profile_a.state["fields"]["notificationsEnabled"]))
    both = dict(profile_a.state["fields"], name="Named On B")
    ok(action(a, profile_a, "save"))
    assert profile_a.state["savePhase"] == "succeeded", profile_a.state
    if b_shows_a_first:
        b.wait_until(profile_b, lambda state: state["fields"]["bio"] == "Saved on A.")
        assert profile_b.state["fields"] == both and profile_b.state["hasChanges"] is True, profile_b.state

    ok(action(b, profile_b, "save"))

    assert profile_b.state["fields"] == both and profile_b.state["hasChanges"] is False, profile_b.state
    a.wait_until(profile_a, lambda state: state["fields"] == both)
    for mirrors, mirror in ((a, profile_a), (b, profile_b)):
        mirrors.assert_in_sync(mirror)
    # What is stored: a fresh open on a third server, and a reload on the first.
    c = server(shop_file)
    resume_account(c, account)
    assert open_settled(c, "profile").state["fields"] == both
    ok(action(a, profile_a, "refresh"))
    assert profile_a.state["fields"] == both


INJECTED_TEXT = ["Robert'); DROP TABLE accounts;--", '{"name":"x","accountId":1}', "O'Brien \"Bob\" \\ %_ *"]


@pytest.mark.parametrize("text", INJECTED_TEXT, ids=["sql", "json", "quotes"])
def test_names_and_bios_that_look_like_code_are_stored_as_text(server, shop_file, text):
    """Such a name is a legal name: it is stored exactly as written (or refused as a field error), never
    interpreted; every account still works afterwards."""
    a = server(shop_file)
    account = register_account(a)
    profile = open_settled(a, "profile")
    ok(action(a, profile, "setField", field="name", value=text))
    ok(action(a, profile, "setField", field="bio", value=text))
    if profile.state["errors"]:
        refused(action(a, profile, "save"), "validationFailed")
    else:
        ok(action(a, profile, "save"))
        b = server(shop_file)
        resume_account(b, account)
        fields = open_settled(b, "profile").state["fields"]
        assert (fields["name"], fields["bio"]) == (text, text)
    register_account(server(shop_file))  # the store still works


def wrong_values(schema: dict) -> list:
    """Values of other JSON types than `schema` allows."""
    if "enum" in schema:
        return [5, True, None, [], {}, "no-such-" + str(schema["enum"][0])]
    kind = schema.get("type")
    if kind == "string":
        return [5, 1.5, True, None, [], {"a": 1}]
    if kind == "boolean":
        return ["true", 1, None, [], {}]
    if kind == "integer":
        return ["1", 1.5, True, None, []]
    return []


def valid_value(schema: dict):
    if "enum" in schema:
        return schema["enum"][0]
    return {"string": "someone@example.com", "boolean": True, "integer": 1}[schema["type"]]


def test_wrong_or_missing_params_of_every_account_action_are_32602(server, discover_document, contract):
    a = server()
    register_account(a)
    opened = {type_: open_settled(a, type_) if type_ == "profile" else a.open(type_) for type_ in ACCOUNT_TYPES}
    before = {type_: (mirror.version, copy.deepcopy(mirror.state)) for type_, mirror in opened.items()}
    methods = {method["name"]: method for method in discover_document["methods"]}
    tried = 0
    for type_ in ACCOUNT_TYPES:
        for name, params in contract.actions[type_].items():
            declared = {param["name"]: param for param in methods[f"{type_}/{name}"]["params"]
                        if param["name"] in params and param["name"] not in ("expectedVersion", "idempotencyKey")}
            valid = {key: valid_value(param["schema"]) for key, param in declared.items()}
            for key, param in declared.items():
                cases = [value for value in wrong_values(param["schema"])]
                for value in cases:
                    response = a.session.request(f"{type_}/{name}", {"viewModel": opened[type_].handle, **valid, key: value})
                    error = assert_error(response, -32602, response["id"])
                    assert error["data"]["parameter"] == key, (type_, name, key, value, error)
                    tried += 1
                if param.get("required"):
                    rest = {k: v for k, v in valid.items() if k != key}
                    response = a.session.request(f"{type_}/{name}", {"viewModel": opened[type_].handle, **rest})
                    error = assert_error(response, -32602, response["id"])
                    assert error["data"]["parameter"] == key, (type_, name, key, error)
                    tried += 1
    assert tried >= 20, tried
    for type_, mirror in opened.items():
        a.assert_in_sync(mirror)
        assert (mirror.version, mirror.state) == before[type_], f"{type_} changed after refused params"
    assert a.session.call("ping") == {}
