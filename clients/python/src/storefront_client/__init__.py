"""asyncio client for Storefront: spawn `storefront serve`, open ViewModels as live mirrors, run actions.

    async with await Client.start(database=":memory:") as client:
        cart = await client.open("cart")
        await client.cart_add(cart, "p-0001", 2)
        print(cart.state["total"])      # already current: notifications precede the response
"""

from .client import Client
from .errors import ConnectionClosed, StorefrontError
from .mirror import Mirror

__all__ = ["Client", "ConnectionClosed", "Mirror", "StorefrontError"]
