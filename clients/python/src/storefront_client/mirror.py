"""A live copy of one open ViewModel's state, kept current from `viewModel/changed` notifications."""

from __future__ import annotations

import asyncio
import copy
from typing import TYPE_CHECKING, Any, Callable

import jsonpatch

if TYPE_CHECKING:
    from .client import Client


class Mirror:
    """What the client knows of one open ViewModel.

    ``state`` and ``version`` follow the server: each notification's patch (or snapshot) is applied in
    order. A gap in the versions (or a patch that does not apply) makes the mirror resync with
    `viewModel/get`, buffering the notifications that arrive meanwhile. Because the server writes an
    action's notifications before its response, the mirror is current as soon as an action call returns.
    """

    def __init__(self, client: Client, handle: str, type_: str, version: int, state: Any):
        self.client = client
        self.handle = handle
        self.type = type_
        self.version = version
        self.state = state
        self.closed = False
        #: How many times a gap made the mirror resync.
        self.resyncs = 0
        self._changed = asyncio.Event()
        self._resyncing = False
        self._buffer: list[dict] = []

    def __repr__(self) -> str:
        return f"<Mirror {self.handle} {self.type} v{self.version}>"

    # -- what callers use ------------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[Any], bool], timeout: float | None = 30.0) -> Any:
        """Waits until `predicate(state)` holds and returns that state.

        Raises:
            TimeoutError: when it does not hold within `timeout` seconds.
            ConnectionClosed: when the server goes away first.
        """
        async def wait() -> Any:
            while not predicate(self.state):
                self.client._raise_if_closed()
                event = self._changed
                await event.wait()
            return self.state
        return await asyncio.wait_for(wait(), timeout)

    async def action(self, name: str, *, idempotency_key: str | None = None, expected_version: int | None = None,
                     timeout: float | None = None, retries: int | None = None, **args: Any) -> dict:
        """Runs `<type>/<name>` on this ViewModel with `args` as its params (named as the protocol names
        them: `productId=...`); returns the result (`{version, ...}`). The keyword arguments are
        :meth:`Client.action`'s: a storing action gets an idempotency key and is resent after a timeout."""
        return await self.client.action(self, name, args, idempotency_key=idempotency_key,
                                        expected_version=expected_version, timeout=timeout, retries=retries)

    async def refresh(self) -> None:
        """Replaces the state with `viewModel/get`'s answer (what a gap triggers on its own)."""
        await self._resync()

    async def close(self) -> None:
        """Closes the ViewModel on the server (`viewModel/close`); the mirror stops updating."""
        await self.client.close_view_model(self.handle)

    # -- fed by the client -----------------------------------------------------------------------

    def _receive(self, params: dict) -> None:
        if self.closed:
            return
        if self._resyncing:
            self._buffer.append(params)
            return
        version = params["version"]
        if version <= self.version:
            return  # already part of the state we have (replayed after a resync)
        if version != self.version + 1 or not self._apply(params):
            self._buffer.append(params)
            self._start_resync()

    def _apply(self, params: dict) -> bool:
        try:
            if "state" in params:
                state = copy.deepcopy(params["state"])
            else:
                state = jsonpatch.apply_patch(self.state, params["patch"], in_place=False)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, TypeError):
            return False
        self.state = state
        self.version = params["version"]
        self._signal()
        return True

    def _signal(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def _start_resync(self) -> None:
        self._resyncing = True
        self.resyncs += 1
        self.client._spawn(self._resync())

    async def _resync(self) -> None:
        self._resyncing = True
        try:
            current = await self.client.get(self.handle)
        except Exception:
            self._resyncing = False
            raise
        self.state = current["state"]
        self.version = current["version"]
        self._resyncing = False
        buffered, self._buffer = self._buffer, []
        self._signal()
        for params in buffered:
            self._receive(params)

    def _mark_closed(self) -> None:
        self.closed = True
        self._signal()
