"""Fixtures: the server binary, one session per framing, the state schemas."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from postgres_databases import POSTGRES
from storefront_session import FRAMINGS, Mirrors, Session, server_command
from contract import Contract

HERE = pathlib.Path(__file__).resolve().parent
PROTOCOL = HERE.parent
REPO = PROTOCOL.parent


@pytest.fixture(scope="session")
def server_bin() -> str:
    """`STOREFRONT_BIN`, else `<repo>/.build/debug/storefront` (run-tests.sh builds it when missing)."""
    path = os.environ.get("STOREFRONT_BIN") or str(REPO / ".build" / "debug" / "storefront")
    if not os.access(path, os.X_OK):
        pytest.exit(f"no server binary at {path}; build it with `swift build --product storefront`", returncode=2)
    return path


@pytest.fixture(autouse=True)
def drop_postgres_databases():
    """Under STOREFRONT_DATABASE, drops the databases a test's servers used once they are reaped (an
    autouse fixture is set up before the fixtures a test asks for, so it is torn down after them)."""
    yield
    if POSTGRES:
        POSTGRES.drop_test_databases()


def pytest_sessionfinish(session, exitstatus):
    if POSTGRES:
        POSTGRES.drop_all()


def pytest_report_header(config):
    return f"database: {POSTGRES.url} (PostgreSQL)" if POSTGRES else "database: SQLite"


@pytest.fixture(params=FRAMINGS)
def framing(request) -> str:
    return request.param


@pytest.fixture
def spawn(server_bin, framing):
    """Starts servers speaking `framing`; each is reaped at the end of the test."""
    sessions: list[Session] = []

    def start(*extra: str, framing_flag: str | None = "same") -> Session:
        flag = framing if framing_flag == "same" else framing_flag
        session = Session(server_command(server_bin, flag, extra), framing)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.kill()


@pytest.fixture
def session(spawn) -> Session:
    """A server that has not been initialized."""
    return spawn()


@pytest.fixture
def ready(spawn) -> Session:
    """An initialized server (patch updates)."""
    server = spawn()
    server.initialize()
    return server


@pytest.fixture
def mirrors(ready) -> Mirrors:
    return Mirrors(ready)


@pytest.fixture(scope="session")
def discover_document(server_bin) -> dict:
    """The rpc.discover document, read once."""
    session = Session(server_command(server_bin, "ndjson"), "ndjson")
    try:
        return session.call("rpc.discover")
    finally:
        session.kill()


@pytest.fixture(scope="session")
def method_names(discover_document) -> set[str]:
    return {method["name"] for method in discover_document["methods"]}


@pytest.fixture
def viewmodels_available(method_names) -> None:
    """Skips ViewModel tests on a server that does not serve ViewModels yet."""
    if "viewModel/open" not in method_names:
        pytest.skip("this server does not serve viewModel/open yet")


@pytest.fixture
def require_methods(method_names):
    def check(*names: str) -> None:
        missing = [name for name in names if name not in method_names]
        if missing:
            pytest.skip(f"this server does not serve {', '.join(missing)} yet")
    return check


@pytest.fixture(scope="session")
def contract(discover_document) -> Contract:
    """The contract as rpc.discover describes it."""
    return Contract.from_discover(discover_document)


@pytest.fixture(scope="session")
def state_validators(discover_document, contract):
    """type -> a jsonschema validator of its state: its schema in rpc.discover's components, whose
    references resolve in the same document. A type without a schema fails the test that needs it."""
    from jsonschema import Draft202012Validator
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    base = "urn:storefront:rpc.discover"
    registry = Registry().with_resource(base, DRAFT202012.create_resource(discover_document))
    validators = {}
    for type_, name in contract.state_schemas.items():
        schema = discover_document["components"]["schemas"][name]
        Draft202012Validator.check_schema(schema)
        validators[type_] = Draft202012Validator({"$ref": f"{base}#/components/schemas/{name}"}, registry=registry)
    return validators


@pytest.fixture
def validate_state(state_validators):
    """Validates a state of a ViewModel type; skips (visibly, once per test) when no schema exists."""
    def check(type_: str, state) -> None:
        validator = state_validators[type_]  # a type without a schema is a failure, never a skip
        errors = sorted(validator.iter_errors(state), key=lambda error: list(error.path))
        assert not errors, f"{type_} state does not match its schema: " + "; ".join(
            f"{'/'.join(map(str, error.path))}: {error.message}" for error in errors[:5])
    return check
