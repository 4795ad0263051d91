"""The 409 Conflict server-side apply raises when it would change fields other managers own."""

from __future__ import annotations

from collections.abc import Mapping, Set

from ..errors import ApiError
from ..fields_v1 import Path, iteration_order, path_string
from ..managed_fields import ManagerId

__all__ = ["conflict_error"]


def conflict_error(conflicts: Mapping[ManagerId, Set[Path]]) -> ApiError:
    listed: list[tuple[ManagerId, Path]] = []
    for mid in sorted(conflicts, key=ManagerId.identifier):
        listed.extend((mid, p) for p in sorted(conflicts[mid], key=iteration_order))
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {mid.describe()}",
            "field": path_string(p),
        }
        for mid, p in listed
    ]
    if len(listed) == 1:
        mid, p = listed[0]
        message = f"Apply failed with 1 conflict: conflict with {mid.describe()}: {path_string(p)}"
    else:
        lines: list[str] = []
        for mid in sorted(conflicts, key=ManagerId.identifier):
            lines.append(f"conflicts with {mid.describe()}:")
            lines.extend(f"- {path_string(p)}" for p in sorted(conflicts[mid], key=iteration_order))
        message = f"Apply failed with {len(listed)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, {"causes": causes})
