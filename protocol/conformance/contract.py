"""The method catalogue of protocol/README.md, written down once for the tests."""

LIFECYCLE_REQUESTS = ["initialize", "ping", "rpc.discover", "shutdown"]
VIEWMODEL_METHODS = ["viewModel/open", "viewModel/get", "viewModel/close"]

#: type -> action -> the params it takes besides `viewModel` (README "Actions").
ACTIONS: dict[str, dict[str, list[str]]] = {
    "catalog": {
        "refresh": [], "search": ["query"], "setCategory": ["category"], "setSort": ["sort"], "loadMore": [],
        "toggleSelection": ["productId"], "selectAll": [], "clearSelection": [], "deleteSelected": [],
    },
    "productDetail": {"refresh": [], "toggleFavorite": [], "incrementQuantity": [], "decrementQuantity": [],
                      "addToCart": []},
    "productForm": {"setField": ["field", "value"], "submit": [], "reset": [], "refresh": []},
    "cart": {"refresh": [], "add": ["productId", "quantity"], "setQuantity": ["productId", "quantity"],
             "remove": ["productId"], "clear": [], "dismissNotices": [], "checkout": []},
    "dashboard": {"reload": [], "reloadSection": ["section"]},
}

ACTION_METHODS = [f"{type_}/{action}" for type_, actions in ACTIONS.items() for action in actions]

REFUSAL_REASONS = {
    "productNotFound", "categoryNotFound", "invalidQuantity", "outOfStock", "quantityExceedsStock",
    "quantityExceedsMaximum", "notInCart", "emptyCart", "validationFailed", "alreadySubmitting", "notReady",
    "nothingSelected", "unknownField", "unknownSection", "loadFailed", "notListed", "alreadySubmitted",
}
FAILURE_REASONS = {"serviceUnavailable", "storageFailed"}
