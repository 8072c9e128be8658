"""Emacs's jsonrpc.el (the one Eglot uses), as shipped with Emacs, against the real server.

The session itself is the ERT test in jsonrpc-el-test.el; this runs it in `emacs --batch` and fails with
its report when any ERT test does.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import HERE, TIMEOUT

ERT_FILE = HERE / "jsonrpc-el-test.el"


def test_jsonrpc_el_session_with_null_params_against_the_server(server_bin):
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("no emacs on PATH; run-tests.sh installs Debian's emacs-nox")
    run = subprocess.run(
        [emacs, "--batch", "-Q", "-l", "ert", "-l", str(ERT_FILE), "-f", "ert-run-tests-batch-and-exit"],
        env={**os.environ, "STOREFRONT_BIN": server_bin},
        stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=4 * TIMEOUT,  # each wait inside has its own 30 s guard
    )
    report = run.stdout + run.stderr  # ERT reports on stderr
    assert run.returncode == 0, f"emacs exited {run.returncode}:\n{report}"
    assert ", 0 unexpected" in report, report
