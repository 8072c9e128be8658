"""The asyncio client: spawns `storefront serve`, speaks newline-delimited JSON-RPC 2.0 over its pipes."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import uuid
from typing import Any, Awaitable, Literal, Sequence

from .accounts import AccountCalls
from .errors import ConnectionClosed, RequestTimeout, StorefrontError
from .live import LiveCalls
from .mirror import Mirror

ViewModelType = Literal["catalog", "productDetail", "productForm", "cart", "dashboard", "registration", "login",
                        "profile", "notifications", "priceTicker"]
Sort = Literal["name", "price", "newest"]
Section = Literal["featured", "categories", "recentOrders", "recommended", "trending"]
FormField = Literal["name", "description", "price", "category", "stock"]

#: Largest line read from the server (its default message limit is 16 MiB).
_LINE_LIMIT = 64 * 1024 * 1024

#: The actions that store a change, per ViewModel type: the ones that take an `idempotencyKey` (the server's
#: `rpc.discover` says the same; a test keeps the two equal). The client gives each call a new key unless
#: the caller passes one, so that a resend is never applied twice.
STORING_ACTIONS: dict[str, frozenset[str]] = {
    "cart": frozenset({"add", "setQuantity", "remove", "clear", "checkout"}),
    "productDetail": frozenset({"addToCart", "toggleFavorite"}),
    "productForm": frozenset({"submit"}),
    "catalog": frozenset({"deleteSelected"}),
    "profile": frozenset({"save"}),
}

#: How many times a storing action is resent after a timeout, unless the call says otherwise.
DEFAULT_RETRIES = 3


class Client(AccountCalls, LiveCalls):
    """One `storefront serve` process and the session with it (a guest until it signs in: see
    :class:`~storefront_client.accounts.AccountCalls` for register, login, resume, logout and the profile,
    and :class:`~storefront_client.live.LiveCalls` for the inbox, the price ticker, product edits and
    trending).

    Use :meth:`start` (or ``async with await Client.start(...)``); :meth:`close` shuts the server down and
    reaps the process, killing it after a grace period if it does not exit.
    """

    def __init__(self, process: asyncio.subprocess.Process, *, grace_period: float = 5.0):
        self.process = process
        self.grace_period = grace_period
        self.initialize_result: dict | None = None
        self._ids = itertools.count(1)
        #: How many times a storing action was resent after a timeout (with the same idempotency key).
        self.resends = 0
        self._pending: dict[int, asyncio.Future] = {}
        self._mirrors: dict[str, Mirror] = {}
        self._early: dict[str, list[dict]] = {}
        self._tasks: set[asyncio.Task] = set()
        self._closed = False
        self._write_lock = asyncio.Lock()
        self._reader = asyncio.create_task(self._read_loop())

    # -- starting and stopping -------------------------------------------------------------------

    @classmethod
    async def start(
        cls,
        binary: str | os.PathLike[str] | None = None,
        *,
        database: str | None = None,
        extra_args: Sequence[str] = (),
        state_updates: Literal["patch", "snapshot"] = "patch",
        client_name: str = "storefront-client-python",
        grace_period: float = 5.0,
        stderr: int | None = asyncio.subprocess.DEVNULL,
    ) -> Client:
        """Spawns `<binary> serve --framing ndjson` and initializes the session.

        Args:
            binary: path of the `storefront` executable; default `$STOREFRONT_BIN`, else `storefront`
                on `PATH`.
            database: `--database` (e.g. `":memory:"` for a private shop); default the server's.
            extra_args: more `serve` arguments, e.g. `["--faults", "cart:failure-rate=0.5"]`.
            state_updates: the `stateUpdates` capability: `"patch"` or `"snapshot"`.
            client_name: `clientInfo.name`.
            grace_period: seconds :meth:`close` waits for the process before killing it.
            stderr: where the server's log goes (default: discarded; `None` inherits ours).

        Raises:
            StorefrontError: if `initialize` is refused.
        """
        binary = binary or os.environ.get("STOREFRONT_BIN") or "storefront"
        argv = [os.fspath(binary), "serve", "--framing", "ndjson"]
        if database is not None:
            argv += ["--database", database]
        argv += list(extra_args)
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, limit=_LINE_LIMIT)
        client = cls(process, grace_period=grace_period)
        try:
            client.initialize_result = await client.initialize(
                client_name=client_name, capabilities={"stateUpdates": state_updates})
        except BaseException:
            await client.close()
            raise
        return client

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> int | None:
        """Ends the session: `shutdown` and `exit` if the server still runs, then reaps the process
        (SIGKILL after ``grace_period`` seconds). Returns the exit code. Safe to call twice."""
        if self.process.returncode is None and not self._closed:
            try:
                await asyncio.wait_for(self.request("shutdown"), self.grace_period)
                await self.notify("exit")
            except (StorefrontError, ConnectionClosed, asyncio.TimeoutError, OSError):
                pass
        self._closed = True
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), self.grace_period)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
        self._reader.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(self._reader, *self._tasks, return_exceptions=True)
        self._fail_pending()
        return self.process.returncode

    # -- JSON-RPC --------------------------------------------------------------------------------

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Sends a request and returns its result.

        Args:
            timeout: seconds to wait for the answer (default: as long as it takes). After it the request is
                given up: its answer, should it come, is dropped. The server is not asked to cancel it (see
                :meth:`action` for resending a storing action safely).

        Raises:
            StorefrontError: the server answered an error.
            ConnectionClosed: the server went away first.
            RequestTimeout: no answer within `timeout`.
        """
        return await self._attempt(method, params, timeout, sent=[])

    async def _attempt(self, method: str, params: Any, timeout: float | None, sent: list[int]) -> Any:
        """One request; its id is appended to `sent` once written."""
        self._raise_if_closed()
        request_id = next(self._ids)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._write(message)
            sent.append(request_id)
            if timeout is None:
                return await future
            try:
                return await asyncio.wait_for(future, timeout)
            except asyncio.TimeoutError:
                raise RequestTimeout(method, timeout, attempts=1) from None
        except asyncio.CancelledError:
            # Tell the server too, so a long action stops; its -32800 answer is then ignored.
            if self._pending.pop(request_id, None) is not None and not self._closed:
                self._spawn(self.notify("$/cancelRequest", {"id": request_id}))
            raise
        finally:
            self._pending.pop(request_id, None)

    async def action(
        self, view_model: Mirror, name: str, args: dict[str, Any] | None = None, *,
        idempotency_key: str | None = None, expected_version: int | None = None,
        timeout: float | None = None, retries: int | None = None,
    ) -> dict:
        """Runs the action `<type>/<name>` on `view_model`; returns its result (`{version, ...}`).

        A storing action (:data:`STORING_ACTIONS`) carries an `idempotencyKey`: `idempotency_key`, else a new
        one (a UUID). With a `timeout`, an attempt not answered within it is given up and the same request is
        sent again with the same key and a new id, up to `retries` times: the server applies a key once, and
        answers a resend of a change it already stored from its record, `{"version": ..., "replayed": True,
        ...}` (for a checkout, with the same `orderId`), which counts as success. Attempts given up are not
        cancelled: a cancel could stop a change the server was about to store, and a server slower than the
        timeout would then never store it.

        Args:
            view_model: the open ViewModel.
            name: the action, e.g. `"add"`.
            args: the action's params besides `viewModel`, as the protocol names them (`productId`, ...).
            idempotency_key: the key of a storing action (at most 128 characters), e.g. the key of a call
                that raised :class:`RequestTimeout` or :class:`ConnectionClosed`, to learn what became of it.
            expected_version: the ViewModel version the caller acted on; a ViewModel that moved on refuses
                with -32004 (:attr:`StorefrontError.current_version`) and nothing changes.
            timeout: seconds each attempt waits for its answer (default: as long as it takes). An action that
                stores nothing is not resent (a second toggle would undo the first).
            retries: resends of a storing action after a timeout (default :data:`DEFAULT_RETRIES`).

        Raises:
            StorefrontError: the server refused the action (e.g. `idempotencyKeyReused`: the key was used
                for other params) or could not perform it.
            RequestTimeout: no attempt was answered in time (`idempotency_key` tells the key).
            ConnectionClosed: the server went away first (`idempotency_key` tells the key).
            ValueError: an `idempotency_key` for an action that stores nothing.
        """
        method = f"{view_model.type}/{name}"
        params: dict[str, Any] = {"viewModel": view_model.handle, **(args or {})}
        if expected_version is not None:
            params["expectedVersion"] = expected_version
        if name not in STORING_ACTIONS.get(view_model.type, ()):
            if idempotency_key is not None:
                raise ValueError(f"{method} stores nothing: it takes no idempotency key")
            return await self.request(method, params, timeout=timeout)
        key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
        params["idempotencyKey"] = key
        retries = DEFAULT_RETRIES if retries is None else retries
        sent: list[int] = []
        given_up: list[int] = []
        try:
            while True:
                try:
                    return await self._attempt(method, params, timeout, sent)
                except RequestTimeout:
                    given_up.append(sent[-1])
                    if len(sent) > retries:
                        raise RequestTimeout(method, timeout, len(sent), key) from None
                    self.resends += 1
        except StorefrontError as error:
            error.attempts = len(sent)
            raise
        except ConnectionClosed as error:
            error.idempotency_key = key
            raise
        except asyncio.CancelledError:
            # _attempt cancels the attempt it was waiting for; the ones given up earlier may still run.
            if not self._closed:
                for request_id in given_up:
                    self._spawn(self.notify("$/cancelRequest", {"id": request_id}))
            raise

    async def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (never answered)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def _write(self, message: Any) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            raise ConnectionClosed("the server's input is closed")
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        async with self._write_lock:
            try:
                stdin.write(line)
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                raise ConnectionClosed("the server's input is closed") from error

    async def _read_loop(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    break
                if not line.strip():
                    continue
                self._dispatch(json.loads(line))
        finally:
            self._closed = True
            self._fail_pending()
            for mirror in self._mirrors.values():
                mirror._mark_closed()

    def _dispatch(self, message: Any) -> None:
        if isinstance(message, list):  # a batch answer (this client sends none, but be lenient)
            for element in message:
                self._dispatch(element)
            return
        if not isinstance(message, dict):
            return
        if "method" in message and "id" not in message:
            if message["method"] == "viewModel/changed":
                params = message.get("params") or {}
                mirror = self._mirrors.get(params.get("viewModel"))
                if mirror is not None:
                    mirror._receive(params)
                else:  # before its open's answer was taken up: replayed by open()
                    self._early.setdefault(params.get("viewModel"), []).append(params)
            return
        future = self._pending.pop(message.get("id"), None)
        if future is None or future.done():
            return
        if "error" in message:
            error = message["error"]
            future.set_exception(StorefrontError(error.get("code", 0), error.get("message", ""), error.get("data")))
        else:
            future.set_result(message.get("result"))

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the server closed the connection"))
        self._pending.clear()

    def _raise_if_closed(self) -> None:
        if self._closed:
            raise ConnectionClosed("the client is closed")

    def _spawn(self, coroutine: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- lifecycle methods -----------------------------------------------------------------------

    async def initialize(self, *, client_name: str = "storefront-client-python",
                         capabilities: dict | None = None) -> dict:
        """`initialize`, then the `initialized` notification; returns the server's result."""
        result = await self.request("initialize", {"clientInfo": {"name": client_name, "version": "0.1.0"},
                                                   "capabilities": capabilities or {}})
        await self.notify("initialized", {})
        return result

    async def ping(self) -> dict:
        """`ping`: `{}`."""
        return await self.request("ping")

    async def discover(self) -> dict:
        """`rpc.discover`: the OpenRPC document."""
        return await self.request("rpc.discover")

    async def shutdown(self) -> None:
        """`shutdown`: waits for requests in flight; afterwards only `exit` (see :meth:`close`)."""
        await self.request("shutdown")

    # -- ViewModels ------------------------------------------------------------------------------

    async def open(self, type: ViewModelType, **args: Any) -> Mirror:
        """`viewModel/open`: opens a ViewModel and returns its live :class:`Mirror`.

        Args:
            type: `catalog`, `productDetail` (`productId=...`), `productForm` (`productId=...`: edit mode),
                `cart`, `dashboard`, `registration`, `login`, `profile` or `notifications` (both refused
                `signInRequired` for a guest), `priceTicker` (`productId=...`).
            args: the open `args`.
        """
        params: dict[str, Any] = {"type": type}
        if args:
            params["args"] = args
        result = await self.request("viewModel/open", params)
        mirror = Mirror(self, result["viewModel"], type, result["version"], result["state"])
        self._mirrors[mirror.handle] = mirror
        for early in self._early.pop(mirror.handle, []):
            mirror._receive(early)
        return mirror

    async def get(self, handle: str) -> dict:
        """`viewModel/get`: `{viewModel, version, state}`."""
        return await self.request("viewModel/get", {"viewModel": handle})

    async def close_view_model(self, handle: str) -> None:
        """`viewModel/close`."""
        await self.request("viewModel/close", {"viewModel": handle})
        mirror = self._mirrors.pop(handle, None)
        if mirror is not None:
            mirror._mark_closed()

    # -- actions: one typed call each ------------------------------------------------------------

    # Replaceable intents (catalog search/setCategory/setSort/refresh/loadMore, the refresh of a product,
    # form or cart, dashboard reload/reloadSection) answer `{version, superseded: True}` when a newer one
    # replaced them: a normal result, not an error (the state shows the newer one's outcome).
    #
    # Every action takes `expected_version` (see `action`). The storing ones (`STORING_ACTIONS`) also take
    # `idempotency_key` (a new one per call by default), `timeout` and `retries`: a timed-out attempt is
    # resent with the same key, so the change is applied once, and a resend the server answers from its
    # record (`{"replayed": True, ...}`) counts as success.

    async def catalog_refresh(self, catalog: Mirror, *, expected_version: int | None = None) -> dict:
        """Reloads the first page (the retry after a failed load)."""
        return await catalog.action("refresh", expected_version=expected_version)

    async def catalog_search(self, catalog: Mirror, query: str, *, expected_version: int | None = None) -> dict:
        """Sets the query at once (`phase` is `loading`) and searches after 300 ms of quiet."""
        return await catalog.action("search", query=query, expected_version=expected_version)

    async def catalog_set_category(self, catalog: Mirror, category: str | None, *,
                                   expected_version: int | None = None) -> dict:
        return await catalog.action("setCategory", category=category, expected_version=expected_version)

    async def catalog_set_sort(self, catalog: Mirror, sort: Sort, *, expected_version: int | None = None) -> dict:
        return await catalog.action("setSort", sort=sort, expected_version=expected_version)

    async def catalog_load_more(self, catalog: Mirror, *, expected_version: int | None = None) -> dict:
        """Appends the next page. A failure shows in `loadMorePhase` (`"failed"`) and `loadMoreError`,
        the list staying `loaded`; calling again retries."""
        return await catalog.action("loadMore", expected_version=expected_version)

    async def catalog_toggle_selection(self, catalog: Mirror, product_id: str, *,
                                       expected_version: int | None = None) -> dict:
        return await catalog.action("toggleSelection", productId=product_id, expected_version=expected_version)

    async def catalog_select_all(self, catalog: Mirror, *, expected_version: int | None = None) -> dict:
        return await catalog.action("selectAll", expected_version=expected_version)

    async def catalog_clear_selection(self, catalog: Mirror, *, expected_version: int | None = None) -> dict:
        return await catalog.action("clearSelection", expected_version=expected_version)

    async def catalog_delete_selected(self, catalog: Mirror, *, idempotency_key: str | None = None,
                                      expected_version: int | None = None, timeout: float | None = None,
                                      retries: int | None = None) -> dict:
        """Deletes the selected products (stores; see :meth:`action` for the keyword arguments)."""
        return await catalog.action("deleteSelected", idempotency_key=idempotency_key,
                                    expected_version=expected_version, timeout=timeout, retries=retries)

    async def product_refresh(self, detail: Mirror, *, expected_version: int | None = None) -> dict:
        """Loads the product, its favourite mark and the cart's units again (the retry after a failure)."""
        return await detail.action("refresh", expected_version=expected_version)

    async def product_toggle_favorite(self, detail: Mirror, *, idempotency_key: str | None = None,
                                      expected_version: int | None = None, timeout: float | None = None,
                                      retries: int | None = None) -> dict:
        """Marks or unmarks the product as a favourite (stores). Refused (`loadFailed`, `details.content ==
        "favorites"`) while `isFavorite` is unknown (`None`, `canToggleFavorite` false). A key names one
        toggle: a resend of it never toggles back."""
        return await detail.action("toggleFavorite", idempotency_key=idempotency_key,
                                   expected_version=expected_version, timeout=timeout, retries=retries)

    async def product_increment_quantity(self, detail: Mirror, *, expected_version: int | None = None) -> dict:
        return await detail.action("incrementQuantity", expected_version=expected_version)

    async def product_decrement_quantity(self, detail: Mirror, *, expected_version: int | None = None) -> dict:
        return await detail.action("decrementQuantity", expected_version=expected_version)

    async def product_add_to_cart(self, detail: Mirror, *, idempotency_key: str | None = None,
                                  expected_version: int | None = None, timeout: float | None = None,
                                  retries: int | None = None) -> dict:
        """Adds the chosen quantity to the cart (stores)."""
        return await detail.action("addToCart", idempotency_key=idempotency_key,
                                   expected_version=expected_version, timeout=timeout, retries=retries)

    async def form_set_field(self, form: Mirror, field: FormField, value: str, *,
                             expected_version: int | None = None) -> dict:
        return await form.action("setField", field=field, value=value, expected_version=expected_version)

    async def form_submit(self, form: Mirror, *, idempotency_key: str | None = None,
                          expected_version: int | None = None, timeout: float | None = None,
                          retries: int | None = None) -> dict:
        """Creates the product, or in edit mode stores the product's changed fields (stores). Refused
        `validationFailed` (every field error then shows in `state["errors"]`), `alreadySubmitting`, or in
        create mode `alreadySubmitted` after a success until a field changes or a reset."""
        return await form.action("submit", idempotency_key=idempotency_key,
                                 expected_version=expected_version, timeout=timeout, retries=retries)

    async def form_reset(self, form: Mirror, *, expected_version: int | None = None) -> dict:
        return await form.action("reset", expected_version=expected_version)

    async def form_refresh(self, form: Mirror, *, expected_version: int | None = None) -> dict:
        """Loads the categories again (the retry after a failed load)."""
        return await form.action("refresh", expected_version=expected_version)

    async def cart_add(self, cart: Mirror, product_id: str, quantity: int = 1, *,
                       idempotency_key: str | None = None, expected_version: int | None = None,
                       timeout: float | None = None, retries: int | None = None) -> dict:
        """Adds units of a product, merging with its line (stores)."""
        return await cart.action("add", productId=product_id, quantity=quantity, idempotency_key=idempotency_key,
                                 expected_version=expected_version, timeout=timeout, retries=retries)

    async def cart_set_quantity(self, cart: Mirror, product_id: str, quantity: int, *,
                                idempotency_key: str | None = None, expected_version: int | None = None,
                                timeout: float | None = None, retries: int | None = None) -> dict:
        """Sets a line's quantity; 0 removes the line (stores)."""
        return await cart.action("setQuantity", productId=product_id, quantity=quantity,
                                 idempotency_key=idempotency_key, expected_version=expected_version,
                                 timeout=timeout, retries=retries)

    async def cart_remove(self, cart: Mirror, product_id: str, *, idempotency_key: str | None = None,
                          expected_version: int | None = None, timeout: float | None = None,
                          retries: int | None = None) -> dict:
        """Removes a line (stores)."""
        return await cart.action("remove", productId=product_id, idempotency_key=idempotency_key,
                                 expected_version=expected_version, timeout=timeout, retries=retries)

    async def cart_clear(self, cart: Mirror, *, idempotency_key: str | None = None,
                         expected_version: int | None = None, timeout: float | None = None,
                         retries: int | None = None) -> dict:
        """Empties the cart (stores)."""
        return await cart.action("clear", idempotency_key=idempotency_key,
                                 expected_version=expected_version, timeout=timeout, retries=retries)

    async def cart_checkout(self, cart: Mirror, *, idempotency_key: str | None = None,
                            expected_version: int | None = None, timeout: float | None = None,
                            retries: int | None = None) -> dict:
        """Places the order (stores); returns `{version, orderId}` on success, and a resend of a checkout
        already placed the same `orderId` with `replayed: True`. `checkoutPhase` and `lastOrder` stay until
        the cart changes again (then `"idle"` and `None`)."""
        return await cart.action("checkout", idempotency_key=idempotency_key,
                                 expected_version=expected_version, timeout=timeout, retries=retries)

    async def cart_refresh(self, cart: Mirror, *, expected_version: int | None = None) -> dict:
        """Loads the cart again (the retry after a failed load)."""
        return await cart.action("refresh", expected_version=expected_version)

    async def cart_dismiss_notices(self, cart: Mirror, *, expected_version: int | None = None) -> dict:
        """Forgets `state["notices"]`: the lines that went because their product was deleted."""
        return await cart.action("dismissNotices", expected_version=expected_version)

    async def dashboard_reload(self, dashboard: Mirror, *, expected_version: int | None = None) -> dict:
        return await dashboard.action("reload", expected_version=expected_version)

    async def dashboard_reload_section(self, dashboard: Mirror, section: Section, *,
                                       expected_version: int | None = None) -> dict:
        return await dashboard.action("reloadSection", section=section, expected_version=expected_version)
