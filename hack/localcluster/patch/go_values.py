"""Go's view of decoded JSON values that the patch libraries depend on.

The Go libraries hold decoded JSON as `interface{}` values: two values are equal only when their
dynamic types are (an int64 1 is not a float64 1), maps and slices never compare equal, and
their error messages name the Go types (`map[string]interface {}`).
"""

from __future__ import annotations

from typing import Any, Final

from ..go_format import go_type, go_v

Json = dict[str, Any]

__all__ = ["bad_arg_type", "go_eq", "go_key", "no_merge_key"]


def go_key(value: Any) -> tuple[Any, ...]:
    """A hashable stand-in for Go interface equality: same dynamic type and same value."""
    if isinstance(value, (dict, list)):
        return ("uncomparable", id(value))
    return (go_type(value), value)


def go_eq(left: Any, right: Any) -> bool:
    return go_key(left) == go_key(right)


_GO_TYPE_NAMES: Final = {
    "map": "map[string]interface {}",
    "slice": "[]interface {}",
    "string": "string",
    "int64": "int64",
    "float64": "float64",
    "bool": "bool",
    "nil": "%!s(<nil>)",
}


def bad_arg_type(expected: Any, actual: Any) -> str:
    return (
        f"expected a {_GO_TYPE_NAMES[go_type(expected)]},"
        f" but received a {_GO_TYPE_NAMES[go_type(actual)]}"
    )


def no_merge_key(item: Json, merge_key: str) -> str:
    return f"map: {go_v(item)} does not contain declared merge key: {merge_key}"
