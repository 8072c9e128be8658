"""Live screens as calls: the inbox (`notifications`), a product's `priceTicker`, editing a product
(`productForm` in edit mode) and the dashboard's `trending` section.

Everything here follows stored changes from any server on the database: a notification written by another
process arrives in an open inbox, and a price or stock stored anywhere moves an open ticker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .mirror import Mirror

#: The fields an edit may change (create mode also has `category`).
EditField = Literal["name", "description", "price", "stock", "category"]


def _settled(state: Any) -> bool:
    return state.get("phase") not in ("idle", "loading")


class LiveCalls:
    """The live-screen methods of :class:`~storefront_client.Client` (a mixin: it uses `open` and `action`)."""

    # -- the inbox -------------------------------------------------------------------------------

    async def open_inbox(self) -> Mirror:
        """Opens the signed-in account's `notifications` and waits for its first load: `items` (newest
        first: `{id, kind, title, body, productId, orderId, createdAt, isRead}`), `unreadCount`, `hasMore`,
        `loadMorePhase`, `loadMoreError`, `enabled` (the profile's notificationsEnabled).

        Raises:
            StorefrontError: `signInRequired` when this session is a guest.
        """
        inbox = await self.open("notifications")  # type: ignore[attr-defined]
        await inbox.wait_for(_settled)
        return inbox

    async def notifications_mark_as_read(self, inbox: Mirror, notification_id: str, *,
                                         expected_version: int | None = None) -> dict:
        """Marks one notification read (in every server showing the inbox). An unknown id is refused
        `notificationNotFound`."""
        return await inbox.action("markAsRead", id=notification_id, expected_version=expected_version)

    async def notifications_mark_all_read(self, inbox: Mirror, *, expected_version: int | None = None) -> dict:
        """Marks every notification of the account read."""
        return await inbox.action("markAllRead", expected_version=expected_version)

    async def notifications_load_more(self, inbox: Mirror, *, expected_version: int | None = None) -> dict:
        """Appends the next (older) page; a failure shows in `loadMorePhase`/`loadMoreError`."""
        return await inbox.action("loadMore", expected_version=expected_version)

    async def notifications_refresh(self, inbox: Mirror, *, expected_version: int | None = None) -> dict:
        """Loads the first page again (the retry after a failed load)."""
        return await inbox.action("refresh", expected_version=expected_version)

    # -- the price ticker ------------------------------------------------------------------------

    async def open_ticker(self, product_id: str) -> Mirror:
        """Opens the `priceTicker` of a product (open = connected) and waits for its first load:
        `currentPrice`, `stock`, `priceHistory` (`[{price, stock, at}]`, oldest first, at most 100),
        `isConnected`, `name`. A product that does not exist (or no longer does) opens and fails, as
        `productDetail` does: `phase` `"failed"`, its `error` not retryable."""
        ticker = await self.open("priceTicker", productId=product_id)  # type: ignore[attr-defined]
        await ticker.wait_for(_settled)
        return ticker

    async def ticker_connect(self, ticker: Mirror, *, expected_version: int | None = None) -> dict:
        """Reloads and follows the product again."""
        return await ticker.action("connect", expected_version=expected_version)

    async def ticker_disconnect(self, ticker: Mirror, *, expected_version: int | None = None) -> dict:
        """Stops following: the state stays as it was until `connect`."""
        return await ticker.action("disconnect", expected_version=expected_version)

    async def ticker_refresh(self, ticker: Mirror, *, expected_version: int | None = None) -> dict:
        return await ticker.action("refresh", expected_version=expected_version)

    # -- editing a product -----------------------------------------------------------------------

    async def open_product_editor(self, product_id: str) -> Mirror:
        """Opens `productForm` in edit mode for an existing product (`mode: "edit"`, its fields filled in,
        `hasChanges` false until a field differs from the stored product) and waits for the load. While
        `hasChanges` is false, a change stored elsewhere shows in the fields. An unknown product: `phase`
        `"failed"`."""
        form = await self.open("productForm", productId=product_id)  # type: ignore[attr-defined]
        await form.wait_for(_settled)
        return form

    async def edit_product(self, product_id: str, *, idempotency_key: str | None = None,
                           timeout: float | None = None, retries: int | None = None, **fields: str | int) -> dict:
        """Changes an existing product's `name`, `description`, `price` (a decimal string), `stock` (a whole
        number, 0 to 1 000 000) or `category`: opens the edit form, sets each field, submits (stores, keyed
        like every storing action) and closes the form. Returns the submit's result.

        Raises:
            StorefrontError: `validationFailed` (`.details` by field); `notReady`/`loadFailed` when the
                product did not load (it does not exist).
        """
        form = await self.open_product_editor(product_id)
        try:
            for field, value in fields.items():
                await form.action("setField", field=field, value=str(value))
            return await form.action("submit", idempotency_key=idempotency_key, timeout=timeout, retries=retries)
        finally:
            await form.close()

    # -- trending --------------------------------------------------------------------------------

    async def trending(self, dashboard: Mirror | None = None) -> list[dict]:
        """The dashboard's `trending` items (`{product, views, cartAdds}`, most first, at most 5, over the
        last 24 hours). The section is not live: this reloads it, so it counts every view and add this server
        recorded before the call. Opens a dashboard when none is given (and closes it)."""
        own = dashboard is None
        board = dashboard or await self.open("dashboard")  # type: ignore[attr-defined]
        try:
            await board.action("reloadSection", section="trending")
            state = await board.wait_for(lambda s: _settled(s["trending"]))
            return state["trending"]["items"]
        finally:
            if own:
                await board.close()
