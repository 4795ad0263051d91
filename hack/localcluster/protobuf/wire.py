"""The protobuf wire format, as far as Kubernetes request bodies need it.

A body in `application/vnd.kubernetes.protobuf` is the four bytes `k8s\\x00` followed by a
`runtime.Unknown` message: {1: typeMeta {1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding,
4: contentType}. `raw` holds the object itself, encoded as the message of its kind.

This module knows nothing about Kubernetes types: it splits bytes into (field number, wire type,
value) records and reads the envelope. `decode.py` gives the records meaning.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

MAGIC = b"k8s\x00"

# Wire types (the low three bits of a field key).
VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
START_GROUP = 3
END_GROUP = 4
FIXED32 = 5

_MAX_VARINT_BYTES = 10


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


@dataclass(frozen=True)
class Record:
    """One field occurrence: its number, wire type and raw value.

    `value` is an int for VARINT/FIXED32/FIXED64 and bytes for LENGTH_DELIMITED.
    """

    number: int
    wire_type: int
    value: int | bytes


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at `pos` and the position after it."""
    result = 0
    shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= len(data):
            raise WireError("truncated varint")
        byte = data[pos + i]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos + i + 1
        shift += 7
    raise WireError("varint longer than 10 bytes")


def encode_varint(value: int) -> bytes:
    """The varint encoding of `value` (negative numbers as 64-bit two's complement)."""
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def to_signed(value: int, bits: int = 64) -> int:
    """Reinterpret an unsigned varint as a signed integer of `bits` bits (int32/int64 fields)."""
    value &= (1 << 64) - 1
    if value >= 1 << 63:
        value -= 1 << 64
    if bits == 32:
        value &= 0xFFFFFFFF
        if value >= 1 << 31:
            value -= 1 << 32
    return value


def iter_records(data: bytes) -> Iterator[Record]:
    """The field records of one message, in wire order. Groups are skipped."""
    pos = 0
    end = len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
            yield Record(number, wire_type, value)
        elif wire_type == LENGTH_DELIMITED:
            length, pos = read_varint(data, pos)
            if pos + length > end:
                raise WireError(f"field {number}: length {length} runs past the message end")
            yield Record(number, wire_type, data[pos:pos + length])
            pos += length
        elif wire_type == FIXED64:
            if pos + 8 > end:
                raise WireError(f"field {number}: truncated fixed64")
            yield Record(number, wire_type, int.from_bytes(data[pos:pos + 8], "little"))
            pos += 8
        elif wire_type == FIXED32:
            if pos + 4 > end:
                raise WireError(f"field {number}: truncated fixed32")
            yield Record(number, wire_type, int.from_bytes(data[pos:pos + 4], "little"))
            pos += 4
        elif wire_type == START_GROUP:
            pos = _skip_group(data, pos, number)
        else:
            raise WireError(f"field {number}: unexpected wire type {wire_type}")


def _skip_group(data: bytes, pos: int, number: int) -> int:
    """The position after the END_GROUP matching a START_GROUP of field `number`."""
    depth = 1
    while pos < len(data):
        key, pos = read_varint(data, pos)
        wire_type = key & 7
        if wire_type == START_GROUP:
            depth += 1
        elif wire_type == END_GROUP:
            depth -= 1
            if depth == 0:
                if key >> 3 != number:
                    raise WireError(f"group {number} closed by {key >> 3}")
                return pos
        elif wire_type == VARINT:
            _, pos = read_varint(data, pos)
        elif wire_type == LENGTH_DELIMITED:
            length, pos = read_varint(data, pos)
            pos += length
        elif wire_type == FIXED64:
            pos += 8
        elif wire_type == FIXED32:
            pos += 4
        else:
            raise WireError(f"unexpected wire type {wire_type} in group {number}")
    raise WireError(f"group {number} is not closed")


def iter_packed_varints(data: bytes) -> Iterator[int]:
    """The unsigned varints of a packed repeated field."""
    pos = 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        yield value


# --- building messages (tests, and anything answering in protobuf) ------------------------------


def key(number: int, wire_type: int) -> bytes:
    return encode_varint(number << 3 | wire_type)


def varint_field(number: int, value: int) -> bytes:
    return key(number, VARINT) + encode_varint(value)


def bytes_field(number: int, value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return key(number, LENGTH_DELIMITED) + encode_varint(len(raw)) + raw


# --- the envelope -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unknown:
    """A decoded `runtime.Unknown`: the object's type and its still-encoded bytes."""

    api_version: str
    kind: str
    raw: bytes
    content_encoding: str = ""
    content_type: str = ""


def parse_envelope(body: bytes) -> Unknown:
    """Split a `k8s\\x00`-prefixed body into its type and raw object bytes."""
    if not body.startswith(MAGIC):
        raise WireError("the body does not start with the protobuf magic prefix k8s\\x00")
    api_version = kind = content_encoding = content_type = ""
    raw = b""
    for rec in iter_records(body[len(MAGIC):]):
        if rec.wire_type != LENGTH_DELIMITED:
            continue
        assert isinstance(rec.value, bytes)
        if rec.number == 1:
            for meta in iter_records(rec.value):
                if meta.wire_type != LENGTH_DELIMITED:
                    continue
                assert isinstance(meta.value, bytes)
                if meta.number == 1:
                    api_version = _text(meta.value)
                elif meta.number == 2:
                    kind = _text(meta.value)
        elif rec.number == 2:
            raw = rec.value
        elif rec.number == 3:
            content_encoding = _text(rec.value)
        elif rec.number == 4:
            content_type = _text(rec.value)
    return Unknown(api_version, kind, raw, content_encoding, content_type)


def build_envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """The `k8s\\x00` + runtime.Unknown encoding of an object's message bytes."""
    type_meta = bytes_field(1, api_version) + bytes_field(2, kind)
    return MAGIC + bytes_field(1, type_meta) + bytes_field(2, raw)


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise WireError(f"string field is not UTF-8: {err}") from None
