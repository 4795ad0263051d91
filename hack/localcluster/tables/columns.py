"""Column definitions of the built-in printers, and the layout most of them share.

Nearly every built-in table is NAME, the kind's own columns, AGE, then a few more columns, mostly
the wide (priority 1) ones `kubectl get -o wide` adds. `named_columns` builds that layout, and
the kinds with a pod template share their wide Containers / Images (/ Selector) columns through
`template_columns`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

Json = dict[str, Any]

__all__ = [
    "AGE",
    "CREATION_TIMESTAMP_DESCRIPTION",
    "NAME",
    "NAME_DESCRIPTION",
    "READY_PODS_DESCRIPTION",
    "Col",
    "Printer",
    "Row",
    "named_columns",
    "template_columns",
]

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names"
    "#names"
)
CREATION_TIMESTAMP_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the "
    "system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata"
)
READY_PODS_DESCRIPTION = "Number of the pod with ready state"
_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."


@dataclass(frozen=True)
class Col:
    """One TableColumnDefinition."""

    name: str
    type: str
    description: str
    priority: int = 0
    format: str = ""

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


#: A row's cells, and the conditions the row carries (only pods report any).
Row = tuple[list[Any], list[Json] | None]


@dataclass(frozen=True)
class Printer:
    """A built-in kind's table: its column definitions and the function that fills one row."""

    columns: tuple[Col, ...]
    row: Callable[[Json, datetime], Row]


NAME = Col("Name", "string", NAME_DESCRIPTION, format="name")
AGE = Col("Age", "string", CREATION_TIMESTAMP_DESCRIPTION)


def named_columns(*columns: Col, after_age: Sequence[Col] = ()) -> tuple[Col, ...]:
    """NAME, the kind's columns, AGE, then the `after_age` columns."""
    return (NAME, *columns, AGE, *after_age)


def template_columns(selector_description: str | None = None) -> tuple[Col, ...]:
    """The wide columns of a kind with a pod template: Containers, Images and maybe Selector."""
    columns = [Col("Containers", "string", _CONTAINERS, 1), Col("Images", "string", _IMAGES, 1)]
    if selector_description is not None:
        columns.append(Col("Selector", "string", selector_description, 1))
    return tuple(columns)
