"""How a message table entry reads, and the parsed form the decoder walks.

Each message is written as one string of `;`-separated field entries (see `messages.py`):

    <number> <jsonName> <type>[flags]

`type` is a scalar (`string`, `int32`, `int64`, `bool`, `bytes`), a well-known Kubernetes type
with its own JSON form (`Time`, `MicroTime`, `Quantity`, `IntOrString`, `FieldsV1`), or the
name of another message in the table (`core.PodSpec`). Prefixes: `[]T` is a repeated field,
`{}T` a `map<string, T>`.

Flags, after the type:
  `!`  emit the value even when it is the zero value. The Go field is a pointer (`*int32`,
       `*bool`: set means present, whatever its value) or its JSON tag lacks `omitempty`
       (`containerPort`, `name`). Without `!` a zero scalar is dropped, as `omitempty` does.
  `?`  null when absent: a pointer, slice or map whose JSON tag lacks `omitempty`
       (`PodSpec.containers`, `PolicyRule.verbs`, `DeploymentSpec.selector`); encoding/json
       writes `null` for it when unset, and so does the decoder.
  `^`  inline: the message's JSON fields are merged into the parent (`json:",inline"`, e.g.
       `Probe.handler`, `Volume.volumeSource`); the json name is then only documentation.

Messages are always emitted when present on the wire: encoding/json never drops a struct, and a
present pointer is a set pointer.
"""

from __future__ import annotations

from dataclasses import dataclass

SCALARS = frozenset({"string", "int32", "int64", "bool", "bytes"})
SPECIALS = frozenset({"Time", "MicroTime", "Quantity", "IntOrString", "FieldsV1"})


@dataclass(frozen=True)
class Field:
    number: int
    json_name: str
    type: str
    repeated: bool = False
    map: bool = False
    keep_zero: bool = False
    null_when_absent: bool = False
    inline: bool = False

    @property
    def is_message(self) -> bool:
        return self.type not in SCALARS and self.type not in SPECIALS


Message = dict[int, Field]


class SchemaError(ValueError):
    """A message table entry does not follow the grammar above."""


def parse_message(name: str, spec: str) -> Message:
    """Parse one table entry into its fields, keyed by field number."""
    fields: Message = {}
    for raw in spec.split(";"):
        entry = raw.strip()
        if not entry:
            continue
        parts = entry.split()
        if len(parts) != 3:
            raise SchemaError(f"{name}: field entry {entry!r} is not '<number> <name> <type>'")
        number_text, json_name, type_text = parts
        try:
            number = int(number_text)
        except ValueError:
            raise SchemaError(f"{name}: field number {number_text!r} is not an integer") from None
        flags = ""
        while type_text and type_text[-1] in "!?^":
            flags += type_text[-1]
            type_text = type_text[:-1]
        keep_zero, null_when_absent, inline = "!" in flags, "?" in flags, "^" in flags
        repeated = type_text.startswith("[]")
        is_map = type_text.startswith("{}")
        if repeated or is_map:
            type_text = type_text[2:]
        if not type_text:
            raise SchemaError(f"{name}: field {number} has no type")
        if number in fields:
            raise SchemaError(f"{name}: field number {number} appears twice")
        field = Field(number, json_name, type_text, repeated, is_map, keep_zero,
                      null_when_absent, inline)
        if inline and (not field.is_message or repeated or is_map or null_when_absent):
            raise SchemaError(f"{name}: only a singular message field can be inline")
        fields[number] = field
    return fields


def parse_table(table: dict[str, str]) -> dict[str, Message]:
    """Parse a whole table and check that every message a field names is in it."""
    messages = {name: parse_message(name, spec) for name, spec in table.items()}
    for name, fields in messages.items():
        for field in fields.values():
            if field.is_message and field.type not in messages:
                raise SchemaError(f"{name}.{field.json_name}: unknown message {field.type}")
    return messages
