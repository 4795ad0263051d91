"""metadata.managedFields: the FieldsV1 field-set encoding and the managedFields entries.

A field set is a set of paths. A path is a tuple of path elements, each kept in the exact
serialized form FieldsV1 uses for its keys, so a set converts to and from FieldsV1 without a
separate element type:

- ``f:<name>``  a field of a struct or a key of a map;
- ``k:<json>``  an element of an associative list (``listType=map``), by its key fields; the JSON
  object lists the key fields sorted by name, compactly, as the Go encoder writes it;
- ``v:<json>``  an element of a set (``listType=set``), by its value;
- ``i:<index>`` an element of an atomic list, by position (never produced by this server, but read).

In FieldsV1 a path that is both a member of the set and the parent of further members carries a
``".": {}`` entry; a member without children is an empty object. Elements are ordered as
structured-merge-diff orders them: fields by name, then keys, then values, then indexes.

Entries of metadata.managedFields are keyed the way the apiserver keys them: by manager,
operation, subresource and, for Update only, apiVersion (an applier keeps one entry whatever
version it applies in).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

Json = dict[str, Any]
Path = tuple[str, ...]

APPLY = "Apply"
UPDATE = "Update"

# Go's encoding/json escapes these even outside ASCII-only mode; Python's json does not.
_GO_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def _go_number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _go_number(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_number(v) for v in value]
    return value


def go_json(value: Any) -> str:
    """Compact JSON the way Go writes it: sorted map keys, HTML characters escaped."""
    text = json.dumps(_go_number(value), separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    for raw, escaped in _GO_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def pe_field(name: str) -> str:
    """The path element of a struct field or map key."""
    return "f:" + name


def pe_key(fields: Iterable[tuple[str, Any]]) -> str:
    """The path element of an associative-list element identified by its key fields."""
    return "k:" + go_json(dict(sorted(fields, key=lambda kv: kv[0])))


def pe_value(value: Any) -> str:
    """The path element of a set element."""
    return "v:" + go_json(value)


def pe_index(index: int) -> str:
    """The path element of an atomic-list element."""
    return f"i:{index}"


def canonical_pe(text: str) -> str | None:
    """Re-serialize a FieldsV1 key; None for an element type this version does not know.

    Raises ValueError when the key is malformed.
    """
    if len(text) < 2:
        raise ValueError("key must be 2 characters long:")
    if text[1] != ":":
        raise ValueError(f"missing colon: {text}")
    kind, body = text[0], text[2:]
    if kind == "f":
        return text
    if kind == "v":
        return pe_value(json.loads(body))
    if kind == "k":
        parsed = json.loads(body)
        if not isinstance(parsed, dict):
            raise ValueError(f"key path element is not a JSON object: {body}")
        return pe_key(parsed.items())
    if kind == "i":
        return pe_index(int(body))
    # Unknown element types are dropped, as a newer writer may know them.
    return None


def go_string(value: Any) -> str:
    """A value as structured-merge-diff prints it in a path (Go's %q for strings)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(go_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={go_string(v)}" for k, v in sorted(value.items()))
    return str(value)


def pe_string(pe: str) -> str:
    """One path element in the human form of conflict messages: ``.name``, ``[k=v]``, ``[=v]``."""
    kind, body = pe[0], pe[2:]
    if kind == "f":
        return "." + body
    if kind == "k":
        fields = json.loads(body)
        return "[" + ",".join(f"{k}={go_string(v)}" for k, v in fields.items()) + "]"
    if kind == "v":
        return "[=" + go_string(json.loads(body)) + "]"
    return "[" + body + "]"


def path_string(path: Path) -> str:
    """A path as the apiserver prints it, e.g. ``.spec.containers[name="app"].image``."""
    return "".join(pe_string(pe) for pe in path)


def _value_order(value: Any) -> tuple[Any, ...]:
    # structured-merge-diff orders values: numbers, strings, booleans, lists, maps, null.
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(_value_order(v) for v in value))
    if isinstance(value, dict):
        return (4, tuple((k, _value_order(v)) for k, v in sorted(value.items())))
    return (5, 0)


@functools.lru_cache(maxsize=65536)
def pe_order(pe: str) -> tuple[Any, ...]:
    """Sort key of a path element: fields by name, then keys, values, indexes."""
    kind, body = pe[0], pe[2:]
    if kind == "f":
        return (0, body)
    if kind == "k":
        fields = json.loads(body)
        return (1, tuple((k, _value_order(v)) for k, v in fields.items()))
    if kind == "v":
        return (2, _value_order(json.loads(body)))
    return (3, int(body))


def iteration_order(path: Path) -> tuple[Any, ...]:
    """Sort key listing a set the way structured-merge-diff iterates it.

    At every level the members come first, then the children, each in element order.
    """
    last = len(path) - 1
    return tuple((0 if i == last else 1, pe_order(pe)) for i, pe in enumerate(path))


class _Node:
    __slots__ = ("children", "member")

    def __init__(self) -> None:
        self.member = False
        self.children: dict[str, _Node] = {}


def _tree(paths: Iterable[Path]) -> _Node:
    root = _Node()
    for path in paths:
        node = root
        for pe in path:
            node = node.children.setdefault(pe, _Node())
        node.member = True
    return root


def _emit(node: _Node) -> Json:
    out: Json = {}
    if node.member and node.children:
        out["."] = {}
    for pe in sorted(node.children, key=pe_order):
        out[pe] = _emit(node.children[pe])
    return out


def set_to_fields(paths: Iterable[Path]) -> Json:
    """Encode a field set as a FieldsV1 object."""
    root = _tree(p for p in paths if p)
    return {pe: _emit(root.children[pe]) for pe in sorted(root.children, key=pe_order)}


def _read(obj: Any, prefix: Path, out: set[Path]) -> bool:
    """Read one FieldsV1 level into out; True when the level's own path is a member."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected an object at {path_string(prefix) or '<root>'}")
    member = False
    has_children = False
    for key, value in obj.items():
        if key == ".":
            member = True
            continue
        pe = canonical_pe(key)
        if pe is None:
            continue
        has_children = True
        child = (*prefix, pe)
        if _read(value, child, out):
            out.add(child)
    return member or not has_children


def fields_to_set(fields: Any) -> set[Path]:
    """Decode a FieldsV1 object into a field set; raises ValueError when it is malformed."""
    out: set[Path] = set()
    try:
        _read(fields, (), out)
    except json.JSONDecodeError as e:
        raise ValueError(f"parsing key as path element: {e}") from e
    return out


@dataclass(frozen=True)
class ManagerId:
    """Who owns a managedFields entry: the apiserver's manager identifier, as a value."""

    manager: str
    operation: str
    #: Only for Update entries; an applier's identity does not depend on the version it used.
    api_version: str = ""
    subresource: str = ""

    def identifier(self) -> str:
        """The JSON the apiserver keys entries by (and sorts conflicting managers by)."""
        out: Json = {"manager": self.manager, "operation": self.operation}
        if self.api_version:
            out["apiVersion"] = self.api_version
        if self.subresource:
            out["subresource"] = self.subresource
        return go_json_ordered(out)

    def describe(self) -> str:
        """The manager as conflict messages print it."""
        text = json.dumps(self.manager, ensure_ascii=False)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource, ensure_ascii=False)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


def go_json_ordered(obj: Json) -> str:
    """Compact Go-style JSON of an object whose keys stay in the given (struct) order."""
    parts = [f"{go_json(k)}:{go_json(v)}" for k, v in obj.items()]
    return "{" + ",".join(parts) + "}"


@dataclass
class Entry:
    """The fields one manager owns, at the API version it last wrote them in."""

    fields: set[Path]
    api_version: str
    time: str | None = None


Managed = dict[ManagerId, Entry]


def decode_managed_fields(raw: Any) -> Managed:
    """Decode metadata.managedFields; raises ValueError on an entry the apiserver rejects."""
    managed: Managed = {}
    if raw is None:
        return managed
    if not isinstance(raw, list):
        raise ValueError("managedFields must be a list")
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ValueError(f"managed fields entry {i} is not an object")
        operation = entry.get("operation") or ""
        if operation not in (APPLY, UPDATE):
            raise ValueError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion") or ""
        if not api_version:
            raise ValueError("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if not fields_type:
            raise ValueError(f"missing fieldsType in managed fields entry {i}")
        if fields_type != "FieldsV1":
            raise ValueError(f'invalid fieldsType "{fields_type}" in managed fields entry {i}')
        fields_v1 = entry.get("fieldsV1")
        paths = fields_to_set({} if fields_v1 is None else fields_v1)
        mid = ManagerId(
            manager=str(entry.get("manager") or ""),
            operation=operation,
            api_version=api_version if operation == UPDATE else "",
            subresource=str(entry.get("subresource") or ""),
        )
        time = entry.get("time")
        managed[mid] = Entry(paths, api_version, time if isinstance(time, str) else None)
    return managed


def unix_seconds(time: str | None) -> int:
    """Seconds since the epoch of an RFC 3339 timestamp; 0 when absent or unreadable."""
    if not time:
        return 0
    try:
        return int(datetime.fromisoformat(time).timestamp())
    except ValueError:
        return 0


def encode_managed_fields(managed: Managed) -> list[Json] | None:
    """Encode entries in the apiserver's order; None when there are none (the field is omitted)."""
    entries = [(mid, e) for mid, e in managed.items() if e.fields]
    if not entries:
        return None
    entries.sort(
        key=lambda me: (
            me[0].operation,
            unix_seconds(me[1].time),
            me[0].manager,
            me[1].api_version,
            me[0].subresource,
        )
    )
    out: list[Json] = []
    for mid, entry in entries:
        item: Json = {}
        if mid.manager:
            item["manager"] = mid.manager
        item["operation"] = mid.operation
        item["apiVersion"] = entry.api_version
        if entry.time is not None:
            item["time"] = entry.time
        item["fieldsType"] = "FieldsV1"
        item["fieldsV1"] = set_to_fields(entry.fields)
        if mid.subresource:
            item["subresource"] = mid.subresource
        out.append(item)
    return out


def union(sets: Iterable[set[Path]]) -> set[Path]:
    """All paths of several sets."""
    out: set[Path] = set()
    for s in sets:
        out |= s
    return out
