"""`python -m storefront_client` (or `storefront-client`): account and cart commands on a fresh server.

Each run starts `storefront serve`, resumes the session kept in the token file (when there is one), runs one
command and exits. Passwords are read from standard input (one line) or, on a terminal, prompted for with
echo off; never from the command line.

    storefront-client [--server BIN] [--database PATH] [--token-file PATH] COMMAND [ARGS...]

    register EMAIL          login EMAIL          logout          whoami
    profile                 profile-set FIELD VALUE   (name, email, bio, notifications on|off)
    cart                    add PRODUCT_ID [QTY]      checkout
    inbox                   read NOTIFICATION_ID      read-all          (signed in)
    ticker PRODUCT_ID [N]   the price and stock now, then N changes (default: until interrupted)
    edit PRODUCT_ID FIELD=VALUE...   (name, description, price, stock, category)
    trending
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from pathlib import Path

from .client import Client
from .errors import StorefrontError
from .money import line_total
from .token_file import default_token_file


def read_password(confirm: bool) -> str:
    """A password from a terminal prompt with echo off (twice when `confirm`), else stdin's first line."""
    if sys.stdin.isatty():
        password = getpass.getpass("Password: ")
        if confirm and getpass.getpass("Password again: ") != password:
            raise SystemExit("storefront-client: the passwords differ")
        return password
    line = sys.stdin.readline()
    if not line:
        raise SystemExit("storefront-client: no password on standard input")
    return line.rstrip("\r\n")


def describe(error: StorefrontError) -> str:
    text = f"error {error.code}: {error.message}"
    if error.reason:
        text += f" [{error.reason}]"
    if error.details:
        text += " " + json.dumps(error.details, sort_keys=True)
    return text


def print_user(login_state: dict) -> None:
    user = login_state.get("user")
    if user:
        print(f"signed in as {user['email']} ({user['name']}, account {user['id']})")
    else:
        print("a guest (not signed in)" + (f": {login_state['message']}" if login_state.get("message") else ""))
    for line in login_state.get("cappedLines") or []:
        print(f"  capped: {line['name']} ({line['productId']}): kept {line['kept']} of {line['requested']}")


def print_inbox(state: dict) -> None:
    """One line per notification, newest first: `*` marks the unread ones."""
    print(f"{state['unreadCount']} unread" + ("" if state.get("enabled", True) else " (notifications are off)"))
    for item in state["items"]:
        print(f"{'*' if not item['isRead'] else ' '} {item['id']}  {item['createdAt']}  {item['title']}: {item['body']}")
    if state.get("hasMore"):
        print("  ... older ones not shown")


def ticker_line(state: dict) -> str:
    return f"{state['productId']}  {state['name']}  {state['currentPrice']}  stock {state['stock']}"


async def watch_ticker(client: Client, product_id: str, changes: int | None) -> None:
    """Prints the product's price and stock, then a line per stored change (`changes` of them, or forever)."""
    ticker = await client.open_ticker(product_id)
    # A change is a new price or stock: they show at once, and the history that loads after is the same change.
    seen = ticker.state["currentPrice"], ticker.state["stock"]
    print(ticker_line(ticker.state), flush=True)
    count = 0
    while changes is None or count < changes:
        state = await ticker.wait_for(lambda s: (s["currentPrice"], s["stock"]) != seen, timeout=None)
        seen = state["currentPrice"], state["stock"]
        print(ticker_line(state), flush=True)
        count += 1


async def run(arguments: argparse.Namespace) -> int:
    token_file = Path(arguments.token_file)
    async with await Client.start(arguments.server, database=arguments.database,
                                  client_name="storefront-client-cli") as client:
        resumed = await client.resume_from(token_file)
        command, args = arguments.command, arguments.args
        try:
            if command == "register" and len(args) == 1:
                result = await client.register(args[0], read_password(confirm=True), token_file=token_file)
                print(f"registered account {result['accountId']}; token kept in {token_file}")
                print_user((await client.login_view()).state)
            elif command == "login" and len(args) == 1:
                result = await client.login(args[0], read_password(confirm=False), token_file=token_file)
                print(f"signed in (account {result['accountId']}); token kept in {token_file}")
                print_user((await client.login_view()).state)
            elif command == "logout" and not args:
                if resumed is None:
                    print("not signed in")
                else:
                    await client.logout(token_file=token_file)
                    print("signed out")
            elif command == "whoami" and not args:
                print_user((await client.login_view()).state)
            elif command == "profile" and not args:
                profile = await client.open_profile()
                print(json.dumps(profile.state, indent=2, sort_keys=True))
            elif command == "profile-set" and len(args) == 2:
                profile = await client.open_profile()
                field, value = args
                if field in ("notifications", "notificationsEnabled"):
                    if value not in ("on", "off", "true", "false"):
                        print("storefront-client: notifications takes on or off", file=sys.stderr)
                        return 2
                    await client.profile_set_notifications_enabled(profile, value in ("on", "true"))
                else:
                    await client.profile_set_field(profile, field, value)
                await client.profile_save(profile)
                print(json.dumps(profile.state["fields"], sort_keys=True))
            elif command == "cart" and not args:
                cart = await client.open("cart")
                state = await cart.wait_for(lambda s: s["phase"] != "loading")
                for line in state["lines"]:
                    print(f"{line['productId']}  {line['name']}  {line['quantity']} x {line['unitPrice']} = {line_total(line)}")
                print(f"items {state['totals']['itemCount']}  total {state['totals']['total']}")
            elif command == "add" and 1 <= len(args) <= 2:
                cart = await client.open("cart")
                await cart.wait_for(lambda s: s["phase"] != "loading")
                await client.cart_add(cart, args[0], int(args[1]) if len(args) == 2 else 1)
                print(f"items {cart.state['totals']['itemCount']}  total {cart.state['totals']['total']}")
            elif command == "checkout" and not args:
                cart = await client.open("cart")
                await cart.wait_for(lambda s: s["phase"] != "loading")
                result = await client.cart_checkout(cart)
                print(f"order {result['orderId']} placed")
            elif command == "inbox" and not args:
                print_inbox((await client.open_inbox()).state)
            elif command == "read" and len(args) == 1:
                inbox = await client.open_inbox()
                await client.notifications_mark_as_read(inbox, args[0])
                print_inbox(inbox.state)
            elif command == "read-all" and not args:
                inbox = await client.open_inbox()
                await client.notifications_mark_all_read(inbox)
                print_inbox(inbox.state)
            elif command == "ticker" and 1 <= len(args) <= 2:
                await watch_ticker(client, args[0], int(args[1]) if len(args) == 2 else None)
            elif command == "edit" and len(args) >= 2 and all("=" in a for a in args[1:]):
                fields = dict(a.split("=", 1) for a in args[1:])
                form = await client.open_product_editor(args[0])
                for field, value in fields.items():
                    await client.form_set_field(form, field, value)
                await client.form_submit(form)
                print(json.dumps(form.state["fields"], sort_keys=True))
            elif command == "trending" and not args:
                for item in await client.trending():
                    product = item["product"]
                    print(f"{product['id']}  {product['name']}  {product['price']}  views {item['views']}  adds {item['cartAdds']}")
            else:
                print(f"storefront-client: bad command: {' '.join([command, *args])}\n{__doc__}", file=sys.stderr)
                return 2
        except StorefrontError as error:
            print(f"storefront-client: {command}: {describe(error)}", file=sys.stderr)
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="storefront-client", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", help="the storefront binary (default $STOREFRONT_BIN, else PATH)")
    parser.add_argument("--database", help="the server's --database")
    parser.add_argument("--token-file", default=str(default_token_file()),
                        help="where the session token is kept, 0600 (default $STOREFRONT_TOKEN_FILE, "
                             "else $XDG_DATA_HOME/storefront/token)")
    parser.add_argument("command")
    parser.add_argument("args", nargs="*")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
