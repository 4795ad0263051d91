"""Whole objects: metadata, the two private payload annotations, spec and status.

Each kind has one spec payload annotation and one status payload annotation. On a v1beta1
object they hold the sparse v1alpha1 fields that v1beta1 cannot represent; on a v1alpha1
object, the sparse v1beta1 fields that v1alpha1 cannot represent. Conversion reads them from
the source, removes them, and writes the new ones to the result; nothing else in the operator
may read them.

Metadata is copied as it is, apart from the private annotations. One shape is not kept: an
explicitly empty `metadata.annotations` map on an object that needed a payload comes back
without the map (kube-apiserver omits an empty annotations map, so such an object never
reaches conversion).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import attrs

from api.conversion.rules import Rule, convert_fields
from api.kube import Json, copy_json

__all__ = ["HUB", "SPOKE", "KindConversion", "convert_object", "read_payload"]

GROUP = "nvidia.com"
HUB = f"{GROUP}/v1beta1"
SPOKE = f"{GROUP}/v1alpha1"


@attrs.frozen
class KindConversion:
    """How one kind converts: its payload annotation names and its spec and status rules."""

    kind: str
    spec_annotation: str
    status_annotation: str
    spec_rules: Sequence[Rule]
    status_rules: Sequence[Rule]
    #: (spoke field, hub field) of a name the hub requires and the spoke may leave out: the
    #: hub then takes metadata.name, and a marker in the payload takes it away again.
    defaulted_name: tuple[str, str] | None = None

    @property
    def annotations(self) -> tuple[str, str]:
        """The two private annotation names."""
        return self.spec_annotation, self.status_annotation


#: Payload markers of `KindConversion.defaulted_name` (never a field name: they begin with $):
#: the hub's name was taken from metadata.name; the hub had no name at all.
NAME_FROM_METADATA = "$nameFromMetadata"
NAME_ABSENT = "$nameAbsent"


def convert_object(obj: Json, conversion: KindConversion, *, to_hub: bool,
                   detached: bool = True) -> Json:
    """Convert a whole object of `conversion.kind`; the input is not changed. Unless
    `detached`, the result may share values with the input and between its own places (for a
    caller that only encodes it, such as the conversion webhook)."""
    src = obj  # read only: everything written goes to new dicts, and the result is copied
    annotations = _annotations(src)
    restored_spec = read_payload(annotations.get(conversion.spec_annotation))
    restored_status = read_payload(annotations.get(conversion.status_annotation))
    markers: Json = {}
    if restored_spec is not None and conversion.defaulted_name is not None:
        markers = {k: restored_spec.pop(k) for k in (NAME_FROM_METADATA, NAME_ABSENT)
                   if k in restored_spec}
    out: Json = {}
    saves: dict[str, Json] = {}
    for key, value in src.items():
        if key == "apiVersion":
            out[key] = HUB if to_hub else SPOKE
        elif key == "metadata" and isinstance(value, dict):
            out[key] = _scrubbed(value, conversion.annotations)
        elif key in ("spec", "status") and isinstance(value, dict):
            rules, restored, name = (
                (conversion.spec_rules, restored_spec, conversion.spec_annotation)
                if key == "spec"
                else (conversion.status_rules, restored_status, conversion.status_annotation)
            )
            out[key], save = convert_fields(value, rules, to_hub=to_hub, restored=restored)
            if key == "spec" and conversion.defaulted_name is not None:
                save = _defaulted_name(conversion.defaulted_name, src, value, out[key], save,
                                       markers, to_hub=to_hub)
            if save:
                saves[name] = save
        else:
            out[key] = value
    out.setdefault("apiVersion", HUB if to_hub else SPOKE)
    if saves:
        current = out.get("metadata")
        metadata = dict(current) if isinstance(current, dict) else {}
        existing = metadata.get("annotations")
        written = dict(existing) if isinstance(existing, dict) else {}
        for name, save in saves.items():
            written[name] = json.dumps(save, separators=(",", ":"), sort_keys=True)
        metadata["annotations"] = written
        out["metadata"] = metadata
    # Rules may share values between places; a detached result shares none.
    return copy_json(out) if detached else out


def _defaulted_name(fields: tuple[str, str], src: Json, spec: Json, out: Json, save: Json,
                    markers: Json, *, to_hub: bool) -> Json:
    """The required hub name of a spoke that leaves it out (the original's rule for a DCD
    without serviceName): metadata.name, marked so that the spoke gets its omission back
    while the name is still that; a hub without one is marked so none is invented."""
    spoke_field, hub_field = fields
    metadata = src.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if to_hub:
        if spoke_field in spec or markers.get(NAME_ABSENT) or not isinstance(name, str):
            return save
        out[hub_field] = name
        return {**save, NAME_FROM_METADATA: True}
    if hub_field not in spec:
        return {**save, NAME_ABSENT: True}
    if markers.get(NAME_FROM_METADATA) and out.get(spoke_field) == name:
        del out[spoke_field]
    return save


def _annotations(obj: Json) -> Json:
    metadata = obj.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return annotations if isinstance(annotations, dict) else {}


def read_payload(raw: object) -> Json | None:
    """A payload annotation's object; anything unreadable counts as no payload."""
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _scrubbed(metadata: Json, names: tuple[str, ...]) -> Json:
    """Metadata without the private annotations; an annotations map (and a metadata object)
    that only held them goes away with them."""
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict) or not any(n in annotations for n in names):
        return metadata
    kept = {k: v for k, v in annotations.items() if k not in names}
    out = {k: v for k, v in metadata.items() if k != "annotations"}
    if kept:
        out["annotations"] = kept
    return out
