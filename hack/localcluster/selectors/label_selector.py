"""Parsed label selectors: from a query parameter or a metav1.LabelSelector, and matching.

`LabelSelector.parse` reads the `labelSelector` query parameter; `from_label_selector` converts a
metav1.LabelSelector the way `LabelSelectorAsSelector` does (nil matches nothing, empty matches
everything). Both raise 400 BadRequest with the apiserver's message when the input is invalid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import bad_request
from ..go_format import go_quote
from .label_parser import parse_requirements
from .label_requirement import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    IN,
    NOT_IN,
    LabelRequirement,
    new_requirement,
)
from .selector_error import SelectorError

Json = dict[str, Any]

__all__ = ["LabelSelector", "label_selector_string"]


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: the AND of its requirements, sorted by key as Go keeps them.

    `nothing` marks the selector a nil metav1.LabelSelector converts to, which matches no object.
    """

    requirements: tuple[LabelRequirement, ...] = ()
    nothing: bool = False

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse a `labelSelector` query parameter; 400 BadRequest with the apiserver's message."""
        return cls._of(lambda: parse_requirements(text))

    @classmethod
    def from_label_selector(cls, selector: Json | None) -> LabelSelector:
        """metav1.LabelSelectorAsSelector: nil matches nothing, empty matches everything."""
        if selector is None:
            return cls(nothing=True)
        return cls._of(lambda: _requirements_of(selector))

    @classmethod
    def from_validated_set(cls, labels: Mapping[str, str]) -> LabelSelector:
        """labels.SelectorFromValidatedSet: `key=value` for each entry, without validation
        (for maps the API server already validated, such as a Service's selector)."""
        return cls(tuple(LabelRequirement(k, EQUALS, (v,)) for k, v in sorted(labels.items())))

    @classmethod
    def _of(cls, requirements: Callable[[], list[LabelRequirement]]) -> LabelSelector:
        """The selector of what `requirements()` returns, sorted by key; 400 when it raises."""
        try:
            reqs = requirements()
        except SelectorError as err:
            raise bad_request(str(err)) from None
        return cls(tuple(sorted(reqs, key=lambda r: r.key)))

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict the selection (Go's Selector.Empty)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        have = labels or {}
        return all(r.matches(have) for r in self.requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The single value the selector demands for `key`, if it demands exactly one."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        if self.nothing:
            return ""
        return ",".join(str(r) for r in self.requirements)


_SELECTOR_OPERATORS = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}


def _requirements_of(selector: Json) -> list[LabelRequirement]:
    reqs: list[LabelRequirement] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        reqs.append(new_requirement(str(key), EQUALS, [str(value)], None))
    for expr in selector.get("matchExpressions") or []:
        operator = str(expr.get("operator", ""))
        if operator not in _SELECTOR_OPERATORS:
            raise SelectorError(f"{go_quote(operator)} is not a valid label selector operator")
        values = [str(v) for v in expr.get("values") or []]
        reqs.append(
            new_requirement(str(expr.get("key", "")), _SELECTOR_OPERATORS[operator], values, None)
        )
    return reqs


def label_selector_string(selector: Json | None) -> str:
    """The canonical string of a metav1.LabelSelector (LabelSelectorAsSelector(s).String()).

    Requirements are sorted by key; set values are sorted. A nil or empty selector gives "".
    An invalid selector raises ApiError (400) with the message Go's conversion returns.
    """
    return str(LabelSelector.from_label_selector(selector))
