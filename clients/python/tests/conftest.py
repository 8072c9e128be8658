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
