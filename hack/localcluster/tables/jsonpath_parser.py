"""The parser of the kubectl JSONPath dialect (k8s.io/client-go/util/jsonpath) that printer
columns use: `.a.b`, `['a.b']`, `[*]`, `[0]`, `[1:3:2]`, `..name` and `[?(@.type=="Ready")]`.

An expression parses into a tuple of steps (`Field`, `Wildcard`, `Recursive`, `Slice`, `Filter`);
`jsonpath` evaluates them. A malformed expression raises `JSONPathError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..go_format import go_quote

__all__ = [
    "Field",
    "Filter",
    "JSONPathError",
    "Literal",
    "PathParser",
    "Recursive",
    "Slice",
    "Step",
    "Wildcard",
]


class JSONPathError(ValueError):
    """The expression is not valid JSONPath."""


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Wildcard:
    pass


@dataclass(frozen=True)
class Recursive:
    pass


@dataclass(frozen=True)
class Slice:
    start: int | None
    end: int | None
    step: int | None
    end_derived: bool = False


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Filter:
    left: tuple[Any, ...] | Literal
    operator: str
    right: tuple[Any, ...] | Literal | None


Step = Field | Wildcard | Recursive | Slice | Filter
_TERMINATORS = frozenset(".,[]$@{}") | frozenset(" \t\r\n")
_FILTER_OPERATORS = ("==", "!=", "<=", ">=", "<", ">")
_SLICE = re.compile(r"\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?)?")


class PathParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse_steps(self, *, stop: str = "") -> tuple[Step, ...]:
        steps: list[Step] = []
        while self.pos < len(self.text) and self.text[self.pos] not in stop:
            ch = self.text[self.pos]
            if self.text.startswith("..", self.pos):
                self.pos += 1
                steps.append(Recursive())
                if self.pos + 1 < len(self.text) and self.text[self.pos + 1] == "[":
                    self.pos += 1
                continue
            if ch == ".":
                self.pos += 1
                name = self._field_name()
                if name == "*":
                    steps.append(Wildcard())
                elif name:
                    steps.append(Field(name))
            elif ch == "[":
                steps.append(self._bracket())
            elif ch in " \t":
                self.pos += 1
            else:
                raise JSONPathError(f"unrecognized character in action: {go_quote(ch)}")
        return tuple(steps)

    def _field_name(self) -> str:
        out = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\" and self.pos + 1 < len(self.text):
                out.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            if ch in _TERMINATORS:
                break
            out.append(ch)
            self.pos += 1
        return "".join(out)

    def _bracket(self) -> Step:
        end = self._matching_bracket(self.pos)
        inner = self.text[self.pos + 1 : end].strip()
        self.pos = end + 1
        if inner.startswith("?"):
            body = inner[1:].strip()
            if not (body.startswith("(") and body.endswith(")")):
                raise JSONPathError(f"invalid filter: {inner}")
            return self._filter(body[1:-1].strip())
        if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
            return Field(inner[1:-1])
        if inner == "*":
            return Slice(None, None, None)
        m = _SLICE.fullmatch(inner)
        if not m or not inner:
            raise JSONPathError(f"invalid array index {inner}")
        start, end_text, step = m.groups()
        if ":" not in inner:
            if start is None:
                raise JSONPathError(f"invalid array index {inner}")
            return Slice(int(start), int(start) + 1, None, end_derived=True)
        return Slice(
            int(start) if start is not None else None,
            int(end_text) if end_text is not None else None,
            int(step) if step is not None else None,
        )

    def _matching_bracket(self, start: int) -> int:
        depth = 0
        for i in _unquoted_positions(self.text, start):
            ch = self.text[i]
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    return i
        raise JSONPathError("unterminated array")

    def _filter(self, body: str) -> Filter:
        split = _split_filter(body)
        if split is None:
            return Filter(_operand(body), "exists", None)
        left, op, right = split
        return Filter(_operand(left), op, _operand(right))


def _unquoted_positions(text: str, start: int = 0) -> Iterator[int]:
    """The positions from `start` on that are outside quoted strings (and are not quotes)."""
    quote = ""
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        else:
            yield i
        i += 1


def _split_filter(body: str) -> tuple[str, str, str] | None:
    for i in _unquoted_positions(body):
        for op in _FILTER_OPERATORS:
            if body.startswith(op, i):
                return body[:i].strip(), op, body[i + len(op) :].strip()
    return None


def _operand(text: str) -> tuple[Any, ...] | Literal:
    if text.startswith("@"):
        return PathParser(text[1:]).parse_steps()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return Literal(text[1:-1])
    if text in ("true", "false"):
        return Literal(text == "true")
    if re.fullmatch(r"[+-]?\d+", text):
        return Literal(int(text))
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", text):
        return Literal(float(text))
    raise JSONPathError(f"unrecognized filter operand {text}")
