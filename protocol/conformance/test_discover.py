"""rpc.discover: an OpenRPC 1.3 document listing every method of protocol/README.md."""

from __future__ import annotations

import json
import pathlib

import pytest
from jsonschema import Draft202012Validator

from contract import ACTION_METHODS, ACTIONS, LIFECYCLE_REQUESTS, VIEWMODEL_METHODS

HERE = pathlib.Path(__file__).resolve().parent


def test_discover_document_passes_the_openrpc_structural_check(discover_document):
    # A hand-written structural check (see the schema's description), not the official meta-schema.
    schema = json.loads((HERE / "openrpc-structure.schema.json").read_text())
    errors = list(Draft202012Validator(schema).iter_errors(discover_document))
    assert not errors, "; ".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:10])


def test_discover_method_names_are_unique(discover_document):
    names = [method["name"] for method in discover_document["methods"]]
    assert len(names) == len(set(names))


def test_every_local_ref_resolves(discover_document):
    def walk(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                target = discover_document
                for part in ref[2:].split("/"):
                    assert isinstance(target, dict) and part in target, f"unresolved $ref {ref}"
                    target = target[part]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(discover_document)


def test_discover_lists_the_lifecycle_requests(method_names):
    assert set(LIFECYCLE_REQUESTS) <= method_names


def test_discover_lists_every_viewmodel_method_and_action(method_names, viewmodels_available):
    missing = sorted(set(VIEWMODEL_METHODS + ACTION_METHODS) - method_names)
    assert not missing, f"README methods missing from rpc.discover: {missing}"
    undocumented = sorted(name for name in method_names if "/" in name and name.split("/")[0] in ACTIONS
                          and name not in ACTION_METHODS)
    assert not undocumented, f"actions served but not in protocol/README.md: {undocumented}"


def test_action_params_are_described(discover_document, viewmodels_available):
    by_name = {method["name"]: method for method in discover_document["methods"]}
    for method in ACTION_METHODS:
        described = {param["name"] for param in by_name[method]["params"] if "name" in param}
        type_, action = method.split("/")
        expected = {"viewModel", *ACTIONS[type_][action]}
        assert expected <= described, f"{method}: params {sorted(described)} lack {sorted(expected - described)}"


def test_checked_in_openrpc_json_equals_rpc_discover(discover_document):
    path = HERE.parent / "openrpc.json"
    if not path.exists():
        pytest.skip("protocol/openrpc.json is not checked in yet")
    assert json.loads(path.read_text()) == discover_document, \
        "protocol/openrpc.json is stale: regenerate it with `storefront openrpc > protocol/openrpc.json`"
