"""Errors that name the field they are about, shared by conversion and validation."""

from __future__ import annotations

import attrs

__all__ = ["ConversionError", "FieldError", "InvalidObject"]


@attrs.frozen
class FieldError:
    """A problem with one field. `path` is dotted from the object root, map keys as segments
    and list items indexed: `spec.services.Frontend.replicas`, `spec.pvcs[0].size`."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ConversionError(ValueError):
    """JSON that does not fit the model's types (a string where a number belongs, a missing
    required field...). `errors` lists every problem found, not just the first."""

    def __init__(self, type_name: str, errors: list[FieldError]) -> None:
        self.type_name = type_name
        self.errors = errors
        super().__init__(f"invalid {type_name}: " + "; ".join(str(e) for e in errors))


class InvalidObject(ValueError):
    """An object that does not convert or breaks a validation rule; `errors` names every field.

    Raised by `api.load.load_valid`, the one way reconcilers and `render` read our kinds."""

    def __init__(self, kind: str, errors: list[FieldError], *, converted: bool) -> None:
        self.kind = kind
        self.errors = errors
        #: The JSON fitted the types and a validation rule failed (False: it did not convert).
        self.converted = converted
        super().__init__("; ".join(str(e) for e in errors))
