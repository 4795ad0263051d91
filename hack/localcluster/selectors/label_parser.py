"""The label selector parser: apimachinery's `labels` lexer and parser, token for token.

A malformed `labelSelector` query parameter is rejected with the message the real parser gives,
so the tokens, the contexts in which `in`/`notin` are identifiers, and the wording of each
"found '…', expected: …" are kept as Go has them.
"""

from __future__ import annotations

from ..go_format import go_quote
from .label_requirement import (
    BINARY_OPERATORS,
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_EQUALS,
    NOT_IN,
    SET_OPERATORS,
    LabelRequirement,
    label_key_errors,
    new_requirement,
)
from .selector_error import SelectorError

__all__ = ["parse_requirements"]

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
                except SelectorError as err:
                    raise SelectorError(f"unable to parse requirement: {err}") from None
                t, lit2 = self.consume(_VALUES)
                if t == _EOS:
                    return requirements
                if t == _COMMA:
                    t2, lit3 = self.lookahead(_VALUES)
                    if t2 not in (_IDENT, _NOT):
                        raise SelectorError(f"found '{lit3}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return requirements
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> LabelRequirement:
        key, op = self.parse_key_and_infer_operator()
        if op in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, op, [], None)
        op = self.parse_operator()
        values = self.parse_values() if op in SET_OPERATORS else self.parse_exact_value()
        return new_requirement(key, op, sorted(values), None)

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        op = ""
        tok, lit = self.consume(_VALUES)
        if tok == _NOT:
            op = DOES_NOT_EXIST
            tok, lit = self.consume(_VALUES)
        if tok != _IDENT:
            raise SelectorError(f"found '{lit}', expected: identifier")
        errs = label_key_errors(lit)
        if errs:
            raise SelectorError(f"<nil>: Invalid value: {go_quote(lit)}: {'; '.join(errs)}")
        nxt, _ = self.lookahead(_VALUES)
        if nxt in (_EOS, _COMMA) and op != DOES_NOT_EXIST:
            op = EXISTS
        return lit, op

    def parse_operator(self) -> str:
        tok, lit = self.consume(_KEY_AND_OPERATOR)
        ops = {
            _IN_TOK: IN,
            _EQ: EQUALS,
            _DOUBLE_EQ: DOUBLE_EQUALS,
            _GT_TOK: GT,
            _LT_TOK: LT,
            _NOT_IN_TOK: NOT_IN,
            _NOT_EQ: NOT_EQUALS,
        }
        if tok not in ops:
            raise SelectorError(f"found '{lit}', expected: {', '.join(BINARY_OPERATORS)}")
        return ops[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume(_VALUES)
        if tok != _OPEN_PAR:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(_VALUES)
        if tok in (_IDENT, _COMMA):
            values = self.parse_identifiers_list()
            if self.consume(_VALUES)[0] != _CLOSE_PAR:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE_PAR:
            self.consume(_VALUES)
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

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
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
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
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead(_VALUES)
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume(_VALUES)
        if tok == _IDENT:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_requirements(text: str) -> list[LabelRequirement]:
    """The requirements of a `labelSelector` query parameter, in the order written.

    Raises SelectorError with the apiserver's message when the text does not parse.
    """
    return _Parser(text).parse()
