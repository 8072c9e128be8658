"""asyncio client for Storefront: spawn `storefront serve`, open ViewModels as live mirrors, run actions.

    async with await Client.start(database=":memory:") as client:
        cart = await client.open("cart")
        await client.cart_add(cart, "p-0001", 2)
        print(cart.state["totals"]["total"])    # already current: notifications precede the response
        for line in cart.state["lines"]:
            print(line["name"], line_total(line))  # unitPrice × quantity, exact in minor units
"""

from .client import STORING_ACTIONS, Client
from .errors import ConnectionClosed, RequestTimeout, StorefrontError
from .mirror import Mirror
from .money import format_minor_units, line_total, minor_units
from .token_file import default_token_file, read_token, remove_token, write_token

__all__ = [
    "Client", "ConnectionClosed", "Mirror", "RequestTimeout", "STORING_ACTIONS", "StorefrontError", "format_minor_units",
    "line_total", "minor_units", "default_token_file", "read_token", "remove_token", "write_token",
]
