#!/usr/bin/env python3
"""Storefront web bridge: serves one static page and relays JSON-RPC between each browser WebSocket
and a `storefront serve` process of its own (newline-delimited JSON on the server's stdin/stdout).

Security, as Jupyter does it: it listens on 127.0.0.1 only; a random token, printed at start, is
required (`?token=`) for the page and the WebSocket; the WebSocket upgrade must come from the bridge's
own origin and Host (so other sites, and DNS rebinding, cannot drive it). Each socket's server is
stopped and reaped when the socket closes, and every server when the bridge exits.

    python3 clients/web/bridge.py [--port 8765] [--database PATH] [--server BIN] [--token TOKEN] [--faults SPEC]
                                  [--simulate-market RATE]
"""
from __future__ import annotations

import argparse
import asyncio
import http
import json
import logging
import mimetypes
import os
import secrets
import signal
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

try:
    from websockets.asyncio.server import ServerConnection, serve
    from websockets.datastructures import Headers
    from websockets.http11 import Request, Response
except ImportError:  # pragma: no cover
    sys.exit("storefront-web: needs websockets >= 13: run clients/web/serve.sh, or pip install -r clients/web/requirements.txt")

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
REPO = HERE.parent.parent
# The page needs the token; its assets hold no secrets and are served to anyone on this machine.
PAGES = {"/": "index.html", "/index.html": "index.html"}
ASSETS = {"/app.js", "/account.js", "/inbox.js", "/ticker.js", "/jsonpatch.js", "/style.css"}
MAX_MESSAGE = 16 * 1024 * 1024
STOP_GRACE = 3.0  # seconds a server gets to exit after end of input, before SIGTERM, then SIGKILL

log = logging.getLogger("storefront-web")


def find_server(explicit: str | None) -> str:
    """The storefront binary: the option, $STOREFRONT_BIN, the newest repository build, or PATH."""
    if explicit:
        return explicit
    if os.environ.get("STOREFRONT_BIN"):
        return os.environ["STOREFRONT_BIN"]
    builds = [REPO / ".build" / kind / "storefront" for kind in ("debug", "release")]
    builds = [b for b in builds if os.access(b, os.X_OK)]
    if builds:
        return str(max(builds, key=lambda b: b.stat().st_mtime))
    return "storefront"


class Bridge:
    def __init__(self, server: str, server_args: list[str], token: str, port: int):
        self.server = server
        self.server_args = server_args
        self.token = token
        self.port = port  # the bound port once listening
        self.children: set[asyncio.subprocess.Process] = set()

    # -- HTTP: the page, and the checks before a WebSocket upgrade ------------------------------------

    def allowed_hosts(self) -> set[str]:
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def token_ok(self, query: dict[str, list[str]]) -> bool:
        given = query.get("token", [""])[0]
        return secrets.compare_digest(given.encode(), self.token.encode())

    @staticmethod
    def respond(status: http.HTTPStatus, body: bytes, content_type: str = "text/plain; charset=utf-8") -> Response:
        headers = Headers()
        headers["Content-Type"] = content_type
        headers["Content-Length"] = str(len(body))
        headers["Cache-Control"] = "no-store"
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Referrer-Policy"] = "no-referrer"  # the token stays out of Referer headers
        headers["Content-Security-Policy"] = "default-src 'self'; connect-src 'self'; frame-ancestors 'none'"
        return Response(status.value, status.phrase, headers, body)

    def refuse(self, status: http.HTTPStatus, why: str) -> Response:
        log.warning("refused: %s", why)
        return self.respond(status, f"{status.value} {status.phrase}: {why}\n".encode())

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        url = urlsplit(request.path)
        query = parse_qs(url.query)
        host = request.headers.get("Host", "")
        if host not in self.allowed_hosts():
            return self.refuse(http.HTTPStatus.FORBIDDEN, f"unexpected Host {host!r}")
        if url.path == "/ws":
            if not self.token_ok(query):
                return self.refuse(http.HTTPStatus.FORBIDDEN, "missing or wrong token")
            origin = request.headers.get("Origin")
            if origin not in {f"http://{h}" for h in self.allowed_hosts()}:
                return self.refuse(http.HTTPStatus.FORBIDDEN, f"foreign Origin {origin!r}")
            if request.headers.get("Upgrade", "").lower() != "websocket":
                return self.refuse(http.HTTPStatus.BAD_REQUEST, "expected a WebSocket upgrade")
            return None  # go on with the handshake
        if url.path in PAGES:
            if not self.token_ok(query):
                return self.refuse(http.HTTPStatus.FORBIDDEN, "missing or wrong token: open the URL the bridge printed")
            return self.respond(http.HTTPStatus.OK, (STATIC / PAGES[url.path]).read_bytes(), "text/html; charset=utf-8")
        if url.path in ASSETS:
            path = STATIC / url.path[1:]
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            return self.respond(http.HTTPStatus.OK, path.read_bytes(), f"{kind}; charset=utf-8")
        return self.refuse(http.HTTPStatus.NOT_FOUND, f"no page {url.path}")

    # -- WebSocket: one server per socket ----------------------------------------------------------------

    async def relay(self, ws: ServerConnection) -> None:
        try:
            child = await asyncio.create_subprocess_exec(
                self.server, "serve", "--framing", "ndjson", *self.server_args,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=MAX_MESSAGE + 1024)
        except OSError as error:
            await ws.close(1011, f"cannot start the server: {error}"[:120])
            return
        self.children.add(child)
        log.info("socket %s: server pid %d", ws.id, child.pid)
        to_server = asyncio.create_task(self.browser_to_server(ws, child))
        to_browser = asyncio.create_task(self.server_to_browser(ws, child))
        try:
            await asyncio.wait({to_server, to_browser}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            to_server.cancel()
            await self.stop(child)
            to_browser.cancel()
            await asyncio.gather(to_server, to_browser, return_exceptions=True)
            if child.returncode not in (0, None):
                await ws.close(1011, f"the server exited with status {child.returncode}")
            else:
                await ws.close()
            log.info("socket %s: closed, server exited with %s", ws.id, child.returncode)

    @staticmethod
    async def browser_to_server(ws: ServerConnection, child: asyncio.subprocess.Process) -> None:
        async for message in ws:
            text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
            try:  # one message per line: re-encode JSON so that no raw newline splits it
                line = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
            except ValueError:
                line = text.replace("\r", " ").replace("\n", " ")  # the server answers with a parse error
            child.stdin.write(line.encode() + b"\n")
            await child.stdin.drain()

    @staticmethod
    async def server_to_browser(ws: ServerConnection, child: asyncio.subprocess.Process) -> None:
        while line := await child.stdout.readline():
            await ws.send(line.decode("utf-8", "replace").rstrip("\r\n"))

    async def stop(self, child: asyncio.subprocess.Process) -> None:
        """End of input asks the server to finish and exit; then SIGTERM, then SIGKILL. Always reaps."""
        try:
            if child.stdin and not child.stdin.is_closing():
                child.stdin.close()
            for signal_to_send in (None, signal.SIGTERM, signal.SIGKILL):
                if signal_to_send is not None and child.returncode is None:
                    child.send_signal(signal_to_send)
                try:
                    await asyncio.wait_for(asyncio.shield(child.wait()), STOP_GRACE)
                    break
                except asyncio.TimeoutError:
                    continue
        except ProcessLookupError:
            pass
        finally:
            if child.returncode is None:
                await child.wait()
            self.children.discard(child)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--database", help="the server's --database (default: its own)")
    parser.add_argument("--server", help="the storefront binary")
    parser.add_argument("--token", help="the access token (default: a random one)")
    parser.add_argument("--faults", help="the server's --faults (fault injection), e.g. 'favorites:failure-rate=1'")
    parser.add_argument("--simulate-market", metavar="RATE",
                        help="the server's --simulate-market: prices and stock move by themselves (a simulation)")
    parser.add_argument("--log-level", default="info")
    options = parser.parse_args()
    logging.basicConfig(level=options.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("websockets").setLevel(logging.WARNING)

    server_args = ["--database", options.database] if options.database else []
    if options.faults:
        server_args += ["--faults", options.faults]
    if options.simulate_market:
        server_args += ["--simulate-market", options.simulate_market]
    bridge = Bridge(find_server(options.server), server_args, options.token or secrets.token_urlsafe(24), options.port)
    stop = asyncio.get_running_loop().create_future()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, lambda: stop.done() or stop.set_result(None))

    async with serve(bridge.relay, "127.0.0.1", options.port, process_request=bridge.process_request,
                     max_size=MAX_MESSAGE, server_header=None) as server:
        bridge.port = next(iter(server.sockets)).getsockname()[1]
        print(f"Storefront web bridge: http://127.0.0.1:{bridge.port}/?token={bridge.token}", flush=True)
        await stop
        log.info("stopping")
    for child in list(bridge.children):  # sockets still open when the server closed
        await bridge.stop(child)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
