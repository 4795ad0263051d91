"""Table columns and cells of custom resources (the apiextensions table convertor), and of the
default convertor that kinds without a printer get.

A custom resource's table is NAME, then its version's additionalPrinterColumns evaluated with the
kubectl JSONPath dialect (only the first result of a column is shown), or a single AGE column
when the CRD declares none. The default convertor shows NAME and CREATED AT, an RFC 3339 time.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..registry import PrinterColumn, ResourceType
from .cell_text import cell_text
from .cells import as_dict
from .columns import CREATION_TIMESTAMP_DESCRIPTION, NAME, Col
from .jsonpath import JSONPathError, jsonpath
from .time_format import ZERO_TIME, human_duration, parse_rfc3339, parse_time

Json = dict[str, Any]

__all__ = ["DEFAULT_COLUMNS", "crd_cell", "crd_column_definitions", "crd_columns", "created_at"]

_DEFAULT_CRD_COLUMNS = (
    PrinterColumn(
        name="Age",
        type="date",
        json_path=".metadata.creationTimestamp",
        description=CREATION_TIMESTAMP_DESCRIPTION,
    ),
)


def _integer_cell(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return None


def _number_cell(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _date_cell(value: Any, now: datetime) -> str | None:
    if not isinstance(value, str):
        return None
    if value in ("", '""'):
        return "<unknown>"
    ts = parse_rfc3339(value)
    if ts is None:
        return "<invalid>"
    return "<unknown>" if ts == ZERO_TIME else human_duration(now - ts)


def crd_cell(column: PrinterColumn, obj: Json, now: datetime) -> Any:
    """The cell of one additionalPrinterColumn: the first JSONPath result, typed by the column."""
    try:
        results = jsonpath(obj, column.json_path)
    except JSONPathError:
        return None
    if not results:
        return None
    value = results[0]
    kind = column.type
    if kind == "string":
        return cell_text(value)
    if value is None:
        return None
    if kind == "integer":
        return _integer_cell(value)
    if kind == "number":
        return _number_cell(value)
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        return _date_cell(value, now)
    return None


def crd_columns(rt: ResourceType) -> tuple[PrinterColumn, ...]:
    """The printer columns of a custom resource type (AGE when it declares none)."""
    return rt.printer_columns or _DEFAULT_CRD_COLUMNS


def crd_column_definitions(rt: ResourceType) -> list[Json]:
    """The Table column definitions of a custom resource type: NAME, then its printer columns."""
    defs = [NAME.to_json()]
    for col in crd_columns(rt):
        description = col.description or (
            f"Custom resource definition column (in JSONPath format): {col.json_path}"
        )
        defs.append(
            {
                "name": col.name,
                "type": col.type,
                "format": col.format,
                "description": description,
                "priority": col.priority,
            }
        )
    return defs


#: The default convertor's columns.
DEFAULT_COLUMNS = (NAME, Col("Created At", "date", CREATION_TIMESTAMP_DESCRIPTION))


def created_at(obj: Json) -> str:
    """The CREATED AT cell of the default convertor."""
    ts = parse_time(as_dict(obj.get("metadata")).get("creationTimestamp"))
    if ts is None:
        return "0001-01-01T00:00:00Z"
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
