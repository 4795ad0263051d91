"""Where Go's base64.StdEncoding refuses a string: the offset its CorruptInputError names
(`illegal base64 data at input byte N`), which encoding/json reports for a []byte field (a
Secret's `data`, a ConfigMap's `binaryData`)."""

from __future__ import annotations

import re

_CANONICAL = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NEWLINES = (0x0A, 0x0D)


def corrupt_offset(text: str) -> int | None:
    """The byte offset Go's decoder reports for `text`, or None when it decodes."""
    if _CANONICAL.fullmatch(text):
        return None
    src = text.encode("utf-8")
    si = 0
    while si < len(src):
        si, offset = _quantum(src, si)
        if offset is not None:
            return offset
    return None


def _quantum(src: bytes, si: int) -> tuple[int, int | None]:
    """One 4-character quantum from `si` as decodeQuantum reads it: where the next starts
    and the error's offset, if any (newlines are skipped anywhere)."""
    j = 0
    while j < 4:
        if si == len(src):
            return si, None if j == 0 else si - j
        ch = src[si]
        si += 1
        if ch in _ALPHABET:
            j += 1
            continue
        if ch in _NEWLINES:
            continue
        if ch != ord("=") or j < 2:
            return si, si - 1
        if j == 2:  # a second '=' must follow
            si = _skip_newlines(src, si)
            if si == len(src):
                return si, len(src)
            if src[si] != ord("="):
                return si, si - 1
            si += 1
        si = _skip_newlines(src, si)
        return len(src), si if si < len(src) else None
    return si, None


def _skip_newlines(src: bytes, si: int) -> int:
    while si < len(src) and src[si] in _NEWLINES:
        si += 1
    return si
