"""The synchronous side of webhook conversion: what the write and read paths ask for.

`Operations` turns an object into another version wherever kube-apiserver's storage codec
would (a stored object read at the request's version, a written one encoded at the storage
version) by calling `to_version`. For a CRD whose `spec.conversion.strategy` is `Webhook` the
answer comes from the current request's `RequestConversions` (a context variable the HTTP layer
sets around each request): without an answer for exactly this object, `ConversionPending` is
raised, carrying what to send; the HTTP layer calls the webhook and runs the request again from
the start, which then finds the answer (the admission webhooks' replay, `admission.webhooks`).
Outside a request (the server's own controllers) and for the `None` strategy, only the
apiVersion is rewritten, as before.

An answer is kept for an object's content, kind, name, namespace, labels and annotations, not
its uid, resourceVersion, timestamps or managedFields: those are restored from the object
anyway (kube-apiserver's restoreObjectMeta keeps all metadata but labels and annotations), so
a replay that made a new uid, and the object as committed with its new resourceVersion, find
the answer their content got. The content's key (a sorted JSON encoding of the object) is only
made when a lookup misses by identity: the replay of a read finds each stored object, the very
dict the first pass sent (stored objects are never mutated), without encoding it, so a LIST of
N objects in another version makes no key at all instead of 2N.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..json_copy import copy_json
from ..registry import ResourceType
from ..storage import Storage

Json = dict[str, Any]

__all__ = ["CRDS", "ConversionPending", "RequestConversions", "current", "gvk_text",
           "restore_meta", "to_version", "webhook_of"]

CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")

#: The conversions of the request being served (None: the server's own work).
current: ContextVar[RequestConversions | None] = ContextVar("conversions", default=None)


class ConversionPending(Exception):
    """A request needs objects converted by a webhook it has no answers for yet."""

    def __init__(self, webhook: Json, objects: list[Json], desired: str) -> None:
        super().__init__(f"{len(objects)} objects to convert to {desired}")
        #: The CRD's `spec.conversion.webhook`.
        self.webhook = webhook
        self.objects = objects
        self.desired = desired


@dataclass
class RequestConversions:
    """One API request's conversion answers, kept across the replays of its work."""

    #: Answers by `answer_key`, for the recorded objects whose key was needed.
    answers: dict[str, Json] = field(default_factory=dict)
    #: (object, desired, answer) by the object's id; the object is held, so its id stays its.
    _by_identity: dict[int, tuple[Json, str, Json]] = field(default_factory=dict)
    #: Recorded in order, not yet in `answers` (keyed when a lookup first misses by identity).
    _unkeyed: list[tuple[Json, str, Json]] = field(default_factory=list)

    def record(self, obj: Json, desired: str, converted: Json) -> None:
        """Keep `converted` as the answer for `obj` (and any object of its content) at
        `desired`. `obj` must not change afterwards (a stored object never does)."""
        self._by_identity[id(obj)] = (obj, desired, converted)
        self._unkeyed.append((obj, desired, converted))

    def lookup(self, obj: Json, desired: str) -> Json | None:
        """The answer for `obj` at `desired`, restored onto its metadata; None when there is
        none yet."""
        known = self._by_identity.get(id(obj))
        if known is not None and known[0] is obj and known[1] == desired:
            return restore_meta(obj, known[2])
        if not self._by_identity:
            return None  # nothing recorded: no content to compare with
        for recorded, version, converted in self._unkeyed:
            self.answers[answer_key(recorded, version)] = converted
        self._unkeyed.clear()
        answer = self.answers.get(answer_key(obj, desired))
        return None if answer is None else restore_meta(obj, answer)


def answer_key(obj: Json, desired: str) -> str:
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in ("name", "namespace", "labels", "annotations") if k in meta}
    return json.dumps([desired, {**obj, "metadata": kept}], sort_keys=True)


def restore_meta(original: Json, converted: Json) -> Json:
    """The converted object with the original's metadata, but the converted labels and
    annotations (restoreObjectMeta); the result shares nothing with `converted`."""
    out = {k: copy_json(v) for k, v in converted.items() if k != "metadata"}
    meta = dict(original.get("metadata") or {})
    new_meta = converted.get("metadata") or {}
    for key in ("labels", "annotations"):
        if new_meta.get(key) is None:
            meta.pop(key, None)
        else:
            meta[key] = copy_json(new_meta[key])
    out["metadata"] = meta
    return out


def webhook_of(storage: Storage, rt: ResourceType) -> Json | None:
    """The `spec.conversion.webhook` of `rt`'s CRD when its strategy is Webhook, else None."""
    if not rt.custom:
        return None
    crd = storage.get(CRDS, "", f"{rt.plural}.{rt.group}")
    conversion = ((crd or {}).get("spec") or {}).get("conversion") or {}
    webhook = conversion.get("webhook")
    if conversion.get("strategy") != "Webhook" or not isinstance(webhook, dict):
        return None
    return webhook


def to_version(storage: Storage, rt: ResourceType, obj: Json, api_version: str) -> Json:
    """`obj` at `api_version` (see the module doc); ConversionPending when a webhook must
    answer first. `obj` is not changed; the result may be `obj` itself."""
    if obj.get("apiVersion") == api_version:
        return obj
    requests = current.get()
    webhook = webhook_of(storage, rt) if requests is not None else None
    if requests is None or webhook is None:
        return {**obj, "apiVersion": api_version}
    converted = requests.lookup(obj, api_version)
    if converted is None:
        raise ConversionPending(webhook, [obj], api_version)
    return converted


def all_to_version(storage: Storage, rt: ResourceType, objs: list[Json],
                   api_version: str) -> list[Json]:
    """Every object at `api_version`; one ConversionPending names all that lack answers."""
    if current.get() is None or webhook_of(storage, rt) is None:  # the CRD is looked up once
        return [o if o.get("apiVersion") == api_version else {**o, "apiVersion": api_version}
                for o in objs]
    out, missing = [], []
    pending: ConversionPending | None = None
    for obj in objs:
        try:
            out.append(to_version(storage, rt, obj, api_version))
        except ConversionPending as err:
            pending = err
            missing.append(obj)
    if pending is not None:
        raise ConversionPending(pending.webhook, missing, api_version)
    return out


def gvk_text(api_version: str, kind: str) -> str:
    """schema.GroupVersionKind's String(): `group/version, Kind=kind`."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"
