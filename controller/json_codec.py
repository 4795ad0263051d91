"""JSON bytes in and out for the webhook server's reviews: orjson, with the standard library
for what orjson refuses.

A conversion review goes through JSON twice (the request decoded, the answer encoded), once
per object of a LIST in another version; orjson does both about five times faster than the
standard library. It refuses a little that the standard library takes: integers beyond 64
bits, NaN and Infinity, lone surrogates, non-string keys. Those go to the standard library, so
a review decodes and an answer encodes exactly when they did before. The bytes differ only
where JSON allows (non-ASCII characters as UTF-8 rather than escaped, no spaces), and in a
float NaN or Infinity, which orjson writes as null (no API server sends either: they are not
JSON).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps", "loads"]


def loads(data: bytes) -> Any:
    """The JSON value of `data`; ValueError (json.JSONDecodeError) when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def dumps(value: Any) -> bytes:
    """`value` as JSON (UTF-8); TypeError or ValueError when it cannot be."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value).encode()
