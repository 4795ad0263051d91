"""One requirement of a label selector: its operators, validation, matching and text.

`new_requirement` is apimachinery's `labels.NewRequirement`: it validates the key, the operator
and the values, and reports every problem in one aggregated message as Go does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .. import name_validation
from ..go_format import go_quote
from .selector_error import SelectorError, aggregate

__all__ = [
    "BINARY_OPERATORS",
    "DOES_NOT_EXIST",
    "DOUBLE_EQUALS",
    "EQUALS",
    "EXACT_OPERATORS",
    "EXISTS",
    "GT",
    "IN",
    "LT",
    "NOT_EQUALS",
    "NOT_IN",
    "SET_OPERATORS",
    "LabelRequirement",
    "label_key_errors",
    "label_value_errors",
    "new_requirement",
]


def label_key_errors(key: str) -> list[str]:
    """The problems the apiserver finds with a label key (empty when it is valid)."""
    return name_validation.qualified_name_errors(key, name_validation.LABEL_SELECTOR)


def label_value_errors(value: str) -> list[str]:
    """The problems the apiserver finds with a label value (empty when it is valid)."""
    return name_validation.label_value_errors(value, name_validation.LABEL_SELECTOR)


def _parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None where Go reports an error."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    if not -(2**63) <= value < 2**63:
        return None
    return value


def _go_string_slice(values: list[str] | None) -> str:
    """`%#v` of a `[]string`, which is how field errors render a list bad value."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "in", "notin", "=", "==", "!="
GT, LT, EXISTS, DOES_NOT_EXIST = "gt", "lt", "exists", "!"
BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GT, LT)
SET_OPERATORS = (IN, NOT_IN)
EXACT_OPERATORS = (EQUALS, DOUBLE_EQUALS, NOT_EQUALS)


@dataclass(frozen=True)
class LabelRequirement:
    """One requirement: key, operator (selection.Operator spelling) and values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GT, LT):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = _parse_int64(labels[self.key])
            want = _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GT else have < want
        return False

    def __str__(self) -> str:
        prefix = "!" if self.operator == DOES_NOT_EXIST else ""
        if self.operator in (EXISTS, DOES_NOT_EXIST):
            return prefix + self.key
        symbol = {
            EQUALS: "=",
            DOUBLE_EQUALS: "==",
            NOT_EQUALS: "!=",
            IN: " in ",
            NOT_IN: " notin ",
            GT: ">",
            LT: "<",
        }[self.operator]
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in SET_OPERATORS:
            vals = "(" + vals + ")"
        return self.key + symbol + vals


def new_requirement(
    key: str, op: str, values: list[str] | None, path: str | None
) -> LabelRequirement:
    """labels.NewRequirement: validates and reports every problem the way Go aggregates them.

    `path` is the field path prefix the caller passed (None renders as Go's nil path).
    """
    problems: list[str] = []

    def child(name: str) -> str:
        return name if path is None else f"{path}.{name}"

    key_errs = label_key_errors(key)
    if key_errs:
        problems.append(f"{child('key')}: Invalid value: {go_quote(key)}: {'; '.join(key_errs)}")
    vals = values or []
    values_path = child("values")
    if op in SET_OPERATORS:
        if not vals:
            problems.append(
                f"{values_path}: Invalid value: {_go_string_slice(values)}: "
                "for 'in', 'notin' operators, values set can't be empty"
            )
    elif op in EXACT_OPERATORS:
        if len(vals) != 1:
            problems.append(
                f"{values_path}: Invalid value: {_go_string_slice(values)}: "
                "exact-match compatibility requires one single value"
            )
    elif op in (EXISTS, DOES_NOT_EXIST):
        if vals:
            problems.append(
                f"{values_path}: Invalid value: {_go_string_slice(values)}: "
                "values set must be empty for exists and does not exist"
            )
    elif op in (GT, LT):
        if len(vals) != 1:
            problems.append(
                f"{values_path}: Invalid value: {_go_string_slice(values)}: "
                "for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, v in enumerate(vals):
            if _parse_int64(v) is None:
                problems.append(
                    f"{values_path}[{i}]: Invalid value: {go_quote(v)}: "
                    "for 'Gt', 'Lt' operators, the value must be an integer"
                )
    else:
        supported = ", ".join(go_quote(o) for o in (*BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST))
        problems.append(
            f"{child('operator')}: Unsupported value: {go_quote(op)}: supported values: {supported}"
        )
    for i, v in enumerate(vals):
        errs = label_value_errors(v)
        if errs:
            problems.append(
                f"{values_path}[{i}][{key}]: Invalid value: {go_quote(v)}: {'; '.join(errs)}"
            )
    if problems:
        raise SelectorError(aggregate(problems))
    return LabelRequirement(key, op, tuple(vals))
