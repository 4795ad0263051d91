"""Kubernetes quantity parsing: exact values, every suffix family, rejections."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.quantity import QuantityError, is_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("1", 1),
        ("+1", 1),
        ("-1", -1),
        ("1.", 1),
        (".5", Fraction(1, 2)),
        ("0.1", Fraction(1, 10)),
        ("100m", Fraction(1, 10)),
        ("500m", Fraction(1, 2)),
        ("1n", Fraction(1, 10**9)),
        ("3u", Fraction(3, 10**6)),
        ("2k", 2000),
        ("1M", 10**6),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("1Ki", 1024),
        ("1Mi", 1024**2),
        ("1.5Gi", 3 * 1024**3 // 2),
        ("10Gi", 10 * 1024**3),
        ("1Ti", 1024**4),
        ("1Pi", 1024**5),
        ("1Ei", 1024**6),
        ("1e3", 1000),
        ("1E3", 1000),
        ("1e-3", Fraction(1, 1000)),
        ("1.5e+2", 150),
        ("12e0", 12),
    ],
)
def test_parses_exactly(text: str, value: int | Fraction) -> None:
    assert parse_quantity(text) == value
    assert isinstance(parse_quantity(text), Fraction)


def test_json_integers_are_quantities() -> None:
    assert parse_quantity(10) == 10


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "1 Gi",
        " 1",
        "1 ",
        "Gi",
        "m",
        ".",
        "+",
        "-",
        "1K",
        "1gi",
        "1mi",
        "1KiB",
        "1e",
        "1e1.5",
        "1.2.3",
        "1Gi1",
        "--1",
        "0x10",
        "1,5",
        "ten",
        "1ki",
        "∞",
        "1e3Ki",
    ],
)
def test_rejects(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)
    assert not is_quantity(text)


@pytest.mark.parametrize("value", [True, 1.5, None, [], {}])
def test_rejects_other_json_types(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(["", "k", "M", "Ki", "Gi", "m"]))
def test_suffix_scales_the_number(number: int, suffix: str) -> None:
    factor: dict[str, int | Fraction] = {
        "": 1,
        "k": 1000,
        "M": 10**6,
        "Ki": 1024,
        "Gi": 1024**3,
        "m": Fraction(1, 1000),
    }
    assert parse_quantity(f"{number}{suffix}") == number * factor[suffix]


@given(st.decimals(min_value=-(10**9), max_value=10**9, allow_nan=False, places=6))
def test_decimals_are_exact(number: object) -> None:
    text = format(number, "f")
    assert parse_quantity(text) == Fraction(text)
