"""rpc.discover: an OpenRPC 1.3 document describing every method, and protocol/README.md in step with it."""

from __future__ import annotations

import json
import pathlib
import re

from jsonschema import Draft202012Validator

from contract import LIFECYCLE_REQUESTS, VIEWMODEL_METHODS

HERE = pathlib.Path(__file__).resolve().parent
README = HERE.parent / "README.md"


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
    for entry in discover_document["x-viewModels"].values():
        for ref in entry.values():
            assert ref.removeprefix("#/components/schemas/") in discover_document["components"]["schemas"], ref


def test_discover_lists_the_lifecycle_and_viewmodel_methods(method_names):
    assert set(LIFECYCLE_REQUESTS + VIEWMODEL_METHODS) <= method_names


def test_every_viewmodel_type_has_actions_a_state_schema_and_opens_with_its_type(discover_document, contract):
    opened = next(m for m in discover_document["methods"] if m["name"] == "viewModel/open")
    types = next(p for p in opened["params"] if p["name"] == "type")["schema"]["enum"]
    assert sorted(types) == sorted(contract.actions) == sorted(contract.state_schemas)
    for type_, actions in contract.actions.items():
        assert actions, f"{type_} has no actions"


def test_every_param_has_a_valid_schema(discover_document):
    for method in discover_document["methods"]:
        for param in method["params"]:
            assert {"name", "schema"} <= set(param), f"{method['name']}: {param}"
            Draft202012Validator.check_schema(param["schema"])


def test_readme_documents_every_action_the_server_serves(contract):
    # protocol/README.md "Actions": one bullet per ViewModel type naming each of its actions in backticks.
    text = README.read_text()
    section = text[text.index("### Actions"):]
    section = section[:section.index("\n### ", 1)]
    bullets = {match.group(1): match.group(0) for match in re.finditer(r"^- (\w+): .*?(?=^- |\Z)", section, re.M | re.S)}
    for type_, actions in contract.actions.items():
        assert type_ in bullets, f"protocol/README.md Actions has no bullet for {type_}"
        undocumented = [action for action in actions if not re.search(rf"`{re.escape(action)}[` ]", bullets[type_])]
        assert not undocumented, f"{type_} actions served but not in protocol/README.md: {undocumented}"


def test_checked_in_openrpc_json_equals_rpc_discover(discover_document):
    path = HERE.parent / "openrpc.json"
    assert path.exists(), "protocol/openrpc.json is missing: write it with `storefront openrpc --write protocol`"
    assert json.loads(path.read_text()) == discover_document, \
        "protocol/openrpc.json is stale: regenerate it with `storefront openrpc --write protocol`"


def test_checked_in_state_schemas_are_the_discovered_ones(discover_document, contract):
    # protocol/schemas/<State>.json is the same schema as components.schemas.<State>, with its $defs inlined.
    for type_, name in contract.state_schemas.items():
        path = HERE.parent / "schemas" / f"{name}.json"
        assert path.exists(), f"protocol/schemas/{name}.json is missing"
        document = json.loads(path.read_text())
        discovered = discover_document["components"]["schemas"][name]
        assert set(document["properties"]) == set(discovered["properties"]), name
        assert sorted(document["required"]) == sorted(discovered["required"]), name
