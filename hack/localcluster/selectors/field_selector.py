"""Parsed field selectors: splitting, unescaping, label conversion per kind, and matching.

`FieldSelector.parse` splits and unescapes like apimachinery's `fields` package, then converts
each label with the kind's conversion function (`field_labels`); matching reads the values
`field_values` derives from the object.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import bad_request
from ..registry import BUILTIN_TYPES, ResourceType
from .field_labels import convert_label
from .field_values import object_fields
from .selector_error import SelectorError

Json = dict[str, Any]

__all__ = ["FieldRequirement", "FieldSelector"]


@dataclass(frozen=True)
class FieldRequirement:
    """One term: field, `=` (also for `==`) or `!=`, and the unescaped value."""

    field: str
    operator: str
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        have = fields.get(self.field, "")
        return have == self.value if self.operator == "=" else have != self.value

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{self.value}"


def _split_terms(text: str) -> list[str]:
    if not text:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _unescape(value: str) -> str:
    if not any(c in value for c in "\\,="):
        return value
    out = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch in "\\,=":
                out.append(ch)
            else:
                raise SelectorError(
                    "invalid field selector: invalid escape sequence: \\" + ch
                )
            in_slash = False
            continue
        if ch == "\\":
            in_slash = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


BUILTIN_SCOPE: dict[tuple[str, str], bool] = {
    (rt.group, rt.kind): rt.namespaced for rt in BUILTIN_TYPES
}


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector: the AND of its terms, with labels converted for the kind."""

    requirements: tuple[FieldRequirement, ...] = ()
    kind: str = ""
    group: str = ""
    custom: bool = False
    namespaced: bool = True
    selectable_fields: tuple[str, ...] = field(default=())

    @classmethod
    def parse(
        cls,
        text: str,
        kind: str,
        group: str,
        *,
        custom: bool | None = None,
        namespaced: bool | None = None,
        selectable_fields: Iterable[str] = (),
    ) -> FieldSelector:
        """Parse a `fieldSelector` for a kind; 400 BadRequest with the apiserver's message.

        `custom` and `namespaced` default to what the built-in registry says about (group, kind);
        a kind it does not know in a dotted group is taken to be a namespaced custom resource.
        `selectable_fields` are the CRD version's `selectableFields[].jsonPath` values.
        """
        # CRD groups always contain a dot, so dotless groups ("", apps, batch, ...) are built in.
        builtin = (group, kind) in BUILTIN_SCOPE or "." not in group
        is_custom = (not builtin) if custom is None else custom
        if namespaced is None:
            namespaced = BUILTIN_SCOPE.get((group, kind), True)
        selectable = tuple(p.lstrip(".") for p in selectable_fields)
        try:
            parsed: list[tuple[str, str, str]] = []
            for part in sorted(_split_terms(text)):
                if part == "":
                    continue
                split = _split_term(part)
                if split is None:
                    raise SelectorError(
                        f"invalid selector: '{text}'; can't understand '{part}'"
                    )
                lhs, op, rhs = split
                parsed.append((lhs, "!=" if op == "!=" else "=", _unescape(rhs)))
            reqs = tuple(
                FieldRequirement(
                    convert_label(
                        group,
                        kind,
                        lhs,
                        custom=is_custom,
                        namespaced=namespaced,
                        selectable=frozenset(selectable),
                    ),
                    op,
                    value,
                )
                for lhs, op, value in parsed
            )
        except SelectorError as err:
            raise bad_request(str(err)) from None
        return cls(reqs, kind, group, is_custom, namespaced, selectable)

    @classmethod
    def for_resource(cls, text: str, rt: ResourceType) -> FieldSelector:
        """Parse for a served resource type, taking scope, CRD-ness and selectable fields from it.

        A CRD version's `selectableFields[].jsonPath` values are read from
        `rt.extra["selectable_fields"]` when the registry put them there.
        """
        selectable = rt.extra.get("selectable_fields") or ()
        return cls.parse(
            text,
            rt.kind,
            rt.group,
            custom=rt.custom,
            namespaced=rt.namespaced,
            selectable_fields=[str(p) for p in selectable],
        )

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict the selection."""
        return not self.requirements

    def fields_of(self, obj: Json) -> dict[str, str]:
        """The object's selectable field values for this selector's kind."""
        return object_fields(
            obj,
            self.kind,
            self.group,
            custom=self.custom,
            namespaced=self.namespaced,
            selectable_fields=self.selectable_fields,
        )

    def matches(self, obj: Json) -> bool:
        if not self.requirements:
            return True
        fields = self.fields_of(obj)
        return all(r.matches(fields) for r in self.requirements)

    def requires_exact_match(self, field_name: str) -> str | None:
        """The value demanded for `field_name` by an `=` term, if any."""
        for r in self.requirements:
            if r.field == field_name and r.operator == "=":
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)
