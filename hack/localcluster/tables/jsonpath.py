"""Evaluation of kubectl-dialect JSONPath expressions against decoded JSON.

`jsonpath(obj, expr)` returns every match in document order. Evaluation errors that client-go's
FindResults reports (an index out of range, comparing a string with a number) yield no match, as
the apiextensions table convertor then shows an empty cell; a malformed expression raises
`JSONPathError`.
"""

from __future__ import annotations

import functools
from typing import Any

from .jsonpath_parser import (
    Field,
    Filter,
    JSONPathError,
    Literal,
    PathParser,
    Recursive,
    Slice,
    Step,
    Wildcard,
)

__all__ = ["JSONPath", "JSONPathError", "jsonpath"]


class _EvalError(Exception):
    """Evaluation failed the way client-go's FindResults fails (bad index, bad comparison)."""


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "other"


def _compare(left: Any, op: str, right: Any) -> bool:
    # text/template's eq/lt on the decoded JSON values: mixed kinds are an error, not false.
    kl, kr = _kind(left), _kind(right)
    if kl != kr or kl == "other":
        raise _EvalError("incompatible types for comparison")
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if kl == "bool":
        raise _EvalError("invalid type for comparison")
    if op == "<":
        return bool(left < right)
    if op == ">":
        return bool(left > right)
    if op == "<=":
        return bool(left <= right)
    return bool(left >= right)


def _descendants(value: Any) -> list[Any]:
    children: list[Any]
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, list):
        children = list(value)
    else:
        return []
    if not children:
        return []
    out = [value]
    for child in children:
        out.extend(_descendants(child))
    return out


def _apply(step: Step, values: list[Any]) -> list[Any]:
    out: list[Any] = []
    if isinstance(step, Field):
        for v in values:
            if isinstance(v, dict) and step.name in v:
                out.append(v[step.name])
        return out
    if isinstance(step, Wildcard):
        for v in values:
            if isinstance(v, dict):
                out.extend(v.values())
            elif isinstance(v, list):
                out.extend(v)
        return out
    if isinstance(step, Recursive):
        for v in values:
            out.extend(_descendants(v))
        return out
    if isinstance(step, Slice):
        for v in values:
            if v is None:
                continue
            if not isinstance(v, list):
                raise _EvalError("not array or slice")
            n = len(v)
            start = 0 if step.start is None else step.start
            if start < 0:
                start += n
            end = n if step.end is None else step.end
            if end < 0 or (end == 0 and step.end_derived):
                end += n
            if start == end:
                return out
            if start >= n or start < 0 or end > n or end < 0 or start > end:
                raise _EvalError("array index out of bounds")
            stride = 1
            if step.step is not None:
                if step.step <= 0:
                    raise _EvalError("step must be > 0")
                stride = step.step
            out.extend(v[start:end:stride])
        return out
    for v in values:
        if v is None:
            continue
        if not isinstance(v, list):
            raise _EvalError("not array or slice and cannot be filtered")
        for item in v:
            if _filter_passes(step, item):
                out.append(item)
    return out


def _side(operand: tuple[Any, ...] | Literal, item: Any) -> list[Any]:
    if isinstance(operand, Literal):
        return [operand.value]
    return _evaluate(operand, [item])


def _filter_passes(step: Filter, item: Any) -> bool:
    lefts = _side(step.left, item)
    if step.operator == "exists":
        return bool(lefts)
    if not lefts:
        return False
    if len(lefts) > 1:
        raise _EvalError("can only compare one element at a time")
    assert step.right is not None
    rights = _side(step.right, item)
    if not rights:
        return False
    if len(rights) > 1:
        raise _EvalError("can only compare one element at a time")
    return _compare(lefts[0], step.operator, rights[0])


def _evaluate(steps: tuple[Any, ...], values: list[Any]) -> list[Any]:
    for step in steps:
        if not values:
            return []
        values = _apply(step, values)
    return values


class JSONPath:
    """A compiled printer-column path such as `.status.conditions[?(@.type=="Ready")].status`."""

    def __init__(self, expr: str) -> None:
        text = expr.strip()
        if text.startswith("{") and text.endswith("}"):
            text = text[1:-1].strip()
        if text.startswith("$"):
            text = text[1:]
        if text and text[0] not in ".[":
            raise JSONPathError(f"unrecognized identifier {text}")
        self.expr = expr
        self._steps = PathParser(text).parse_steps()

    def find(self, obj: Any) -> list[Any]:
        """All matches, in document order; [] when nothing matches or evaluation fails."""
        try:
            return _evaluate(self._steps, [obj])
        except _EvalError:
            return []


@functools.lru_cache(maxsize=512)
def _compiled(expr: str) -> JSONPath:
    return JSONPath(expr)


def jsonpath(obj: Any, expr: str) -> list[Any]:
    """Evaluate a kubectl-dialect JSONPath against decoded JSON; JSONPathError if malformed."""
    return _compiled(expr).find(obj)
