"""Printers of volumes: PersistentVolumeClaim and PersistentVolume (core), StorageClass."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cells import age_of, as_dict, as_list, as_str, is_deleting, name_of, named_row, quantity
from .columns import Col, Printer, Row, named_columns

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_DOCS = {
    "pvc.phase": "phase represents the current phase of PersistentVolumeClaim.",
    "pvc.volume": "volumeName is the binding reference to the PersistentVolume backing this claim.",
    "pvc.capacity": "capacity represents the actual resources of the underlying volume.",
    "pvc.accessModes": "accessModes contains the actual access modes the volume backing the PVC "
    "has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
    "pvc.volumeMode": "volumeMode defines what type of volume is required by the claim. Value of "
    "Filesystem is implied when not included in claim spec.",
    "pv.capacity": "capacity is the description of the persistent volume's resources and capacity.",
    "pv.accessModes": "accessModes contains all ways the volume can be mounted.",
    "pv.reclaim": "persistentVolumeReclaimPolicy defines what happens to a persistent volume when "
    "released from its claim.",
    "pv.phase": "phase indicates if a volume is available, bound to a claim, or released by a "
    "claim.",
    "pv.claim": "claimRef is part of a bi-directional binding between PersistentVolume and "
    "PersistentVolumeClaim.",
    "pv.reason": "reason is a brief CamelCase string that describes any failure and is meant for "
    "machine parsing and tidy display in the CLI.",
    "pv.volumeMode": "volumeMode defines if a volume is intended to be used with a formatted "
    "filesystem or to remain in raw block state. Value of Filesystem is implied when not included "
    "in spec.",
    "sc.provisioner": "Provisioner indicates the type of the provisioner.",
    "sc.reclaim": "Dynamically provisioned PersistentVolumes of this storage class are created "
    "with this reclaimPolicy. Defaults to Delete.",
    "sc.binding": "VolumeBindingMode indicates how PersistentVolumeClaims should be provisioned "
    "and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by "
    "servers that enable the VolumeScheduling feature.",
    "sc.expansion": "AllowVolumeExpansion shows whether the storage class allow volume expand",
}
_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _access_modes(modes: Any) -> str:
    have = set(as_list(modes))
    return ",".join(short for mode, short in _ACCESS_MODES if mode in have)


def _storage_class(obj: Json) -> str:
    annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
    if "volume.beta.kubernetes.io/storage-class" in annotations:
        return as_str(annotations["volume.beta.kubernetes.io/storage-class"])
    return as_str(as_dict(obj.get("spec")).get("storageClassName"))


def _unset_or(value: Any) -> str:
    return "<unset>" if value is None else as_str(value)


def _phase(obj: Json) -> str:
    return "Terminating" if is_deleting(obj) else as_str(as_dict(obj.get("status")).get("phase"))


def _print_pvc(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    capacity = access = ""
    if spec.get("volumeName"):
        access = _access_modes(status.get("accessModes"))
        capacity = quantity(as_dict(status.get("capacity")).get("storage"))
    cells = named_row(
        obj,
        now,
        _phase(obj),
        as_str(spec.get("volumeName")),
        capacity,
        access,
        _storage_class(obj),
        _unset_or(spec.get("volumeAttributesClassName")),
        after_age=[_unset_or(spec.get("volumeMode"))],
    )
    return cells, None


def _print_pv(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    claim = ""
    if isinstance(spec.get("claimRef"), dict):
        ref = as_dict(spec.get("claimRef"))
        claim = f"{as_str(ref.get('namespace'))}/{as_str(ref.get('name'))}"
    cells = named_row(
        obj,
        now,
        quantity(as_dict(spec.get("capacity")).get("storage")),
        _access_modes(spec.get("accessModes")),
        as_str(spec.get("persistentVolumeReclaimPolicy")),
        _phase(obj),
        claim,
        _storage_class(obj),
        _unset_or(spec.get("volumeAttributesClassName")),
        as_str(status.get("reason")),
        after_age=[_unset_or(spec.get("volumeMode"))],
    )
    return cells, None


def _print_storageclass(obj: Json, now: datetime) -> Row:
    annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
    name = name_of(obj)
    if (
        annotations.get("storageclass.kubernetes.io/is-default-class") == "true"
        or annotations.get("storageclass.beta.kubernetes.io/is-default-class") == "true"
    ):
        name += " (default)"
    cells = [
        name,
        as_str(obj.get("provisioner")),
        as_str(obj.get("reclaimPolicy")) or "Delete",
        as_str(obj.get("volumeBindingMode")) or "Immediate",
        obj.get("allowVolumeExpansion") is True,
        age_of(obj, now),
    ]
    return cells, None


PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "PersistentVolumeClaim"): Printer(
        named_columns(
            Col("Status", "string", _DOCS["pvc.phase"]),
            Col("Volume", "string", _DOCS["pvc.volume"]),
            Col("Capacity", "string", _DOCS["pvc.capacity"]),
            Col("Access Modes", "string", _DOCS["pvc.accessModes"]),
            Col("StorageClass", "string", "StorageClass of the pvc"),
            Col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
            after_age=[Col("VolumeMode", "string", _DOCS["pvc.volumeMode"], 1)],
        ),
        _print_pvc,
    ),
    ("", "PersistentVolume"): Printer(
        named_columns(
            Col("Capacity", "string", _DOCS["pv.capacity"]),
            Col("Access Modes", "string", _DOCS["pv.accessModes"]),
            Col("Reclaim Policy", "string", _DOCS["pv.reclaim"]),
            Col("Status", "string", _DOCS["pv.phase"]),
            Col("Claim", "string", _DOCS["pv.claim"]),
            Col("StorageClass", "string", "StorageClass of the pv"),
            Col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
            Col("Reason", "string", _DOCS["pv.reason"]),
            after_age=[Col("VolumeMode", "string", _DOCS["pv.volumeMode"], 1)],
        ),
        _print_pv,
    ),
    ("storage.k8s.io", "StorageClass"): Printer(
        named_columns(
            Col("Provisioner", "string", _DOCS["sc.provisioner"]),
            Col("ReclaimPolicy", "string", _DOCS["sc.reclaim"]),
            Col("VolumeBindingMode", "string", _DOCS["sc.binding"]),
            Col("AllowVolumeExpansion", "string", _DOCS["sc.expansion"]),
        ),
        _print_storageclass,
    ),
}
