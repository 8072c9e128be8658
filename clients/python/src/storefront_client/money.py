"""Money on the wire is a decimal string ("400.99"). Cart lines carry no total: compute it here, in integer
minor units (cents), never with binary floats, so that line totals always add up to the cart's subtotal.

    >>> line_total({"unitPrice": "400.99", "quantity": 2})
    '801.98'
    >>> line_total({"unitPrice": "0.10", "quantity": 3})    # 0.1 * 3 in floats is 0.30000000000000004
    '0.30'
"""

from __future__ import annotations

import re
from typing import Any, Mapping

_AMOUNT = re.compile(r"(-?)([0-9]+)(?:\.([0-9]{1,2}))?")


def minor_units(amount: str) -> int:
    """The minor units of a decimal string: "400.99" -> 40099.

    Raises ValueError unless `amount` is a string of digits with an optional `-` and at most two decimals.
    """
    match = _AMOUNT.fullmatch(amount) if isinstance(amount, str) else None
    if match is None:
        raise ValueError(f"not a decimal amount: {amount!r}")
    sign, whole, fraction = match.groups()
    units = int(whole) * 100 + int((fraction or "").ljust(2, "0"))
    return -units if sign else units


def format_minor_units(units: int) -> str:
    """80198 -> "801.98"."""
    whole, cents = divmod(abs(units), 100)
    return f"{'-' if units < 0 else ''}{whole}.{cents:02d}"


def line_total(line: Mapping[str, Any]) -> str:
    """A cart line's total, `unitPrice × quantity`, as a decimal string."""
    quantity = line["quantity"]
    if not isinstance(quantity, int) or isinstance(quantity, bool):
        raise ValueError(f"not a whole quantity: {quantity!r}")
    return format_minor_units(minor_units(line["unitPrice"]) * quantity)
