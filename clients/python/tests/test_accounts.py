"""Signing up, in and out, resuming with a kept token, the profile, and the command line, on the real server."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from conftest import PASSWORD
from storefront_client import Client, StorefrontError, read_token


def settled(state) -> bool:
    return state["phase"] not in ("loading",)


def lines(cart) -> dict[str, int]:
    return {line["productId"]: line["quantity"] for line in cart.state["lines"]}


async def test_register_signs_in_keeps_the_token_0600_and_a_new_server_resumes_it(binary, tmp_path):
    database, token_file = str(tmp_path / "shop.sqlite"), tmp_path / "keep" / "token"
    async with await Client.start(binary, database=database) as first:
        cart = await first.open("cart")
        await cart.wait_for(settled)
        await first.cart_add(cart, "p-0001", 2)  # as a guest: moves into the account
        result = await first.register("ann@example.com", PASSWORD, token_file=token_file)
        assert set(result) == {"version", "token", "expiresAt", "accountId"}
        login = await first.login_view()
        assert login.state["phase"] == "loggedIn" and login.state["user"]["email"] == "ann@example.com"
        assert lines(cart) == {"p-0001": 2}
    assert read_token(token_file) == result["token"]
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert PASSWORD not in token_file.read_text()

    async with await Client.start(binary, database=database) as second:
        resumed = await second.resume_from(token_file)
        assert resumed is not None and resumed["accountId"] == result["accountId"]
        cart = await second.open("cart")
        await cart.wait_for(lambda state: state["phase"] == "loaded")
        assert lines(cart) == {"p-0001": 2}, "the account's cart, in a new server"


async def test_wrong_credentials_and_bad_tokens_are_refused(binary, tmp_path):
    token_file = tmp_path / "token"
    async with await Client.start(binary, database=":memory:") as client:
        await client.register("bob@example.com", PASSWORD)
        await client.logout()
        with pytest.raises(StorefrontError) as caught:
            await client.login("bob@example.com", "wrong password 1")
        assert caught.value.reason == "invalidCredentials"
        with pytest.raises(StorefrontError) as caught:
            await client.resume("sft_forged")
        assert caught.value.reason == "sessionInvalid"
        token_file.write_text("sft_not-a-real-token\n")
        assert await client.resume_from(token_file) is None
        assert not token_file.exists(), "a token the server refuses is dropped"
        assert await client.resume_from(token_file) is None, "no file: a guest"
        result = await client.login("bob@example.com", PASSWORD, token_file=token_file)
        assert read_token(token_file) == result["token"]


async def test_registration_refusals_name_their_reason(binary):
    async with await Client.start(binary, database=":memory:") as client:
        with pytest.raises(StorefrontError) as caught:
            await client.register("not an address", "short")
        assert caught.value.reason == "validationFailed"
        assert {"email", "password"} <= set(caught.value.details)
        await client.register("cy@example.com", PASSWORD)
        with pytest.raises(StorefrontError) as caught:
            await client.register("dee@example.com", PASSWORD)
        assert caught.value.reason == "alreadySignedIn"
        await client.logout()
        with pytest.raises(StorefrontError) as caught:
            await client.register("cy@example.com", PASSWORD)
        assert caught.value.reason == "emailTaken"


async def test_logout_in_one_server_makes_every_session_of_the_token_a_guest(binary, tmp_path):
    database, token_file = str(tmp_path / "shop.sqlite"), tmp_path / "token"
    async with await Client.start(binary, database=database) as first, \
            await Client.start(binary, database=database) as second:
        await first.register("eve@example.com", PASSWORD, token_file=token_file)
        await second.resume_from(token_file)
        cart = await second.open("cart")
        await cart.wait_for(lambda state: state["phase"] == "loaded")
        await second.cart_add(cart, "p-0002", 1)
        await first.logout(token_file=token_file)
        assert not token_file.exists()
        login = await second.login_view()
        state = await login.wait_for(lambda state: state["phase"] == "loggedOut", timeout=60)
        assert state["message"] == "You were signed out in another window."
        await cart.wait_for(lambda state: state["lines"] == [], timeout=60)
        with pytest.raises(StorefrontError) as caught:
            await second.cart_checkout(cart)
        assert caught.value.reason == "signInRequired"


async def test_signing_in_caps_merged_lines_and_says_so(binary, tmp_path):
    database = str(tmp_path / "shop.sqlite")
    async with await Client.start(binary, database=database) as first, \
            await Client.start(binary, database=database) as second:
        token = (await first.register("fay@example.com", PASSWORD))["token"]
        cart = await first.open("cart")
        await cart.wait_for(settled)
        await first.cart_add(cart, "p-0001", 4)  # at most 5 per order
        guest_cart = await second.open("cart")
        await guest_cart.wait_for(settled)
        await second.cart_add(guest_cart, "p-0001", 4)
        await second.resume(token)
        assert lines(guest_cart) == {"p-0001": 5}
        assert (await second.login_view()).state["cappedLines"] == [
            {"productId": "p-0001", "name": "Cozy Wool Board Game", "requested": 8, "kept": 5}]
        assert [notice["reason"] for notice in guest_cart.state["notices"]] == ["quantityCapped"]


async def test_profile_get_and_save(binary):
    async with await Client.start(binary, database=":memory:") as client:
        with pytest.raises(StorefrontError) as caught:
            await client.open("profile")
        assert caught.value.reason == "signInRequired"
        await client.register("gus@example.com", PASSWORD)
        profile = await client.open_profile()
        assert profile.state["phase"] == "loaded" and profile.state["fields"]["email"] == "gus@example.com"
        await client.profile_set_field(profile, "name", "Gus")
        await client.profile_set_field(profile, "bio", "Kettles, mostly.")
        await client.profile_set_notifications_enabled(profile, False)
        assert profile.state["hasChanges"] is True
        result = await client.profile_save(profile)
        assert "version" in result
        assert profile.state["fields"] == {"name": "Gus", "email": "gus@example.com", "bio": "Kettles, mostly.",
                                           "notificationsEnabled": False}
        assert profile.state["hasChanges"] is False
        login = await client.login_view()
        await login.wait_for(lambda state: state["user"]["name"] == "Gus", timeout=60)
        await client.profile_set_field(profile, "bio", "x" * 501)
        assert profile.state["isValid"] is False and "bio" in profile.state["errors"]
        with pytest.raises(StorefrontError) as caught:
            await client.profile_save(profile)
        assert caught.value.reason == "validationFailed"
        await client.profile_discard_changes(profile)
        assert profile.state["fields"]["bio"] == "Kettles, mostly."


def cli(binary, database, token_file, *args, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "storefront_client", "--server", binary, "--database", database,
         "--token-file", str(token_file), *args],
        input=stdin, capture_output=True, text=True, timeout=120)


def test_the_command_line_keeps_the_session_between_runs(binary, tmp_path):
    database, token_file = str(tmp_path / "shop.sqlite"), tmp_path / "token"
    run = cli(binary, database, token_file, "register", "hal@example.com", stdin=PASSWORD + "\n")
    assert run.returncode == 0, run.stderr
    assert "signed in as hal@example.com" in run.stdout
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert PASSWORD not in run.stdout + run.stderr

    assert "signed in as hal@example.com" in cli(binary, database, token_file, "whoami").stdout
    assert cli(binary, database, token_file, "add", "p-0003", "2").returncode == 0
    assert "p-0003  Smart Linen Keyboard  2 x 285.99 = 571.98" in cli(binary, database, token_file, "cart").stdout
    run = cli(binary, database, token_file, "profile-set", "name", "Hal")
    assert run.returncode == 0 and '"name": "Hal"' in run.stdout
    assert '"bio": ""' in cli(binary, database, token_file, "profile").stdout
    run = cli(binary, database, token_file, "checkout")
    assert run.returncode == 0 and run.stdout.startswith("order o-")

    assert cli(binary, database, token_file, "logout").stdout == "signed out\n"
    assert not token_file.exists()
    run = cli(binary, database, token_file, "profile")
    assert run.returncode == 1 and "[signInRequired]" in run.stderr
    run = cli(binary, database, token_file, "login", "hal@example.com", stdin="wrong password 1\n")
    assert run.returncode == 1 and "[invalidCredentials]" in run.stderr and not token_file.exists()
    run = cli(binary, database, token_file, "login", "hal@example.com", stdin=PASSWORD + "\n")
    assert run.returncode == 0 and "signed in as hal@example.com (Hal," in run.stdout
    assert os.access(token_file, os.R_OK)
