"""The asyncio client: spawns `storefront serve`, speaks newline-delimited JSON-RPC 2.0 over its pipes."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any, Awaitable, Literal, Sequence

from .errors import ConnectionClosed, StorefrontError
from .mirror import Mirror

ViewModelType = Literal["catalog", "productDetail", "productForm", "cart", "dashboard"]
Sort = Literal["name", "price", "newest"]
Section = Literal["featured", "categories", "recentOrders", "recommended"]
FormField = Literal["name", "description", "price", "category"]

#: Largest line read from the server (its default message limit is 16 MiB).
_LINE_LIMIT = 64 * 1024 * 1024


class Client:
    """One `storefront serve` process and the session with it.

    Use :meth:`start` (or ``async with await Client.start(...)``); :meth:`close` shuts the server down and
    reaps the process, killing it after a grace period if it does not exit.
    """

    def __init__(self, process: asyncio.subprocess.Process, *, grace_period: float = 5.0):
        self.process = process
        self.grace_period = grace_period
        self.initialize_result: dict | None = None
        self._ids = itertools.count(1)
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

    async def request(self, method: str, params: Any = None) -> Any:
        """Sends a request and returns its result.

        Raises:
            StorefrontError: the server answered an error.
            ConnectionClosed: the server went away first.
        """
        self._raise_if_closed()
        request_id = next(self._ids)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._write(message)
            return await future
        except asyncio.CancelledError:
            # Tell the server too, so a long action stops; its -32800 answer is then ignored.
            if self._pending.pop(request_id, None) is not None and not self._closed:
                self._spawn(self.notify("$/cancelRequest", {"id": request_id}))
            raise
        finally:
            self._pending.pop(request_id, None)

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
            type: `catalog`, `productDetail` (`productId=...`), `productForm`, `cart` or `dashboard`.
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

    async def catalog_refresh(self, catalog: Mirror) -> dict:
        """Reloads the first page (the retry after a failed load)."""
        return await catalog.action("refresh")

    async def catalog_search(self, catalog: Mirror, query: str) -> dict:
        """Sets the query at once (`phase` is `loading`) and searches after 300 ms of quiet."""
        return await catalog.action("search", query=query)

    async def catalog_set_category(self, catalog: Mirror, category: str | None) -> dict:
        return await catalog.action("setCategory", category=category)

    async def catalog_set_sort(self, catalog: Mirror, sort: Sort) -> dict:
        return await catalog.action("setSort", sort=sort)

    async def catalog_load_more(self, catalog: Mirror) -> dict:
        """Appends the next page. A failure shows in `loadMorePhase` (`"failed"`) and `loadMoreError`,
        the list staying `loaded`; calling again retries."""
        return await catalog.action("loadMore")

    async def catalog_toggle_selection(self, catalog: Mirror, product_id: str) -> dict:
        return await catalog.action("toggleSelection", productId=product_id)

    async def catalog_select_all(self, catalog: Mirror) -> dict:
        return await catalog.action("selectAll")

    async def catalog_clear_selection(self, catalog: Mirror) -> dict:
        return await catalog.action("clearSelection")

    async def catalog_delete_selected(self, catalog: Mirror) -> dict:
        return await catalog.action("deleteSelected")

    async def product_refresh(self, detail: Mirror) -> dict:
        """Loads the product, its favourite mark and the cart's units again (the retry after a failure)."""
        return await detail.action("refresh")

    async def product_toggle_favorite(self, detail: Mirror) -> dict:
        """Refused (`loadFailed`, `details.content == "favorites"`) while `isFavorite` is unknown
        (`None`, `canToggleFavorite` false)."""
        return await detail.action("toggleFavorite")

    async def product_increment_quantity(self, detail: Mirror) -> dict:
        return await detail.action("incrementQuantity")

    async def product_decrement_quantity(self, detail: Mirror) -> dict:
        return await detail.action("decrementQuantity")

    async def product_add_to_cart(self, detail: Mirror) -> dict:
        return await detail.action("addToCart")

    async def form_set_field(self, form: Mirror, field: FormField, value: str) -> dict:
        return await form.action("setField", field=field, value=value)

    async def form_submit(self, form: Mirror) -> dict:
        """Refused `validationFailed` (every field error then shows in `state["errors"]`),
        `alreadySubmitting`, or `alreadySubmitted` after a success until a field changes or a reset."""
        return await form.action("submit")

    async def form_reset(self, form: Mirror) -> dict:
        return await form.action("reset")

    async def form_refresh(self, form: Mirror) -> dict:
        """Loads the categories again (the retry after a failed load)."""
        return await form.action("refresh")

    async def cart_add(self, cart: Mirror, product_id: str, quantity: int = 1) -> dict:
        return await cart.action("add", productId=product_id, quantity=quantity)

    async def cart_set_quantity(self, cart: Mirror, product_id: str, quantity: int) -> dict:
        """Quantity 0 removes the line."""
        return await cart.action("setQuantity", productId=product_id, quantity=quantity)

    async def cart_remove(self, cart: Mirror, product_id: str) -> dict:
        return await cart.action("remove", productId=product_id)

    async def cart_clear(self, cart: Mirror) -> dict:
        return await cart.action("clear")

    async def cart_checkout(self, cart: Mirror) -> dict:
        """Returns `{version, orderId}` on success. `checkoutPhase` and `lastOrder` stay until the cart
        changes again (then `"idle"` and `None`)."""
        return await cart.action("checkout")

    async def cart_refresh(self, cart: Mirror) -> dict:
        """Loads the cart again (the retry after a failed load)."""
        return await cart.action("refresh")

    async def cart_dismiss_notices(self, cart: Mirror) -> dict:
        """Forgets `state["notices"]`: the lines that went because their product was deleted."""
        return await cart.action("dismissNotices")

    async def dashboard_reload(self, dashboard: Mirror) -> dict:
        return await dashboard.action("reload")

    async def dashboard_reload_section(self, dashboard: Mirror, section: Section) -> dict:
        return await dashboard.action("reloadSection", section=section)
