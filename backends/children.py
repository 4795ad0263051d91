"""The desired children of a parent, as data: each object with how it is to be written.

The builders say *what* a parent should have; the reconcilers' child writer does the writing,
for every kind of parent the same way. A `DesiredChildren` lists the objects in the order they
are written, the kinds whose other owned objects are pruned, and the objects that must exist
without being created.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from backends import constants, naming

Json = dict[str, Any]

__all__ = [
    "Child",
    "DesiredChildren",
    "Kind",
    "ObjectRef",
    "Write",
    "is_model_service",
    "kind_of",
    "model_service_child",
    "owned",
    "unowned",
]

#: (apiVersion, kind) of a Kubernetes object.
Kind = tuple[str, str]


class Write(enum.Enum):
    """How a desired object is written."""

    #: Created with a controller reference to the parent, brought back to the desired state
    #: when it drifts, deleted once no longer desired.
    OWNED = "owned"
    #: Created with a controller reference when missing, never updated afterwards: someone
    #: else owns its fields from then on (a scaling adapter's replicas, a claim's size).
    CREATE_ONLY = "create-only"
    #: Created without an owner when missing (it serves every parent of a namespace), its
    #: fields brought back on drift, never deleted.
    UNOWNED = "unowned"
    #: Created by someone else; only `spec.replicas` is written, through the scale
    #: subresource, when it differs.
    SCALE = "scale"
    #: Owned and kept as it is (an older worker generation's DCD): only `spec.replicas` is
    #: written, by a patch of that field, when it differs. Not pruned while desired.
    REPLICAS = "replicas"


@dataclass(frozen=True)
class Child:
    """One desired object."""

    obj: Json
    write: Write = Write.OWNED
    #: An existing object not ours is used as it is, instead of being a name conflict, when it
    #: carries these labels with our values (None: never; empty: whatever it carries).
    shared_labels: tuple[str, ...] | None = None
    #: Top-level fields the API server refuses to change: a difference recreates the object
    #: (UNOWNED: a RoleBinding's roleRef, compared with the live one; OWNED: a
    #: ResourceClaimTemplate's spec, recreated when the desired object changed).
    immutable: tuple[str, ...] = ()
    #: UNOWNED copies of objects the cache holds without their content (Secrets): drift is
    #: this label's value (a digest of the content) differing, and a live object without our
    #: `app.kubernetes.io/managed-by` label is someone else's, used as it is.
    drift_label: str | None = None

    @property
    def kind(self) -> Kind:
        return kind_of(self.obj)

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])


@dataclass(frozen=True)
class ObjectRef:
    """An object that must exist for the children to work, which the parent does not create."""

    api_version: str
    kind: str
    name: str

    def __str__(self) -> str:
        return f'{self.kind.lower()}s "{self.name}"'


@dataclass(frozen=True)
class DesiredChildren:
    """Everything a parent should have, in writing order."""

    children: tuple[Child, ...]
    #: Owned objects of these kinds that are not among `children` are deleted.
    pruned: tuple[Kind, ...] = ()
    #: Objects that must exist first; while one is missing nothing is written.
    required: tuple[ObjectRef, ...] = field(default=())

    def objects(self) -> list[Json]:
        """The desired objects that are created (everything but scale requests)."""
        return [c.obj for c in self.children if c.write is not Write.SCALE]


def kind_of(obj: Mapping[str, Any]) -> Kind:
    return str(obj["apiVersion"]), str(obj["kind"])


def model_service_child(obj: Json) -> Child:
    """A model's headless Service: shared by every component serving that model in a
    namespace; the first one owns it, the others use it as it is."""
    return Child(obj, shared_labels=(constants.LABEL_MANAGED_BY, constants.LABEL_BASE_MODEL_HASH))


def owned(objects: Iterable[Json]) -> list[Child]:
    """Plain owned children, model Services recognised as shared."""
    return [model_service_child(o) if is_model_service(o) else Child(o) for o in objects]


def unowned(objects: Iterable[Json]) -> list[Child]:
    """Objects every parent of the namespace uses (the planner's and EPP's accounts): no
    owner; a binding's roleRef cannot change in place, so a new one replaces it."""
    return [Child(o, Write.UNOWNED, immutable=("roleRef",) if o["kind"] == "RoleBinding" else ())
            for o in objects]


def is_model_service(obj: Mapping[str, Any]) -> bool:
    """A model's headless Service (`services.model_service`): named after the model hash it
    carries. Component Services carry that label too, under their own names."""
    meta = obj.get("metadata") or {}
    digest = (meta.get("labels") or {}).get(constants.LABEL_BASE_MODEL_HASH)
    return (obj.get("kind") == "Service" and bool(digest)
            and meta.get("name") == naming.model_service_name_for_hash(str(digest)))
