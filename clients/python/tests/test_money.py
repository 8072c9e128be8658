"""Cart line totals: unitPrice × quantity in integer minor units, never binary floats."""

from __future__ import annotations

import pytest

from storefront_client import format_minor_units, line_total, minor_units


@pytest.mark.parametrize(("unit_price", "quantity", "expected"), [
    ("400.99", 2, "801.98"),
    ("0.10", 3, "0.30"),
    ("19.99", 3, "59.97"),
    ("1.15", 100, "115.00"),
    ("5", 1, "5.00"),
    ("0.5", 3, "1.50"),
    ("-3.10", 2, "-6.20"),
    ("-0.05", 0, "0.00"),
    ("90071992547409.93", 100, "9007199254740993.00"),
])
def test_line_total_is_exact(unit_price, quantity, expected):
    assert line_total({"unitPrice": unit_price, "quantity": quantity}) == expected


@pytest.mark.parametrize("amount", ["12,50", "1.999", "1.", ".5", " 1.00", "+1.00", "1e2", 19.99, None])
def test_minor_units_refuses_what_is_not_a_decimal_amount(amount):
    with pytest.raises(ValueError):
        minor_units(amount)


def test_line_total_refuses_a_fractional_quantity():
    with pytest.raises(ValueError):
        line_total({"unitPrice": "1.00", "quantity": 1.5})


def test_minor_units_round_trip():
    for text in ["0.00", "0.01", "-0.01", "19.99", "1000000.00"]:
        assert format_minor_units(minor_units(text)) == text
