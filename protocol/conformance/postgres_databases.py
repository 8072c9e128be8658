"""The suite on PostgreSQL: with STOREFRONT_DATABASE=postgres://USER@HOST:PORT/DB, every server's
`--database` is translated here, so that the tests run unchanged on both backends.

- `:memory:` (a private, fresh shop per server) becomes a new database of its own.
- A file path (the servers of one test sharing a shop) becomes one new database per distinct path, the
  same for every server given that path.

Each new database is a copy (CREATE DATABASE ... TEMPLATE) of a template made once per run by the server
itself, started on an empty database with a single ping: it migrates and seeds it, as it does a new SQLite
file, and exits. So every test starts from the same demo catalog, as on SQLite, and pays for a copy
instead of a seeding. DB (the database of the URL) only serves to run CREATE and DROP DATABASE; the tests'
databases are dropped after each test and the template at the end of the run.

psql runs the SQL (no driver to install); it is found under /usr/lib/postgresql (Debian's layout, the
newest version) or on PATH.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import secrets
import shutil
import subprocess
import urllib.parse
import warnings

import pytest

#: The request the template's server answers before it exits (it has migrated and seeded by then).
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


class PostgresDatabases:
    """Fresh databases on one PostgreSQL server, copied from a template made by the server under test."""

    def __init__(self, url: str):
        self.url = url
        #: Names this run's databases share: runs on one cluster (two checkouts, say) do not collide.
        self.prefix = f"sf_{os.getpid()}_{secrets.token_hex(3)}"
        self._numbers = itertools.count(1)
        self._template: str | None = None
        #: The databases made since the last `drop_test_databases`, and which file path each stands for.
        self._created: list[str] = []
        self._by_path: dict[str, str] = {}

    @classmethod
    def from_environment(cls) -> PostgresDatabases | None:
        url = os.environ.get("STOREFRONT_DATABASE", "")
        if not url:
            return None
        if not re.match(r"postgres(ql)?://", url):
            raise ValueError(f"STOREFRONT_DATABASE must be a postgres:// URL, not {url!r}")
        return cls(url)

    def url_of(self, name: str) -> str:
        """The URL of database `name` on the same server, as the same user."""
        return urllib.parse.urlsplit(self.url)._replace(path="/" + name).geturl()

    # -- translating argv --------------------------------------------------------------------------

    def translate(self, binary: str, argv: list[str]) -> list[str]:
        """`argv` with its `--database` on PostgreSQL. The server uses the last `--database` it is given
        (server_command puts `:memory:` before a test's own), so only that one is translated and the
        earlier ones are dropped: each would cost a database nobody uses."""
        positions = [i for i, arg in enumerate(argv) if arg == "--database" and i + 1 < len(argv)]
        if not positions:
            return argv
        last = positions[-1]
        translated = argv[:last + 1] + [self._database_for(binary, argv[last + 1])] + argv[last + 2:]
        for i in reversed(positions[:-1]):
            del translated[i:i + 2]
        return translated

    def _database_for(self, binary: str, value: str) -> str:
        if re.match(r"postgres(ql)?://", value):
            return value
        if value == ":memory:":
            return self.url_of(self._new_database(binary))
        path = os.path.abspath(value)
        if path not in self._by_path:
            self._by_path[path] = self._new_database(binary)
        return self.url_of(self._by_path[path])

    def _new_database(self, binary: str) -> str:
        template = self._template_for(binary)
        name = f"{self.prefix}_{next(self._numbers)}"
        # No one may be connected to a template while it is copied: the template's server has exited.
        self._psql(f"CREATE DATABASE {name} TEMPLATE {template}")
        self._created.append(name)
        return name

    def _template_for(self, binary: str) -> str:
        """The seeded template, made on first use. Without it no test can run: a failure ends the run
        with its reason (once, instead of an error per test)."""
        if self._template is None:
            name = f"{self.prefix}_template"
            try:
                # A server without PostgreSQL would take the URL for a SQLite file name.
                help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True, timeout=60)
                if "postgres" not in help_text.stdout + help_text.stderr:
                    raise RuntimeError(f"{binary} does not take postgres:// databases (`serve --help` does not"
                                       " mention them), so it cannot run under STOREFRONT_DATABASE")
                self._psql(f"CREATE DATABASE {name}")
                done = subprocess.run([binary, "serve", "--database", self.url_of(name)], input=PING,
                                      capture_output=True, timeout=300)
                if done.returncode != 0 or b'"result"' not in done.stdout:
                    raise RuntimeError(
                        f"the server could not make the template database {name} (exit status {done.returncode});"
                        f" stdout: {done.stdout[-500:]!r}; stderr:\n{done.stderr[-2000:].decode(errors='replace')}")
                tables = self._psql("SELECT count(*) FROM information_schema.tables"
                                    " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')", database=name)
                if int(tables or 0) == 0:
                    raise RuntimeError(f"the server answered a ping on {name} but created no tables in it")
            except (RuntimeError, subprocess.SubprocessError) as error:
                pytest.exit(f"PostgreSQL: {error}", returncode=3)
            self._template = name
        return self._template

    # -- dropping ----------------------------------------------------------------------------------

    def drop_test_databases(self) -> None:
        """Drops the databases made since the last call (the servers that used them are reaped): a run
        makes hundreds, a few MB each."""
        names, self._created, self._by_path = self._created, [], {}
        self._drop(names)

    def drop_all(self) -> None:
        """Drops every database of the run, the template included (best effort)."""
        # The template by its name: a failed seeding may have left it half made.
        names = self._created + [f"{self.prefix}_template"]
        self._created, self._by_path, self._template = [], {}, None
        self._drop(names)

    def _drop(self, names: list[str]) -> None:
        if not names:
            return
        # One -c per statement: DROP DATABASE cannot run in the transaction a multi-statement -c makes.
        # WITH (FORCE) (PostgreSQL 13+) ends connections a server might still hold.
        statements = [f"DROP DATABASE IF EXISTS {name} WITH (FORCE)" for name in names]
        try:
            self._psql(*statements)
        except Exception as error:  # best effort: a leftover database is no test failure
            warnings.warn(f"could not drop {', '.join(names)}: {error}")

    # -- psql --------------------------------------------------------------------------------------

    def _psql(self, *statements: str, database: str | None = None) -> str:
        """Runs each statement (in order, each on its own) and returns the output, unaligned."""
        command = [psql_binary(), "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1",
                   "-d", self.url_of(database) if database else self.url]
        for statement in statements:
            command += ["-c", statement]
        env = dict(os.environ, PGCONNECT_TIMEOUT="10", PGOPTIONS="-c client_min_messages=warning")
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"psql failed ({'; '.join(statements)}): {done.stderr.strip()}")
        return done.stdout.strip()


def psql_binary() -> str:
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"),
                      key=lambda path: int(path.split("/")[4]) if path.split("/")[4].isdigit() else 0)
    found = versions[-1] if versions else shutil.which("psql")
    if not found:
        raise RuntimeError("STOREFRONT_DATABASE is set but psql is not installed (Debian: postgresql-client)")
    return found


#: The databases of this run, or None when STOREFRONT_DATABASE is not set (SQLite, as the tests say).
POSTGRES = PostgresDatabases.from_environment()
