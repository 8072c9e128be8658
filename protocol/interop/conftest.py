"""Fixtures: the server binary the third-party clients spawn."""

from __future__ import annotations

import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent

# Every wait on the server has this guard: a failure bound, never a way to synchronise.
TIMEOUT = 30.0


@pytest.fixture(scope="session")
def server_bin() -> str:
    """`STOREFRONT_BIN`, else the newer of the repository's debug and release builds (run-tests.sh builds
    the debug one when there is neither)."""
    path = os.environ.get("STOREFRONT_BIN")
    if not path:
        builds = [REPO / ".build" / kind / "storefront" for kind in ("debug", "release")]
        builds = [build for build in builds if os.access(build, os.X_OK)]
        if not builds:
            pytest.exit("no server binary; build it with `swift build --product storefront`", returncode=2)
        path = str(max(builds, key=lambda build: build.stat().st_mtime))
    if not os.access(path, os.X_OK):
        pytest.exit(f"no server binary at {path}", returncode=2)
    return path
