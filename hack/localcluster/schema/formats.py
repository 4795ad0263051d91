"""String formats and regular expressions as CRD schema validation applies them.

kube-apiserver validates `format` only for the formats apiextensions supports (others are
dropped from the schema before validation), using the checkers of kube-openapi's `strfmt`
registry. Patterns are Go RE2 expressions; they are translated to Python's `re` where the two
differ in meaning (`$`, `\\z`, ASCII-only `\\d`/`\\w`/`\\s`, POSIX classes).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
from collections.abc import Callable
from functools import cache
from urllib.parse import urlsplit

#: Formats a string schema may carry, normalized the way go-openapi names them (no dashes).
#: "k8s-short-name"/"k8s-long-name" arrived in Kubernetes 1.34.
_STRING_FORMATS = frozenset(
    {
        "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
        "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
        "rgbcolor", "byte", "password", "date", "duration", "datetime", "quantity",
        "k8sshortname", "k8slongname",
    }
)  # fmt: skip


def effective_format(schema_type: str, fmt: str) -> str:
    """The format left after apiextensions strips the ones it does not support for this type."""
    if not fmt:
        return ""
    if schema_type in ("", "string"):
        return fmt if fmt.replace("-", "") in _STRING_FORMATS else ""
    if schema_type == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if schema_type == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


_UUID = r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?{v}[0-9a-f]{3}-?{r}[0-9a-f]{3}-?[0-9a-f]{12}$"


def _uuid(version: str, variant: str) -> re.Pattern[str]:
    return re.compile(_UUID.replace("{v}", version).replace("{r}", variant))


_RE = {
    "bsonobjectid": re.compile(r"^[0-9a-fA-F]{24}$"),
    "uuid": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    "uuid3": _uuid("3", "[0-9a-f]"),
    "uuid4": _uuid("4", "[89ab]"),
    "uuid5": _uuid("5", "[89ab]"),
    "mac": re.compile(
        r"^(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^(?:[0-9A-Fa-f]{2}[:-]){7}[0-9A-Fa-f]{2}$"
        r"|^(?:[0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$"
    ),
    "hexcolor": re.compile(r"^#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"),
    "rgbcolor": re.compile(
        r"^rgb\(\s*(?:0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(?:0|[1-9]\d?|1\d\d?|2[0-4]\d"
        r"|25[0-5])\s*,\s*(?:0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
    ),
    "ssn": re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$", re.ASCII),
    "isbn10": re.compile(r"^(?:[0-9]{9}X|[0-9]{10})$"),
    "isbn13": re.compile(r"^(?:[0-9]{13})$"),
    "email": re.compile(r"^[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+$"),
    "hostname": re.compile(
        r"^([a-zA-Z0-9]((-?[a-zA-Z0-9]{0,62})?)|([a-zA-Z0-9](([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)"
        r"(\.)){1,}([a-zA-Z0-9])(-?[a-zA-Z0-9]){1,62})$"
    ),
    "duration": re.compile(
        r"^(?:[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0)$"
        r"|^[0-9]+\s*(?:ns|us|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?"
        r"|minutes?|hours?|days?|weeks?)$"
    ),
    "quantity": re.compile(
        r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|[KMGTPE]i|[mkMGTPE])?$"
    ),
    "datetime_time": re.compile(
        r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(z|[+-][0-9]{2}:[0-9]{2})$"
    ),
    "dns1123label": re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
    "dns1123subdomain": re.compile(
        r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    ),
}


def _date(s: str) -> bool:
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", s):
        return False
    try:
        datetime.date.fromisoformat(s)
    except ValueError:
        return False
    return True


def _datetime(s: str) -> bool:
    parts = s.lower().split("t")
    if len(s) < 4 or len(parts) < 2 or not _date(parts[0]):
        return False
    m = _RE["datetime_time"].match(parts[1])
    if m is None:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _byte(s: str) -> bool:
    try:
        base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(s) % 4 == 0


def _ipv4(s: str) -> bool:
    try:
        ipaddress.IPv4Address(s)
    except ValueError:
        return False
    return True


def _ipv6(s: str) -> bool:
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return ":" in s


def _cidr(s: str) -> bool:
    try:
        ipaddress.ip_network(s, strict=False)
    except ValueError:
        return False
    return "/" in s


def _uri(s: str) -> bool:
    # govalidator.IsRequestURI: net/url.ParseRequestURI, i.e. an absolute URI or an absolute path.
    if not s or " " in s:
        return False
    if s.startswith("/"):
        return True
    scheme = urlsplit(s).scheme
    if not scheme or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        return False
    # ParseRequestURI rejects opaque URIs such as "mailto:x".
    return s[len(scheme) + 1 :].startswith("/")


def _luhn(s: str) -> bool:
    digits = re.sub(r"[^0-9]", "", s)
    if not 12 <= len(digits) <= 19:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _hostname(s: str) -> bool:
    return (
        bool(_RE["hostname"].match(s)) and len(s) <= 255 and all(len(p) <= 63 for p in s.split("."))
    )


def _short_name(s: str) -> bool:
    return len(s) <= 63 and bool(_RE["dns1123label"].match(s))


def _long_name(s: str) -> bool:
    return len(s) <= 253 and bool(_RE["dns1123subdomain"].match(s))


def _matches(name: str) -> Callable[[str], bool]:
    pattern = _RE[name]
    return lambda s: bool(pattern.match(s))


_CHECKERS: dict[str, Callable[[str], bool]] = {
    "date": _date,
    "datetime": _datetime,
    "byte": _byte,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "cidr": _cidr,
    "uri": _uri,
    "hostname": _hostname,
    "creditcard": _luhn,
    "password": lambda _s: True,
    "isbn": lambda s: _matches("isbn10")(s) or _matches("isbn13")(s),
    "k8sshortname": _short_name,
    "k8slongname": _long_name,
}
for _name in (
    "bsonobjectid", "uuid", "uuid3", "uuid4", "uuid5", "mac", "hexcolor", "rgbcolor", "ssn",
    "isbn10", "isbn13", "email", "duration", "quantity",
):  # fmt: skip
    _CHECKERS[_name] = _matches(_name)


def is_known_string_format(fmt: str) -> bool:
    """Whether kube-openapi's format registry has a checker for this format name."""
    return fmt.replace("-", "").lower() in _CHECKERS


def check_string_format(fmt: str, value: str) -> bool:
    """Whether `value` is valid for the string format `fmt` (unknown formats always pass)."""
    checker = _CHECKERS.get(fmt.replace("-", "").lower())
    return True if checker is None else checker(value)


# --- regular expressions ---------------------------------------------------------------------

_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


class GoRegexError(ValueError):
    """A pattern Go's regexp package rejects; the message is Go's."""


def _go_syntax_error(pattern: str) -> str | None:
    """Go's parse error for constructs RE2 rejects but Python accepts, or None."""
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt.isdigit() and nxt != "0" and not in_class:
                return f"error parsing regexp: invalid escape sequence: `\\{nxt}`"
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            end = 4 if pattern[i + 2] == "<" else 3
            syntax = pattern[i : i + end]
            return f"error parsing regexp: invalid or unsupported Perl syntax: `{syntax}`"
        i += 1
    return None


def _translate(pattern: str) -> str:
    """Rewrite a Go RE2 pattern into a Python pattern with the same meaning."""
    out: list[str] = []
    i = 0
    in_class = False
    multiline = bool(re.match(r"\(\?[a-zA-Z]*m", pattern))
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append("\\Z" if nxt == "z" and not in_class else ch + nxt)
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                name = pattern[i + 2 : end] if end > 0 else ""
                negated = name.startswith("^")
                cls = _POSIX_CLASSES.get(name.lstrip("^"))
                if cls is not None and not negated:
                    out.append(cls)
                    i = end + 2
                    continue
            if ch == "]":
                in_class = False
            elif ch == "[":
                ch = "\\["
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
            if pattern[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                out.append("\\]")
                i += 1
        elif ch == "$" and not multiline:
            # Go's `$` matches only at the very end; Python's also before a final newline.
            out.append("(?!\\n)\\Z")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


_PYTHON_ONLY_GAPS = re.compile(r"\\[pPQE]|\(\?<[A-Za-z_]|.\(\?[a-zA-Z]+\)")


def _go_error_for(pattern: str, err: re.error) -> str:
    """Go's parse error for a pattern Python rejected too, as near as we can name it."""
    msg, pos = err.msg, err.pos or 0
    if msg.startswith("nothing to repeat"):
        op = pattern[pos : pos + 2] if pattern[pos + 1 : pos + 2] == "?" else pattern[pos]
        return f"missing argument to repetition operator: `{op}`"
    if msg.startswith("multiple repeat"):
        return f"invalid nested repetition operator: `{pattern[max(pos - 1, 0) : pos + 1]}`"
    if msg.startswith("missing )"):
        return f"missing closing ): `{pattern}`"
    if msg.startswith("unbalanced parenthesis"):
        return f"unexpected ): `{pattern}`"
    if msg.startswith("unterminated character set"):
        return f"missing closing ]: `{pattern[pos:]}`"
    if msg.startswith("bad escape"):
        return f"invalid escape sequence: `{pattern[pos : pos + 2]}`"
    if msg.startswith("bad character range"):
        return f"invalid character class range: `{msg.rsplit(' ', 1)[-1]}`"
    return msg


@cache
def compile_go_regex(pattern: str) -> re.Pattern[str] | None:
    """Compile a Go pattern for Python, None if Python cannot express it.

    Raises GoRegexError (with Go's message) for patterns Go itself rejects.
    """
    err = _go_syntax_error(pattern)
    if err is not None:
        raise GoRegexError(err)
    try:
        return re.compile(_translate(pattern), re.ASCII)
    except re.error as e:
        if _PYTHON_ONLY_GAPS.search(pattern):
            # Valid RE2 that Python cannot express (\pL, \Q..\E, flags mid-pattern): we do
            # not check it rather than reject values the real server accepts.
            return None
        raise GoRegexError(f"error parsing regexp: {_go_error_for(pattern, e)}") from e
