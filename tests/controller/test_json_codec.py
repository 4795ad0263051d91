"""The webhook server's JSON codec: compact ASCII-escaped answers, decoding and encoding
exactly what the json module takes."""

from __future__ import annotations

import json
import math

import pytest

from controller import json_codec


def test_values_round_trip_compact_and_escaped() -> None:
    value = {"kind": "ConversionReview", "n": [1, -2, 2**63 - 1, 2**64 - 1, 0.5, None, True],
             "name": "café ☃", "nested": {"a": {}}}
    encoded = json_codec.dumps(value)
    assert isinstance(encoded, bytes)
    assert json_codec.loads(encoded) == value
    assert json.loads(encoded) == value
    assert b" " not in json_codec.dumps({"a": [1, 2]})
    assert b"caf\\u00e9 \\u2603" in encoded


def test_what_json_takes_beyond_plain_values() -> None:
    huge = 2**70
    assert json_codec.loads(b'{"n": 1180591620717411303424}') == {"n": huge}
    assert json_codec.dumps({"n": huge}) == b'{"n":1180591620717411303424}'
    assert math.isnan(json_codec.loads(b"[NaN]")[0])
    surrogate = json_codec.loads(b'["\\ud800"]')
    assert surrogate == ["\ud800"]
    assert json_codec.dumps(surrogate) == b'["\\ud800"]'
    assert json_codec.dumps({1: "a"}) == b'{"1":"a"}'


@pytest.mark.parametrize("data", [b"", b"{", b"\xff\xfe{}", b'{"a": 1} x'])
def test_what_is_not_json_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        json_codec.loads(data)
    with pytest.raises(ValueError):
        json.loads(data)


def test_what_cannot_be_encoded_raises() -> None:
    with pytest.raises(TypeError):
        json_codec.dumps({"a": object()})
