import os

import pytest

from storefront_client import Client


@pytest.fixture
def binary() -> str:
    path = os.environ.get("STOREFRONT_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.exit("set STOREFRONT_BIN to the storefront binary (run-tests.sh does)", returncode=2)
    return path


@pytest.fixture
async def client(binary):
    async with await Client.start(binary, database=":memory:") as client:
        yield client


#: The password the tests sign up with (passed in requests only, never in argv or files).
PASSWORD = "correct horse 1"


@pytest.fixture
async def signed_in(binary):
    """A client on a private database, signed up as shopper@example.com (guests cannot check out)."""
    async with await Client.start(binary, database=":memory:") as client:
        await client.register("shopper@example.com", PASSWORD)
        yield client
