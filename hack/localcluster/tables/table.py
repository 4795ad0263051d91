"""Assembly of the meta.k8s.io Table kube-apiserver returns for `as=Table` requests."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..errors import bad_request
from ..go_format import go_quote
from ..registry import ResourceType
from .cells import as_dict, name_of
from .custom_resources import (
    DEFAULT_COLUMNS,
    crd_cell,
    crd_column_definitions,
    crd_columns,
    created_at,
)
from .printers import PRINTERS

Json = dict[str, Any]

__all__ = ["check_include_object", "to_table"]

_INCLUDE_OBJECT = ("", "Metadata", "None", "Object")


def check_include_object(value: str) -> None:
    """Validate the `includeObject` query parameter as the apiserver does before listing."""
    if value not in _INCLUDE_OBJECT:
        raise bad_request(
            "Unable to convert to Table as requested: includeObject: Invalid value: "
            f"{go_quote(value)}: must be 'Metadata', 'Object', 'None', or empty"
        )


def _row_object(obj: Json, include_object: str, group_version: str) -> Json | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": group_version,
        "metadata": copy.deepcopy(as_dict(obj.get("metadata"))),
    }


def to_table(
    rt: ResourceType,
    objects: list[Json],
    *,
    include_object: str = "Metadata",
    now: datetime | None = None,
    list_metadata: Mapping[str, Any] | None = None,
    no_headers: bool = False,
    group_version: str = "meta.k8s.io/v1",
) -> Json:
    """The meta.k8s.io Table the apiserver returns for `objects` of resource type `rt`.

    `include_object` is TableOptions.includeObject ("" means "Metadata"); `list_metadata` is the
    ListMeta to report (resourceVersion, continue, remainingItemCount); `no_headers` mirrors
    TableOptions.noHeaders; `group_version` is the negotiated Table version (meta.k8s.io/v1 or
    meta.k8s.io/v1beta1), which the PartialObjectMetadata rows also carry.
    """
    check_include_object(include_object)
    when = now or datetime.now(UTC)
    columns: list[Json]
    rows: list[Json] = []
    printer = PRINTERS.get((rt.group, rt.kind))
    if rt.custom:
        columns = crd_column_definitions(rt)
        custom_columns = crd_columns(rt)
        for obj in objects:
            cells = [name_of(obj), *(crd_cell(c, obj, when) for c in custom_columns)]
            rows.append({"cells": cells})
    elif printer is not None:
        columns = [c.to_json() for c in printer.columns]
        for obj in objects:
            cells, conditions = printer.row(obj, when)
            row: Json = {"cells": cells}
            if conditions:
                row["conditions"] = conditions
            rows.append(row)
    else:
        columns = [c.to_json() for c in DEFAULT_COLUMNS]
        for obj in objects:
            rows.append({"cells": [name_of(obj), created_at(obj)]})
    for row, obj in zip(rows, objects, strict=True):
        row["object"] = _row_object(obj, include_object, group_version)
    # The default convertor appends to a nil slice, so an empty list encodes as null there.
    default_convertor = not rt.custom and printer is None
    return {
        "kind": "Table",
        "apiVersion": group_version,
        "metadata": dict(list_metadata or {}),
        "columnDefinitions": None if no_headers else columns,
        "rows": None if default_convertor and not rows else rows,
    }
