"""apimachinery's checks of names, label keys and label values, with its exact messages.

Each check returns the problems it finds (empty when the value is valid), worded as
`k8s.io/apimachinery/pkg/util/validation` words them. The server quotes two generations of that
package, which differ only in wording, so the checks take the wording to use:

* `OBJECT_META`: ObjectMeta validation of embedded resources ("a qualified name", lengths in
  characters);
* `LABEL_SELECTOR`: label selector parsing ("a valid label key", lengths in UTF-8 bytes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "LABEL_SELECTOR",
    "OBJECT_META",
    "Wording",
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "qualified_name_errors",
    "regex_error",
]


def _utf8_length(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Wording:
    """How one generation of the validation package measures lengths and names a key."""

    #: The noun of a malformed key: "a qualified name" or "a valid label key".
    key_noun: str
    #: The unit of "must be no more than N <unit>", and how a value is measured in it.
    length_unit: str
    length: Callable[[str], int]

    def too_long(self, value: str, limit: int) -> list[str]:
        """The max-length problem of `value`, if it is longer than `limit`."""
        if self.length(value) > limit:
            return [f"must be no more than {limit} {self.length_unit}"]
        return []


OBJECT_META = Wording("a qualified name", "characters", len)
LABEL_SELECTOR = Wording("a valid label key", "bytes", _utf8_length)

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _QUALIFIED_NAME + ")?"

_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)


def _matches(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value, re.ASCII) is not None


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """validation.RegexError: Go puts ", " after every example, then " or " between them."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _qualified_name_regex_error() -> str:
    return regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME, "MyName", "my.name", "123-abc")


def dns1123_label_errors(value: str) -> list[str]:
    """IsDNS1123Label (lengths in characters)."""
    errs = OBJECT_META.too_long(value, 63)
    if not _matches(_DNS1123_LABEL, value):
        if _matches(_DNS1123_SUBDOMAIN, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL, "my-name", "123-abc"))
    return errs


def dns1123_subdomain_errors(value: str, wording: Wording = OBJECT_META) -> list[str]:
    """IsDNS1123Subdomain."""
    errs = wording.too_long(value, 253)
    if not _matches(_DNS1123_SUBDOMAIN, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN, "example.com"))
    return errs


def dns1035_label_errors(value: str) -> list[str]:
    """IsDNS1035Label (lengths in characters)."""
    errs = OBJECT_META.too_long(value, 63)
    if not _matches(_DNS1035_LABEL, value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL, "my-name", "abc-123"))
    return errs


def qualified_name_errors(value: str, wording: Wording = OBJECT_META) -> list[str]:
    """IsQualifiedName: label and annotation keys, an optional DNS subdomain prefix and a name."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix, wording))
    else:
        return [
            f"{wording.key_noun} "
            + _qualified_name_regex_error()
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    else:
        errs.extend("name part " + m for m in wording.too_long(name, 63))
    if not _matches(_QUALIFIED_NAME, name):
        errs.append("name part " + _qualified_name_regex_error())
    return errs


def label_value_errors(value: str, wording: Wording = OBJECT_META) -> list[str]:
    """IsValidLabelValue."""
    errs = wording.too_long(value, 63)
    if not _matches(_LABEL_VALUE, value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE, "MyValue", "my_value", "12345"))
    return errs
