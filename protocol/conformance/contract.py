"""The contract as the server describes it in rpc.discover: the suite restates none of it.

Only the lifecycle methods (fixed by protocol/README.md, not by the ViewModels) are named here.
"""

from __future__ import annotations

from dataclasses import dataclass

LIFECYCLE_REQUESTS = ["initialize", "ping", "rpc.discover", "shutdown"]
VIEWMODEL_METHODS = ["viewModel/open", "viewModel/get", "viewModel/close"]

SCHEMAS = "#/components/schemas/"


@dataclass(frozen=True)
class Contract:
    """What rpc.discover says about ViewModels, actions and their errors."""

    document: dict
    #: type -> action -> the params it takes besides `viewModel` ({name: required}).
    actions: dict[str, dict[str, dict[str, bool]]]
    #: type -> the name of its state schema in components.schemas.
    state_schemas: dict[str, str]
    refusal_reasons: frozenset[str]
    failure_reasons: frozenset[str]

    @property
    def action_methods(self) -> list[str]:
        return [f"{type_}/{action}" for type_, actions in self.actions.items() for action in actions]

    @classmethod
    def from_discover(cls, document: dict) -> "Contract":
        index = document["x-viewModels"]
        methods = {method["name"]: method for method in document["methods"]}
        actions: dict[str, dict[str, dict[str, bool]]] = {type_: {} for type_ in index}
        for name, method in methods.items():
            type_, _, action = name.partition("/")
            if type_ in actions:
                actions[type_][action] = {param["name"]: param.get("required", False)
                                          for param in method["params"] if param["name"] != "viewModel"}
        components = document["components"]["schemas"]

        def reasons(component: str) -> frozenset[str]:
            return frozenset(components[component]["properties"]["reason"]["enum"])

        return cls(
            document=document,
            actions=actions,
            state_schemas={type_: entry["state"].removeprefix(SCHEMAS) for type_, entry in index.items()},
            refusal_reasons=reasons("RefusalData"),
            failure_reasons=reasons("FailureData"),
        )
