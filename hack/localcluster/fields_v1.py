"""FieldsV1: the field-set encoding of metadata.managedFields, and field paths as text.

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

Every write encodes and decodes the field sets of all its managedFields entries, and most of them
are the same from one write to the next, so both directions are cached: equal sets share one
encoding (which therefore must never be changed, like the stored objects that hold it), and an
encoding this module made is decoded once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Set
from typing import Any

from .go_format import go_json_html_escape

Json = dict[str, Any]
Path = tuple[str, ...]

__all__ = [
    "Path",
    "PathTrie",
    "canonical_pe",
    "decoded_fields",
    "fields_to_set",
    "go_json",
    "is_shared_encoding",
    "iteration_order",
    "path_string",
    "pe_field",
    "pe_index",
    "pe_key",
    "pe_order",
    "pe_string",
    "pe_value",
    "set_to_fields",
]


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
    return go_json_html_escape(text)


def pe_field(name: str) -> str:
    """The path element of a struct field or map key."""
    return "f:" + name


def pe_key(fields: Iterable[tuple[str, Any]]) -> str:
    """The path element of an associative-list element identified by its key fields."""
    pairs = tuple((k, v) for k, v in sorted(fields, key=lambda kv: kv[0]))
    if all(type(v) is str or type(v) is int for _, v in pairs):
        return _pe_key_of_simple(pairs)
    return "k:" + go_json(dict(pairs))


# Cached for strings and ints only: such values are equal only when their JSON is, which is not
# true of floats and booleans (1 == 1.0 == True).
@functools.lru_cache(maxsize=16384)
def _pe_key_of_simple(pairs: tuple[tuple[str, Any], ...]) -> str:
    return "k:" + go_json(dict(pairs))


def pe_value(value: Any) -> str:
    """The path element of a set element."""
    if type(value) is str or type(value) is int:
        return _pe_value_of_simple(value)
    return "v:" + go_json(value)


@functools.lru_cache(maxsize=16384)
def _pe_value_of_simple(value: str | int) -> str:
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


def _path_value_text(value: Any) -> str:
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
        return "[" + ",".join(_path_value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={_path_value_text(v)}" for k, v in sorted(value.items()))
    return str(value)


def pe_string(pe: str) -> str:
    """One path element in the human form of conflict messages: ``.name``, ``[k=v]``, ``[=v]``."""
    kind, body = pe[0], pe[2:]
    if kind == "f":
        return "." + body
    if kind == "k":
        fields = json.loads(body)
        return "[" + ",".join(f"{k}={_path_value_text(v)}" for k, v in fields.items()) + "]"
    if kind == "v":
        return "[=" + _path_value_text(json.loads(body)) + "]"
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


class PathTrie:
    """A field set as a tree of path elements; `member` marks the paths that are in the set."""

    __slots__ = ("children", "member")

    def __init__(self) -> None:
        self.member = False
        self.children: dict[str, PathTrie] = {}

    @classmethod
    def of(cls, paths: Iterable[Path]) -> PathTrie:
        root = cls()
        for path in paths:
            node = root
            for pe in path:
                node = node.children.setdefault(pe, cls())
            node.member = True
        return root


def _emit(node: PathTrie) -> Json:
    out: Json = {}
    if node.member and node.children:
        out["."] = {}
    for pe in sorted(node.children, key=pe_order):
        out[pe] = _emit(node.children[pe])
    return out


def set_to_fields(paths: Iterable[Path]) -> Json:
    """Encode a field set as a FieldsV1 object.

    Equal sets get the same (shared) object: the caller must not change it.
    """
    if isinstance(paths, frozenset) and () not in paths:
        return _encode(paths)  # a frozenset keeps its hash: the common case costs nothing
    return _encode(frozenset(p for p in paths if p))


#: How many encodings are kept.
_CACHE_SIZE = 8192
#: Encodings by set, least recently used first.
_encoded: dict[frozenset[Path], Json] = {}
#: The kept encodings by identity -> (the encoding, the set it encodes, its decoded set once
#: known). Holding the encoding keeps its id from being reused.
_decoded: dict[int, tuple[Json, frozenset[Path], frozenset[Path] | None]] = {}


def _encode(paths: frozenset[Path]) -> Json:
    out = _encoded.pop(paths, None)
    if out is None:
        root = PathTrie.of(paths)
        out = {pe: _emit(root.children[pe]) for pe in sorted(root.children, key=pe_order)}
        _decoded[id(out)] = (out, paths, None)
        while len(_encoded) >= _CACHE_SIZE:
            evicted = _encoded.pop(next(iter(_encoded)))
            _decoded.pop(id(evicted), None)
    _encoded[paths] = out
    return out


def is_shared_encoding(obj: Any) -> bool:
    """Whether `obj` is an encoding `set_to_fields` made (and still keeps): a plain tree of
    dicts that decodes without a parse."""
    known = _decoded.get(id(obj))
    return known is not None and known[0] is obj


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
    return set(decoded_fields(fields))


def decoded_fields(fields: Any) -> Set[Path]:
    """`fields_to_set`, shared: an encoding `set_to_fields` made is decoded once."""
    known = _decoded.get(id(fields))
    if known is None or known[0] is not fields:
        return _decode(fields)
    decoded = known[2]
    if decoded is None:
        decoded = frozenset(_decode(fields))
        # The very set that was encoded, when it reads back the same: its hash is known.
        if decoded == known[1]:
            decoded = known[1]
        _decoded[id(fields)] = (fields, known[1], decoded)
    return decoded


def _decode(fields: Any) -> set[Path]:
    out: set[Path] = set()
    try:
        _read(fields, (), out)
    except json.JSONDecodeError as e:
        raise ValueError(f"parsing key as path element: {e}") from e
    return out
