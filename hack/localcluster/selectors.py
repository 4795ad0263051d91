"""Label and field selectors as kube-apiserver parses, validates and applies them.

`LabelSelector.parse` follows the apimachinery `labels` lexer and parser token for token, so a
malformed `labelSelector` query parameter is rejected with the same message. `FieldSelector.parse`
splits and unescapes like apimachinery's `fields` package and then checks each field against the
conversion function the real server registers for the kind: the set of supported fields, and the
wording of the rejection, differ per kind. Matching reads the same derived field values the
registries' `GetAttrs` functions compute (`status.podIP` is the first of `status.podIPs`, booleans
print as `true`/`false`, a missing value is the empty string).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .errors import bad_request
from .registry import BUILTIN_TYPES, ResourceType

Json = dict[str, Any]

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelRequirement",
    "LabelSelector",
    "go_quote",
    "label_selector_string",
]

# --------------------------------------------------------------------------------------------
# Go formatting helpers
# --------------------------------------------------------------------------------------------

_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(value: str) -> str:
    """A string as Go's `%q` (strconv.Quote) renders it; error messages quote values this way."""
    out = ['"']
    for ch in value:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            cp = ord(ch)
            if cp < 0x20 or cp == 0x7F:
                out.append(f"\\x{cp:02x}")
            elif cp < 0x10000:
                out.append(f"\\u{cp:04x}")
            else:
                out.append(f"\\U{cp:08x}")
    out.append('"')
    return "".join(out)


def go_format_float(value: float) -> str:
    """A float as Go's `%v` prints it: shortest digits, exponent form below 1e-4 or from 1e6."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(str(d) for d in digits)
    point = len(text) + exponent
    exp = point - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return prefix + "0." + "0" * -point + text
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return prefix + text[:point] + "." + text[point:]


def _go_string_slice(values: list[str] | None) -> str:
    """`%#v` of a `[]string`, which is how field errors render a list bad value."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


# --------------------------------------------------------------------------------------------
# Label key and value validation (apimachinery validate/content)
# --------------------------------------------------------------------------------------------

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += f"'{example}', "
    return msg + f"regex used for validation is '{fmt}')"


def _label_key_regex_error() -> str:
    return _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")


def _byte_len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def _dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if _byte_len(value) > 253:
        errs.append("must be no more than 253 bytes")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(key: str) -> list[str]:
    """The problems the apiserver finds with a label key (empty when it is valid)."""
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain_errors(prefix))
    else:
        return [
            "a valid label key "
            + _label_key_regex_error()
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _byte_len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append("name part " + _label_key_regex_error())
    return errs


def label_value_errors(value: str) -> list[str]:
    """The problems the apiserver finds with a label value (empty when it is valid)."""
    errs = []
    if _byte_len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errs


class _SelectorError(Exception):
    """A parse or validation failure; the text is the message the apiserver would report."""


def _aggregate(messages: list[str]) -> str:
    """utilerrors.Aggregate's rendering: one message bare, several bracketed, duplicates dropped."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def _parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None where Go reports an error."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    if not -(2**63) <= value < 2**63:
        return None
    return value


# --------------------------------------------------------------------------------------------
# Label selectors
# --------------------------------------------------------------------------------------------

_IN, _NOT_IN, _EQUALS, _DOUBLE_EQUALS, _NOT_EQUALS = "in", "notin", "=", "==", "!="
_GT, _LT, _EXISTS, _DOES_NOT_EXIST = "gt", "lt", "exists", "!"
_BINARY_OPERATORS = (_IN, _NOT_IN, _EQUALS, _DOUBLE_EQUALS, _NOT_EQUALS, _GT, _LT)
_SET_OPERATORS = (_IN, _NOT_IN)
_EXACT_OPERATORS = (_EQUALS, _DOUBLE_EQUALS, _NOT_EQUALS)


@dataclass(frozen=True)
class LabelRequirement:
    """One requirement: key, operator (selection.Operator spelling) and values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (_IN, _EQUALS, _DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (_NOT_IN, _NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == _EXISTS:
            return self.key in labels
        if op == _DOES_NOT_EXIST:
            return self.key not in labels
        if op in (_GT, _LT):
            if self.key not in labels or len(self.values) != 1:
                return False
            have = _parse_int64(labels[self.key])
            want = _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == _GT else have < want
        return False

    def __str__(self) -> str:
        prefix = "!" if self.operator == _DOES_NOT_EXIST else ""
        if self.operator in (_EXISTS, _DOES_NOT_EXIST):
            return prefix + self.key
        symbol = {
            _EQUALS: "=",
            _DOUBLE_EQUALS: "==",
            _NOT_EQUALS: "!=",
            _IN: " in ",
            _NOT_IN: " notin ",
            _GT: ">",
            _LT: "<",
        }[self.operator]
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in _SET_OPERATORS:
            vals = "(" + vals + ")"
        return self.key + symbol + vals


def _new_requirement(
    key: str, op: str, values: list[str] | None, path: str | None
) -> LabelRequirement:
    """labels.NewRequirement: validates and reports every problem the way Go aggregates them.

    `path` is the field path prefix the caller passed (None renders as Go's nil path).
    """
    problems: list[str] = []

    def child(name: str) -> str:
        return name if path is None else f"{path}.{name}"

    key_errs = label_key_errors(key)
    if key_errs:
        problems.append(f"{child('key')}: Invalid value: {go_quote(key)}: {'; '.join(key_errs)}")
    vals = values or []
    values_path = child("values")
    if op in _SET_OPERATORS:
        if not vals:
            problems.append(
                f"{values_path}: Invalid value: {_go_string_slice(values)}: "
                "for 'in', 'notin' operators, values set can't be empty"
            )
    elif op in _EXACT_OPERATORS:
        if len(vals) != 1:
            problems.append(
                f"{values_path}: Invalid value: {_go_string_slice(values)}: "
                "exact-match compatibility requires one single value"
            )
    elif op in (_EXISTS, _DOES_NOT_EXIST):
        if vals:
            problems.append(
                f"{values_path}: Invalid value: {_go_string_slice(values)}: "
                "values set must be empty for exists and does not exist"
            )
    elif op in (_GT, _LT):
        if len(vals) != 1:
            problems.append(
                f"{values_path}: Invalid value: {_go_string_slice(values)}: "
                "for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, v in enumerate(vals):
            if _parse_int64(v) is None:
                problems.append(
                    f"{values_path}[{i}]: Invalid value: {go_quote(v)}: "
                    "for 'Gt', 'Lt' operators, the value must be an integer"
                )
    else:
        supported = ", ".join(go_quote(o) for o in (*_BINARY_OPERATORS, _EXISTS, _DOES_NOT_EXIST))
        problems.append(
            f"{child('operator')}: Unsupported value: {go_quote(op)}: supported values: {supported}"
        )
    for i, v in enumerate(vals):
        errs = label_value_errors(v)
        if errs:
            problems.append(
                f"{values_path}[{i}][{key}]: Invalid value: {go_quote(v)}: {'; '.join(errs)}"
            )
    if problems:
        raise _SelectorError(_aggregate(problems))
    return LabelRequirement(key, op, tuple(vals))


# Lexer tokens.
_ERROR, _EOS, _CLOSE_PAR, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT_TOK = range(8)
_IDENT, _IN_TOK, _LT_TOK, _NOT_EQ, _NOT_IN_TOK, _OPEN_PAR = range(8, 14)
_LITERAL_TOKENS = {
    ")": _CLOSE_PAR,
    ",": _COMMA,
    "!": _NOT,
    "==": _DOUBLE_EQ,
    "=": _EQ,
    ">": _GT_TOK,
    "in": _IN_TOK,
    "<": _LT_TOK,
    "!=": _NOT_EQ,
    "notin": _NOT_IN_TOK,
    "(": _OPEN_PAR,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_END = "\x00"


class _Lexer:
    """The labels lexer. Like Go's, it reads a NUL both at the end and for a NUL in the input."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.pos = 0

    def read(self) -> str:
        if self.pos < len(self.s):
            ch = self.s[self.pos]
            self.pos += 1
            return ch
        return _END

    def unread(self) -> None:
        self.pos -= 1

    def scan_id_or_keyword(self) -> tuple[int, str]:
        buf = []
        while True:
            ch = self.read()
            if ch == _END:
                break
            if ch in _SPECIAL or ch in _WHITESPACE:
                self.unread()
                break
            buf.append(ch)
        text = "".join(buf)
        return _LITERAL_TOKENS.get(text, _IDENT), text

    def scan_special(self) -> tuple[int, str]:
        last: tuple[int, str] | None = None
        buf = ""
        while True:
            ch = self.read()
            if ch == _END:
                break
            if ch in _SPECIAL:
                buf += ch
                if buf in _LITERAL_TOKENS:
                    last = (_LITERAL_TOKENS[buf], buf)
                elif last is not None:
                    self.unread()
                    break
            else:
                self.unread()
                break
        if last is None:
            return _ERROR, f"error expected: keyword found '{buf}'"
        return last

    def lex(self) -> tuple[int, str]:
        ch = self.read()
        while ch in _WHITESPACE:
            ch = self.read()
        if ch == _END:
            return _EOS, ""
        self.unread()
        if ch in _SPECIAL:
            return self.scan_special()
        return self.scan_id_or_keyword()


_VALUES, _KEY_AND_OPERATOR = 0, 1


class _Parser:
    def __init__(self, text: str) -> None:
        lexer = _Lexer(text)
        self.items: list[tuple[int, str]] = []
        while True:
            tok = lexer.lex()
            self.items.append(tok)
            if tok[0] == _EOS:
                break
        self.position = 0

    @staticmethod
    def _in_context(tok: int, context: int) -> int:
        if context == _VALUES and tok in (_IN_TOK, _NOT_IN_TOK):
            return _IDENT
        return tok

    def lookahead(self, context: int) -> tuple[int, str]:
        tok, lit = self.items[self.position]
        return self._in_context(tok, context), lit

    def consume(self, context: int) -> tuple[int, str]:
        tok, lit = self.items[self.position]
        self.position += 1
        return self._in_context(tok, context), lit

    def parse(self) -> list[LabelRequirement]:
        requirements: list[LabelRequirement] = []
        while True:
            tok, lit = self.lookahead(_VALUES)
            if tok in (_IDENT, _NOT):
                try:
                    requirements.append(self.parse_requirement())
                except _SelectorError as err:
                    raise _SelectorError(f"unable to parse requirement: {err}") from None
                t, lit2 = self.consume(_VALUES)
                if t == _EOS:
                    return requirements
                if t == _COMMA:
                    t2, lit3 = self.lookahead(_VALUES)
                    if t2 not in (_IDENT, _NOT):
                        raise _SelectorError(f"found '{lit3}', expected: identifier after ','")
                else:
                    raise _SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return requirements
            else:
                raise _SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> LabelRequirement:
        key, op = self.parse_key_and_infer_operator()
        if op in (_EXISTS, _DOES_NOT_EXIST):
            return _new_requirement(key, op, [], None)
        op = self.parse_operator()
        values = self.parse_values() if op in _SET_OPERATORS else self.parse_exact_value()
        return _new_requirement(key, op, sorted(values), None)

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        op = ""
        tok, lit = self.consume(_VALUES)
        if tok == _NOT:
            op = _DOES_NOT_EXIST
            tok, lit = self.consume(_VALUES)
        if tok != _IDENT:
            raise _SelectorError(f"found '{lit}', expected: identifier")
        errs = label_key_errors(lit)
        if errs:
            raise _SelectorError(f"<nil>: Invalid value: {go_quote(lit)}: {'; '.join(errs)}")
        nxt, _ = self.lookahead(_VALUES)
        if nxt in (_EOS, _COMMA) and op != _DOES_NOT_EXIST:
            op = _EXISTS
        return lit, op

    def parse_operator(self) -> str:
        tok, lit = self.consume(_KEY_AND_OPERATOR)
        ops = {
            _IN_TOK: _IN,
            _EQ: _EQUALS,
            _DOUBLE_EQ: _DOUBLE_EQUALS,
            _GT_TOK: _GT,
            _LT_TOK: _LT,
            _NOT_IN_TOK: _NOT_IN,
            _NOT_EQ: _NOT_EQUALS,
        }
        if tok not in ops:
            raise _SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return ops[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume(_VALUES)
        if tok != _OPEN_PAR:
            raise _SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(_VALUES)
        if tok in (_IDENT, _COMMA):
            values = self.parse_identifiers_list()
            if self.consume(_VALUES)[0] != _CLOSE_PAR:
                raise _SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE_PAR:
            self.consume(_VALUES)
            return {""}
        raise _SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume(_VALUES)
            if tok == _IDENT:
                values.add(lit)
                tok2, lit2 = self.lookahead(_VALUES)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE_PAR:
                    return values
                raise _SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not values:
                    values.add("")
                tok2, _ = self.lookahead(_VALUES)
                if tok2 == _CLOSE_PAR:
                    values.add("")
                    return values
                if tok2 == _COMMA:
                    values.add("")
                continue
            raise _SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead(_VALUES)
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume(_VALUES)
        if tok == _IDENT:
            return {lit}
        raise _SelectorError(f"found '{lit}', expected: identifier")


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: the AND of its requirements, sorted by key as Go keeps them.

    `nothing` marks the selector a nil metav1.LabelSelector converts to, which matches no object.
    """

    requirements: tuple[LabelRequirement, ...] = ()
    nothing: bool = False

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse a `labelSelector` query parameter; 400 BadRequest with the apiserver's message."""
        try:
            reqs = _Parser(text).parse()
        except _SelectorError as err:
            raise bad_request(str(err)) from None
        return cls(tuple(sorted(reqs, key=lambda r: r.key)))

    @classmethod
    def from_label_selector(cls, selector: Json | None) -> LabelSelector:
        """metav1.LabelSelectorAsSelector: nil matches nothing, empty matches everything."""
        if selector is None:
            return cls(nothing=True)
        try:
            reqs = _requirements_of(selector)
        except _SelectorError as err:
            raise bad_request(str(err)) from None
        return cls(tuple(sorted(reqs, key=lambda r: r.key)))

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict the selection (Go's Selector.Empty)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        have = labels or {}
        return all(r.matches(have) for r in self.requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The single value the selector demands for `key`, if it demands exactly one."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (_EQUALS, _DOUBLE_EQUALS, _IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        if self.nothing:
            return ""
        return ",".join(str(r) for r in self.requirements)


_SELECTOR_OPERATORS = {
    "In": _IN,
    "NotIn": _NOT_IN,
    "Exists": _EXISTS,
    "DoesNotExist": _DOES_NOT_EXIST,
}


def _requirements_of(selector: Json) -> list[LabelRequirement]:
    reqs: list[LabelRequirement] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        reqs.append(_new_requirement(str(key), _EQUALS, [str(value)], None))
    for expr in selector.get("matchExpressions") or []:
        operator = str(expr.get("operator", ""))
        if operator not in _SELECTOR_OPERATORS:
            raise _SelectorError(f"{go_quote(operator)} is not a valid label selector operator")
        values = [str(v) for v in expr.get("values") or []]
        reqs.append(
            _new_requirement(str(expr.get("key", "")), _SELECTOR_OPERATORS[operator], values, None)
        )
    return reqs


def label_selector_string(selector: Json | None) -> str:
    """The canonical string of a metav1.LabelSelector (LabelSelectorAsSelector(s).String()).

    Requirements are sorted by key; set values are sorted. A nil or empty selector gives "".
    An invalid selector raises ApiError (400) with the message Go's conversion returns.
    """
    return str(LabelSelector.from_label_selector(selector))


# --------------------------------------------------------------------------------------------
# Field selectors
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldRequirement:
    """One term: field, `=` (also for `==`) or `!=`, and the unescaped value."""

    field: str
    operator: str
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        have = fields.get(self.field, "")
        return have == self.value if self.operator == "=" else have != self.value

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{self.value}"


def _split_terms(text: str) -> list[str]:
    if not text:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _unescape(value: str) -> str:
    if not any(c in value for c in "\\,="):
        return value
    out = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch in "\\,=":
                out.append(ch)
            else:
                raise _SelectorError(
                    "invalid field selector: invalid escape sequence: \\" + ch
                )
            in_slash = False
            continue
        if ch == "\\":
            in_slash = True
        elif ch in ",=":
            raise _SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise _SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


_BUILTIN_SCOPE: dict[tuple[str, str], bool] = {
    (rt.group, rt.kind): rt.namespaced for rt in BUILTIN_TYPES
}

_POD_FIELDS = frozenset(
    {
        "metadata.name",
        "metadata.namespace",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    }
)
_CORE_EVENT_FIELDS = frozenset(
    {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
        "metadata.namespace",
        "metadata.name",
    }
)
_EVENTS_V1_FIELDS = {
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "source": "source",
    "type": "type",
    "metadata.namespace": "metadata.namespace",
    "metadata.name": "metadata.name",
}
# Kinds whose conversion function the apiserver registers, with the labels it accepts.
_CORE_FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("", "Pod"): _POD_FIELDS,
    ("", "Node"): frozenset({"metadata.name", "spec.unschedulable"}),
    ("", "ReplicationController"): frozenset(
        {"metadata.name", "metadata.namespace", "status.replicas"}
    ),
    ("", "Event"): _CORE_EVENT_FIELDS,
    ("", "Namespace"): frozenset({"status.phase", "metadata.name"}),
    ("", "Secret"): frozenset({"type", "metadata.namespace", "metadata.name"}),
    ("", "Service"): frozenset(
        {"metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type"}
    ),
}


def _convert_label(
    group: str,
    kind: str,
    label: str,
    *,
    custom: bool,
    namespaced: bool,
    selectable: frozenset[str],
) -> str:
    """The scheme's ConvertFieldLabel for the kind: the internal label, or the Go error text."""
    if custom:
        if label == "metadata.name" or (namespaced and label == "metadata.namespace"):
            return label
        if label in selectable:
            return label
        raise _SelectorError(f"field label not supported: {label}")
    if (group, kind) == ("", "Pod") and label == "spec.host":
        return "spec.nodeName"
    if (group, kind) in _CORE_FIELDS:
        if label in _CORE_FIELDS[(group, kind)]:
            return label
        raise _SelectorError(f"field label not supported: {label}")
    if (group, kind) == ("events.k8s.io", "Event"):
        if label in _EVENTS_V1_FIELDS:
            return _EVENTS_V1_FIELDS[label]
        raise _SelectorError(f"field label not supported: {label}")
    if (group, kind) == ("batch", "Job"):
        if label in ("metadata.name", "metadata.namespace", "status.successful"):
            return label
        raise _SelectorError(f"field label {go_quote(label)} not supported for batchv1.Job")
    if label in ("metadata.name", "metadata.namespace"):
        return label
    raise _SelectorError(
        f"{go_quote(label)} is not a known field selector: only "
        '"metadata.name", "metadata.namespace"'
    )


def _get(obj: Any, *path: str) -> Any:
    cur = obj
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def _text(value: Any) -> str:
    """fmt.Sprint of a decoded JSON scalar, the way field values are stringified."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_format_float(value)
    return str(value)


def _event_fields(obj: Json) -> dict[str, str]:
    # events.k8s.io/v1 objects carry the same data under other names; both map to core labels.
    involved: Json = {}
    for name in ("involvedObject", "regarding"):
        candidate = obj.get(name)
        if isinstance(candidate, dict):
            involved = candidate
            break
    reporting = obj.get("reportingComponent")
    if reporting is None:
        reporting = obj.get("reportingController")
    source = _get(obj, "source", "component")
    if source is None:
        source = _get(obj, "deprecatedSource", "component")
    source_text = _text(source) or _text(reporting)
    return {
        "involvedObject.kind": _text(involved.get("kind")),
        "involvedObject.namespace": _text(involved.get("namespace")),
        "involvedObject.name": _text(involved.get("name")),
        "involvedObject.uid": _text(involved.get("uid")),
        "involvedObject.apiVersion": _text(involved.get("apiVersion")),
        "involvedObject.resourceVersion": _text(involved.get("resourceVersion")),
        "involvedObject.fieldPath": _text(involved.get("fieldPath")),
        "reason": _text(obj.get("reason")),
        "reportingComponent": _text(reporting),
        "source": source_text,
        "type": _text(obj.get("type")),
    }


def _selectable_value(obj: Json, path: str) -> str:
    # A CRD selectableField's value: the single JSONPath result, "" when absent.
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return ""
        cur = cur[part]
    if isinstance(cur, (dict, list)):
        return ""
    return _text(cur)


def object_fields(
    obj: Json,
    kind: str,
    group: str,
    *,
    custom: bool = False,
    namespaced: bool = True,
    selectable_fields: Iterable[str] = (),
) -> dict[str, str]:
    """The field set the registry's GetAttrs exposes for field-selector matching."""
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": _text(meta.get("name"))}
    if namespaced:
        fields["metadata.namespace"] = _text(meta.get("namespace"))
    if custom:
        for path in selectable_fields:
            label = path.lstrip(".")
            fields[label] = _selectable_value(obj, label)
        return fields
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    key = (group, kind)
    if key == ("", "Pod"):
        pod_ips = status.get("podIPs") or []
        pod_ip = ""
        if pod_ips and isinstance(pod_ips[0], dict):
            pod_ip = _text(pod_ips[0].get("ip"))
        elif status.get("podIP"):
            pod_ip = _text(status.get("podIP"))
        fields.update(
            {
                "spec.nodeName": _text(spec.get("nodeName")),
                "spec.restartPolicy": _text(spec.get("restartPolicy")),
                "spec.schedulerName": _text(spec.get("schedulerName")),
                "spec.serviceAccountName": _text(spec.get("serviceAccountName")),
                "spec.hostNetwork": "true" if spec.get("hostNetwork") is True else "false",
                "status.phase": _text(status.get("phase")),
                "status.podIP": pod_ip,
                "status.nominatedNodeName": _text(status.get("nominatedNodeName")),
            }
        )
    elif key == ("", "Node"):
        fields["spec.unschedulable"] = "true" if spec.get("unschedulable") is True else "false"
    elif key == ("", "Namespace"):
        fields["status.phase"] = _text(status.get("phase"))
        fields["name"] = _text(meta.get("name"))
    elif key == ("", "Secret"):
        fields["type"] = _text(obj.get("type"))
    elif key == ("", "Service"):
        fields["spec.clusterIP"] = _text(spec.get("clusterIP"))
        fields["spec.type"] = _text(spec.get("type"))
    elif key == ("", "ReplicationController"):
        fields["status.replicas"] = str(int(status.get("replicas") or 0))
    elif key in (("", "Event"), ("events.k8s.io", "Event")):
        fields.update(_event_fields(obj))
    elif key == ("batch", "Job"):
        fields["status.successful"] = str(int(status.get("succeeded") or 0))
    elif key == ("apps", "ReplicaSet"):
        fields["status.replicas"] = str(int(status.get("replicas") or 0))
    return fields


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector: the AND of its terms, with labels converted for the kind."""

    requirements: tuple[FieldRequirement, ...] = ()
    kind: str = ""
    group: str = ""
    custom: bool = False
    namespaced: bool = True
    selectable_fields: tuple[str, ...] = field(default=())

    @classmethod
    def parse(
        cls,
        text: str,
        kind: str,
        group: str,
        *,
        custom: bool | None = None,
        namespaced: bool | None = None,
        selectable_fields: Iterable[str] = (),
    ) -> FieldSelector:
        """Parse a `fieldSelector` for a kind; 400 BadRequest with the apiserver's message.

        `custom` and `namespaced` default to what the built-in registry says about (group, kind);
        a kind it does not know in a dotted group is taken to be a namespaced custom resource.
        `selectable_fields` are the CRD version's `selectableFields[].jsonPath` values.
        """
        # CRD groups always contain a dot, so dotless groups ("", apps, batch, ...) are built in.
        builtin = (group, kind) in _BUILTIN_SCOPE or "." not in group
        is_custom = (not builtin) if custom is None else custom
        if namespaced is None:
            namespaced = _BUILTIN_SCOPE.get((group, kind), True)
        selectable = tuple(p.lstrip(".") for p in selectable_fields)
        try:
            parsed: list[tuple[str, str, str]] = []
            for part in sorted(_split_terms(text)):
                if part == "":
                    continue
                split = _split_term(part)
                if split is None:
                    raise _SelectorError(
                        f"invalid selector: '{text}'; can't understand '{part}'"
                    )
                lhs, op, rhs = split
                parsed.append((lhs, "!=" if op == "!=" else "=", _unescape(rhs)))
            reqs = tuple(
                FieldRequirement(
                    _convert_label(
                        group,
                        kind,
                        lhs,
                        custom=is_custom,
                        namespaced=namespaced,
                        selectable=frozenset(selectable),
                    ),
                    op,
                    value,
                )
                for lhs, op, value in parsed
            )
        except _SelectorError as err:
            raise bad_request(str(err)) from None
        return cls(reqs, kind, group, is_custom, namespaced, selectable)

    @classmethod
    def for_resource(cls, text: str, rt: ResourceType) -> FieldSelector:
        """Parse for a served resource type, taking scope, CRD-ness and selectable fields from it.

        A CRD version's `selectableFields[].jsonPath` values are read from
        `rt.extra["selectable_fields"]` when the registry put them there.
        """
        selectable = rt.extra.get("selectable_fields") or ()
        return cls.parse(
            text,
            rt.kind,
            rt.group,
            custom=rt.custom,
            namespaced=rt.namespaced,
            selectable_fields=[str(p) for p in selectable],
        )

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict the selection."""
        return not self.requirements

    def fields_of(self, obj: Json) -> dict[str, str]:
        """The object's selectable field values for this selector's kind."""
        return object_fields(
            obj,
            self.kind,
            self.group,
            custom=self.custom,
            namespaced=self.namespaced,
            selectable_fields=self.selectable_fields,
        )

    def matches(self, obj: Json) -> bool:
        if not self.requirements:
            return True
        fields = self.fields_of(obj)
        return all(r.matches(fields) for r in self.requirements)

    def requires_exact_match(self, field_name: str) -> str | None:
        """The value demanded for `field_name` by an `=` term, if any."""
        for r in self.requirements:
            if r.field == field_name and r.operator == "=":
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)
