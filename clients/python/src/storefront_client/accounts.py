"""Signing up, in and out, and the profile: the `registration`, `login` and `profile` ViewModels as calls.

Every server process is one session. It starts as a guest (a cart and favourites of its own); signing in
(register, login, resume) moves the guest's cart and favourites into the account, and every open ViewModel
then shows the account's. A sign-in answers a token: keep it (:func:`write_token`) and hand it to
:meth:`AccountCalls.resume` in a later process, on the same database, to be signed in again without the
password. Passwords are sent once, in the request, and never kept.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from .errors import StorefrontError
from .token_file import read_token, remove_token, write_token

if TYPE_CHECKING:
    from .mirror import Mirror

ProfileField = Literal["name", "email", "bio"]


class AccountCalls:
    """The account methods of :class:`~storefront_client.Client` (a mixin: it uses `open` and `action`)."""

    _login_mirror: Mirror | None = None

    async def login_view(self) -> Mirror:
        """The session's `login` ViewModel (opened on first use, then kept): `phase` (`loggedOut`,
        `loggingIn`, `loggedIn`, `failed`), `user`, `message`, `lockedUntil`, `cappedLines`."""
        if self._login_mirror is None or self._login_mirror.closed:
            self._login_mirror = await self.open("login")  # type: ignore[attr-defined]
        return self._login_mirror

    async def register(self, email: str, password: str, *, accept_terms: bool = True,
                       token_file: str | os.PathLike[str] | None = None) -> dict:
        """Creates an account and signs this session in (the guest cart moves to it).

        Opens a `registration` ViewModel, sets the email, the password (twice) and the terms, registers
        and closes it. Returns `{version, token, expiresAt, accountId}`; with `token_file`, keeps the token
        there (0600).

        Raises:
            StorefrontError: `validationFailed` (`.details` by field), `emailTaken`, `alreadySignedIn`.
        """
        form = await self.open("registration")  # type: ignore[attr-defined]
        try:
            await form.action("setField", field="email", value=email)
            await form.action("setField", field="password", value=password)
            await form.action("setField", field="confirmPassword", value=password)
            await form.action("setAcceptedTerms", accepted=accept_terms)
            result = await form.action("register")
        finally:
            await form.close()
        self._keep(result, token_file)
        return result

    async def login(self, email: str, password: str, *, token_file: str | os.PathLike[str] | None = None) -> dict:
        """Signs in; returns `{version, token, expiresAt, accountId}` and keeps the token in `token_file`.

        Raises:
            StorefrontError: `invalidCredentials` (never says which part was wrong), `signInLocked`
                (`.details["retryAfter"]` seconds), `alreadySignedIn`.
        """
        login = await self.login_view()
        result = await login.action("login", email=email, password=password)
        self._keep(result, token_file)
        return result

    async def resume(self, token: str) -> dict:
        """Signs in with a token kept from an earlier sign-in (any server process on the same database).

        Raises:
            StorefrontError: `sessionInvalid` for a malformed, unknown, expired or signed-out token.
        """
        login = await self.login_view()
        return await login.action("resume", token=token)

    async def resume_from(self, token_file: str | os.PathLike[str]) -> dict | None:
        """Resumes the session whose token `token_file` keeps. Returns the sign-in result, or `None` when
        the file holds no token, or held one the server no longer accepts (`sessionInvalid`: the file is
        then removed, so the next start does not try it again)."""
        token = read_token(token_file)
        if token is None:
            return None
        try:
            return await self.resume(token)
        except StorefrontError as error:
            if error.reason != "sessionInvalid":
                raise
            remove_token(token_file)
            return None

    async def logout(self, *, token_file: str | os.PathLike[str] | None = None) -> dict:
        """Signs out: the token stops working everywhere (every server holding it becomes a guest) and this
        session becomes a fresh guest. Removes `token_file`."""
        login = await self.login_view()
        result = await login.action("logout")
        if token_file is not None:
            remove_token(token_file)
        return result

    async def open_profile(self) -> Mirror:
        """Opens the signed-in account's `profile` and waits for its first load.

        Raises:
            StorefrontError: `signInRequired` when this session is a guest.
        """
        profile = await self.open("profile")  # type: ignore[attr-defined]
        await profile.wait_for(lambda state: state["phase"] != "loading")
        return profile

    async def profile_set_field(self, profile: Mirror, field: ProfileField, value: str, *,
                                expected_version: int | None = None) -> dict:
        """Sets name, email or bio in the draft (`errors`, `isValid` and `hasChanges` follow)."""
        return await profile.action("setField", field=field, value=value, expected_version=expected_version)

    async def profile_set_notifications_enabled(self, profile: Mirror, enabled: bool, *,
                                                expected_version: int | None = None) -> dict:
        return await profile.action("setNotificationsEnabled", enabled=enabled, expected_version=expected_version)

    async def profile_discard_changes(self, profile: Mirror, *, expected_version: int | None = None) -> dict:
        return await profile.action("discardChanges", expected_version=expected_version)

    async def profile_save(self, profile: Mirror, *, idempotency_key: str | None = None,
                           expected_version: int | None = None, timeout: float | None = None,
                           retries: int | None = None) -> dict:
        """Stores the draft (stores; see `Client.action`). Refused `validationFailed` while invalid."""
        return await profile.action("save", idempotency_key=idempotency_key, expected_version=expected_version,
                                    timeout=timeout, retries=retries)

    async def profile_refresh(self, profile: Mirror, *, expected_version: int | None = None) -> dict:
        return await profile.action("refresh", expected_version=expected_version)

    @staticmethod
    def _keep(result: Any, token_file: str | os.PathLike[str] | None) -> None:
        if token_file is not None and isinstance(result, dict) and result.get("token"):
            write_token(token_file, result["token"])
