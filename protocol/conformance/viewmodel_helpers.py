"""Helpers for the ViewModel tests: when a state counts as loaded, and the strict ordering check."""

from __future__ import annotations

import copy
import itertools
import os
from dataclasses import dataclass
from typing import Any

from storefront_session import Mirror, Mirrors


def settled(type_: str, state: Any) -> bool:
    """Whether a ViewModel's initial load is over (loaded or failed)."""
    if type_ == "dashboard":
        return all(section["phase"] in ("loaded", "failed") for section in state.values())
    return state["phase"] in ("loaded", "failed")


def open_settled(mirrors: Mirrors, type_: str, args: dict | None = None) -> Mirror:
    mirror = mirrors.open(type_, args)
    mirrors.wait_until(mirror, lambda state: settled(type_, state))
    return mirror


def action(mirrors: Mirrors, mirror: Mirror, name: str, **args) -> dict:
    """Sends `<type>/<name>` and returns the whole response (notifications on the way are applied)."""
    return mirrors.session.request(f"{mirror.type}/{name}", {"viewModel": mirror.handle, **args})


def ok(response: dict) -> dict:
    assert "error" not in response, response["error"]
    result = response["result"]
    assert isinstance(result.get("version"), int), result
    return result


def refused(response: dict, reason: str | None = None, code: int = -32001) -> dict:
    assert "error" in response, f"expected a refusal, got {response!r}"
    error = response["error"]
    assert error["code"] == code, error
    data = error["data"]
    assert isinstance(data["reason"], str) and isinstance(data["retryable"], bool) and "details" in data, error
    if reason is not None:
        assert data["reason"] == reason, error
    return error


# -- accounts -------------------------------------------------------------------------------------

_emails = itertools.count(1)

#: The password the helpers register accounts with (8+ characters with a digit). Tests that scan the
#: server's output for passwords use their own.
PASSWORD = "conformance-pass-1"


def unique_email(tag: str = "shopper") -> str:
    """An address no other account of this test run has (a count, not randomness: a database file is
    shared only by the servers of one test, and the pid keeps concurrent runs apart)."""
    return f"{tag}-{os.getpid()}-{next(_emails)}@example.com"


@dataclass(frozen=True)
class SignedIn:
    """A session signed into an account: what `registration/register` or `login/*` answered."""

    email: str
    password: str
    token: str
    account_id: int
    result: dict


def signed_in(email: str, password: str, result: dict) -> SignedIn:
    assert isinstance(result.get("token"), str) and result["token"], result
    assert isinstance(result.get("expiresAt"), str), result
    assert isinstance(result.get("accountId"), int), result
    return SignedIn(email, password, result["token"], result["accountId"], result)


def register_account(mirrors: Mirrors, email: str | None = None, password: str = PASSWORD) -> SignedIn:
    """Signs the session into a new account through a `registration` ViewModel (closed afterwards)."""
    email = email or unique_email()
    form = mirrors.open("registration")
    for field, value in [("email", email), ("password", password), ("confirmPassword", password)]:
        ok(action(mirrors, form, "setField", field=field, value=value))
    ok(action(mirrors, form, "setAcceptedTerms", accepted=True))
    result = ok(action(mirrors, form, "register"))
    assert form.state["signedIn"] is True and form.state["submitPhase"] == "succeeded", form.state
    mirrors.close(form)
    return signed_in(email, password, result)


def resume_account(mirrors: Mirrors, account: SignedIn) -> SignedIn:
    """Signs the session into `account` with its token (another server on the same file, typically)."""
    login = mirrors.open("login")
    result = ok(action(mirrors, login, "resume", token=account.token))
    assert login.state["phase"] == "loggedIn" and login.state["user"]["id"] == account.account_id, login.state
    assert result["accountId"] == account.account_id, result
    mirrors.close(login)
    return signed_in(account.email, account.password, result)


def servers_of_one_account(spawn, database: str, count: int = 2) -> list[Mirrors]:
    """`count` servers on `database`, initialized, each a session signed into one new account (the first
    registers it, the others resume its token)."""
    servers = []
    account = None
    for _ in range(count):
        session = spawn("--database", database)
        session.initialize()
        mirrors = Mirrors(session)
        account = resume_account(mirrors, account) if account else register_account(mirrors)
        servers.append(mirrors)
    return servers


class Checkpoint:
    """The mirrors as they stand when a response arrives, to check the ordering guarantee.

    Afterwards :meth:`verify` calls `viewModel/get` on each: a ViewModel that got no notification since
    the checkpoint must equal its checkpoint exactly (the client had the state when it had the response);
    one that did (a timer, a debounce: not caused by the action) must equal its updated mirror.
    """

    def __init__(self, mirrors: Mirrors):
        self.mirrors = mirrors
        self.seen = len(mirrors.session.notifications)
        self.states = {handle: (m.version, copy.deepcopy(m.state)) for handle, m in mirrors.by_handle.items()}

    def verify(self) -> None:
        for handle, mirror in list(self.mirrors.by_handle.items()):
            if handle not in self.states:
                continue
            current = self.mirrors.get(mirror)
            later = [n for n in self.mirrors.session.notifications[self.seen:]
                     if n.get("method") == "viewModel/changed" and n["params"]["viewModel"] == handle]
            if not later:
                version, state = self.states[handle]
                assert (current["version"], current["state"]) == (version, state), (
                    f"{handle} ({mirror.type}) changed without a notification before the response: "
                    f"the ordering guarantee is broken")
            assert current["version"] == mirror.version, (handle, current["version"], mirror.version)
            assert current["state"] == mirror.state, f"{handle} ({mirror.type}): mirror differs from viewModel/get"
