"""A structural merge of a partial object over a generated one, as the original merges the
overrides of a DGDR: objects key by key, lists of named objects entry by entry (matched by
`name`), any other list replaced whole.

`atomic` lists the paths (tuples of keys) whose lists are replaced even when named, such as a
graph's `spec.env`; `closed` the paths whose named lists may only change entries that exist
(a graph's components: an override cannot add topology). `$patch: {args: append}` on a named
entry appends its `args` to the existing ones instead of replacing them.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from api.kube import copy_json

Json = dict[str, Any]
Path = tuple[str, ...]

__all__ = ["MergeError", "merge_named"]

PATCH_KEY = "$patch"


class MergeError(ValueError):
    """An override that cannot apply; the message names the entry."""


def merge_named(base: Json, override: Json, *, atomic: Collection[Path] = (),
                closed: Collection[Path] = ()) -> Json:
    """A copy of `base` with `override` merged over it."""
    result = copy_json(base)
    _merge(result, override, (), atomic, closed)
    return result


def _merge(result: Json, override: Json, path: Path, atomic: Collection[Path],
           closed: Collection[Path]) -> None:
    append_args = override.get(PATCH_KEY) == {"args": "append"}
    for key, value in override.items():
        if key == PATCH_KEY:
            continue
        here = (*path, key)
        current = result.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            _merge(current, value, here, atomic, closed)
        elif key == "args" and append_args:
            if not isinstance(current, list):
                raise MergeError(f"{'.'.join(path)}: $patch args: append needs the generated "
                                 "container to have args")
            result[key] = [*current, *copy_json(value)]
        elif (isinstance(value, list) and isinstance(current, list) and here not in atomic
              and _named(value) and _named(current)):
            result[key] = _merge_list(current, value, here, atomic, closed)
        else:
            result[key] = copy_json(_without_patch(value))


def _named(items: list[Any]) -> bool:
    return all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items)


def _merge_list(current: list[Json], override: list[Json], path: Path,
                atomic: Collection[Path], closed: Collection[Path]) -> list[Json]:
    merged = [copy_json(i) for i in current]
    index = {str(i["name"]): n for n, i in enumerate(merged)}
    for entry in override:
        name = str(entry["name"])
        if name in index:
            _merge(merged[index[name]], entry, path, atomic, closed)
        elif path in closed:
            known = ", ".join(sorted(index)) or "none"
            raise MergeError(f"{'.'.join(path)}: no entry named {name!r} in the generated "
                             f"object (it has {known}); an override cannot add one")
        else:
            if entry.get(PATCH_KEY) is not None:
                raise MergeError(f"{'.'.join(path)}: $patch on {name!r}, which the generated "
                                 "object does not have")
            merged.append(copy_json(entry))
            index[name] = len(merged) - 1
    return merged


def _without_patch(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_patch(v) for k, v in value.items() if k != PATCH_KEY}
    if isinstance(value, list):
        return [_without_patch(v) for v in value]
    return value
