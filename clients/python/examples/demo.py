"""Opens a catalog and a cart, adds the first product in stock, checks out, prints what the screens show.

    STOREFRONT_BIN=.build/debug/storefront python clients/python/examples/demo.py
"""

import asyncio

from storefront_client import Client, StorefrontError, line_total


async def main() -> None:
    async with await Client.start(database=":memory:") as client:
        catalog = await client.open("catalog")
        cart = await client.open("cart")
        state = await catalog.wait_for(lambda state: state["phase"] == "loaded")
        product = next(product for product in state["products"] if product["inStock"])
        print(f"catalog: {state['totalCount']} products; first in stock: {product['name']} at {product['price']}")

        await client.cart_add(cart, product["id"], 2)
        totals = cart.state["totals"]
        print(f"cart: {totals['itemCount']} items, total {totals['total']} (version {cart.version})")
        for line in cart.state["lines"]:  # a line's total is computed here, exactly, from its unit price
            print(f"  {line['quantity']} x {line['name']} at {line['unitPrice']} = {line_total(line)}")

        try:
            await client.cart_add(cart, product["id"], 10_000)
        except StorefrontError as error:
            print(f"refused: {error.reason} ({error.message})")

        result = await client.cart_checkout(cart)
        print(f"order {result['orderId']} placed; cart now has {len(cart.state['lines'])} lines")


if __name__ == "__main__":
    asyncio.run(main())
