"""Turn protobuf-encoded Kubernetes objects into the JSON dicts the JSON path would receive.

The Go client encodes a struct with gogo-protobuf: non-pointer scalars are always written (even
when zero), pointers only when set, slices and maps only when non-empty, non-pointer structs
always. encoding/json, on the other hand, drops zero `omitempty` scalars, keeps zero values of
pointers and of fields without `omitempty`, and never drops a struct. The `!` flag of the table
says which rule a scalar follows; everything else maps one to one.
"""

from __future__ import annotations

import base64
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from . import wire
from .messages import ANY_VERSION_KINDS, KINDS, MESSAGES
from .schema import SPECIALS, Field

log = logging.getLogger(__name__)

Json = dict[str, Any]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class UnknownKindError(ValueError):
    """The envelope names a kind this table has no message for."""

    def __init__(self, api_version: str, kind: str) -> None:
        super().__init__(f"no protobuf message is known for {api_version}, Kind={kind}")
        self.api_version = api_version
        self.kind = kind


def message_for(api_version: str, kind: str) -> str | None:
    """The table message an (apiVersion, kind) decodes with, if any."""
    return KINDS.get((api_version, kind)) or ANY_VERSION_KINDS.get(kind)


def decode_object(body: bytes) -> Json:
    """Decode a `k8s\\x00` + runtime.Unknown body into the object's JSON form."""
    envelope = wire.parse_envelope(body)
    if envelope.content_encoding:
        raise wire.WireError(f"unsupported content encoding {envelope.content_encoding!r}")
    name = message_for(envelope.api_version, envelope.kind)
    if name is None:
        raise UnknownKindError(envelope.api_version, envelope.kind)
    obj: Json = {"kind": envelope.kind, "apiVersion": envelope.api_version}
    obj.update(decode_message(envelope.raw, name))
    return obj


def decode_message(data: bytes, name: str, path: str = "") -> Json:
    """Decode the bytes of message `name` (a key of the table)."""
    fields = MESSAGES[name]
    out: Json = {}
    for rec in wire.iter_records(data):
        field = fields.get(rec.number)
        if field is None:
            log.warning("protobuf: skipping unknown field %d of %s at %s (wire type %d)",
                        rec.number, name, path or ".", rec.wire_type)
            continue
        where = f"{path}.{field.json_name}"
        if field.map:
            entry_key, entry_value = _map_entry(rec, field, where)
            out.setdefault(field.json_name, {})[entry_key] = entry_value
        elif field.repeated:
            out.setdefault(field.json_name, []).extend(_repeated_values(rec, field, where))
        elif field.inline:
            out.update(decode_message(_payload(rec, where), field.type, path))
        elif field.is_message:
            out[field.json_name] = decode_message(_payload(rec, where), field.type, where)
        else:
            value = _value(rec, field.type, where)
            # Quantity and IntOrString are Go structs, which encoding/json writes even when zero;
            # a zero Time is left out (its fields are `omitzero`, e.g. creationTimestamp).
            if field.keep_zero or (value is not None and field.type in SPECIALS) or (
                    not _is_zero(value)):
                out[field.json_name] = value
            else:
                out.pop(field.json_name, None)
    for field in fields.values():
        if field.null_when_absent and field.json_name not in out:
            out[field.json_name] = None
    return out


def _map_entry(rec: wire.Record, field: Field, where: str) -> tuple[str, Any]:
    """A map field occurrence: an entry message {1: key, 2: value}."""
    entry_key = ""
    entry_value: Any = None
    value_seen = False
    for part in wire.iter_records(_payload(rec, where)):
        if part.number == 1:
            entry_key = _value(part, "string", where)
        elif part.number == 2:
            value_seen = True
            entry_value = _element(part, field.type, f"{where}[{entry_key}]")
    if not value_seen:
        entry_value = _element(wire.Record(2, _zero_wire_type(field.type), _zero_raw(field.type)),
                               field.type, where)
    return entry_key, entry_value


def _repeated_values(rec: wire.Record, field: Field, where: str) -> list[Any]:
    if field.type in ("int32", "int64", "bool") and rec.wire_type == wire.LENGTH_DELIMITED:
        assert isinstance(rec.value, bytes)
        return [_scalar_from_varint(v, field.type)
                for v in wire.iter_packed_varints(rec.value)]
    return [_element(rec, field.type, where)]


def _element(rec: wire.Record, type_name: str, where: str) -> Any:
    """One value of a repeated field or map: a message, a special type or a scalar."""
    if type_name in MESSAGES:
        return decode_message(_payload(rec, where), type_name, where)
    return _value(rec, type_name, where)


def _value(rec: wire.Record, type_name: str, where: str) -> Any:
    if type_name in ("int32", "int64", "bool"):
        if rec.wire_type != wire.VARINT:
            raise wire.WireError(f"{where}: {type_name} field has wire type {rec.wire_type}")
        assert isinstance(rec.value, int)
        return _scalar_from_varint(rec.value, type_name)
    payload = _payload(rec, where)
    if type_name == "string":
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError as err:
            raise wire.WireError(f"{where}: string is not UTF-8: {err}") from None
    if type_name == "bytes":
        return base64.b64encode(payload).decode("ascii")
    if type_name in ("Time", "MicroTime"):
        return _time(payload, micro=type_name == "MicroTime", where=where)
    if type_name == "Quantity":
        text = _sub_string(payload, 1, where)
        return text if text else "0"
    if type_name == "IntOrString":
        return _int_or_string(payload, where)
    if type_name == "FieldsV1":
        raw = _sub_bytes(payload, 1, where)
        try:
            return json.loads(raw) if raw else {}
        except json.JSONDecodeError as err:
            raise wire.WireError(f"{where}: fieldsV1 is not JSON: {err}") from None
    raise wire.WireError(f"{where}: no decoder for type {type_name}")


def _scalar_from_varint(raw: int, type_name: str) -> int | bool:
    if type_name == "bool":
        return raw != 0
    return wire.to_signed(raw, 32 if type_name == "int32" else 64)


def _payload(rec: wire.Record, where: str) -> bytes:
    if rec.wire_type != wire.LENGTH_DELIMITED or not isinstance(rec.value, bytes):
        raise wire.WireError(f"{where}: expected a length-delimited field, got wire type "
                             f"{rec.wire_type}")
    return rec.value


def _is_zero(value: Any) -> bool:
    return value is None or value == "" or (value is False) or (
        isinstance(value, int) and not isinstance(value, bool) and value == 0)


def _zero_wire_type(type_name: str) -> int:
    return wire.VARINT if type_name in ("int32", "int64", "bool") else wire.LENGTH_DELIMITED


def _zero_raw(type_name: str) -> int | bytes:
    return 0 if type_name in ("int32", "int64", "bool") else b""


def _sub_string(payload: bytes, number: int, where: str) -> str:
    raw = _sub_bytes(payload, number, where)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise wire.WireError(f"{where}: string is not UTF-8: {err}") from None


def _sub_bytes(payload: bytes, number: int, where: str) -> bytes:
    found = b""
    for rec in wire.iter_records(payload):
        if rec.number == number:
            found = _payload(rec, where)
    return found


def _sub_varints(payload: bytes, where: str) -> dict[int, int]:
    found: dict[int, int] = {}
    for rec in wire.iter_records(payload):
        if rec.wire_type == wire.VARINT:
            assert isinstance(rec.value, int)
            found[rec.number] = rec.value
    return found


def _time(payload: bytes, micro: bool, where: str) -> str | None:
    """metav1.Time / MicroTime {1: seconds, 2: nanos}; the empty message is the zero time."""
    if not payload:
        return None
    parts = _sub_varints(payload, where)
    seconds = wire.to_signed(parts.get(1, 0))
    nanos = wire.to_signed(parts.get(2, 0), 32)
    try:
        moment = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    except OverflowError:
        raise wire.WireError(f"{where}: time {seconds}s is out of range") from None
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(payload: bytes, where: str) -> int | str:
    """intstr.IntOrString {1: type (0 int, 1 string), 2: intVal, 3: strVal}."""
    kind = 0
    int_val = 0
    str_val = ""
    for rec in wire.iter_records(payload):
        if rec.number == 1 and rec.wire_type == wire.VARINT:
            assert isinstance(rec.value, int)
            kind = wire.to_signed(rec.value)
        elif rec.number == 2 and rec.wire_type == wire.VARINT:
            assert isinstance(rec.value, int)
            int_val = wire.to_signed(rec.value, 32)
        elif rec.number == 3:
            str_val = _value(rec, "string", where)
    return str_val if kind == 1 else int_val
