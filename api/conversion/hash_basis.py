"""What a drift hash of an object of ours covers, the same whichever version it is written in.

The operator marks each child it writes with a hash of the child's desired spec
(`nvidia.com/last-applied-hash`) and rewrites the child only when the hash moves. Until the
hub move, the desired DCDs were `v1alpha1` objects and the hash was of their spec; children
written so must keep their hash when the same desired child is built as `v1beta1`. The basis
is therefore the spec of the object's `v1alpha1` form: for a `v1alpha1` object its spec as it
is (today's value), for a `v1beta1` one the spec of its conversion (conversion is lossless, so
equal objects in either version have one basis).

What the `v1alpha1` form cannot show of the spec (v1beta1-only fields) is not in that spec, but
a change of it must still move the hash: it is kept in the `v1alpha1` form's spec payload, and
then the basis also carries that payload. Objects without such fields, every child written
before the move among them, keep exactly the old basis. Only this package reads the payload.
"""

from __future__ import annotations

from typing import Any

from api.conversion.dispatch import CONVERSIONS, convert
from api.conversion.objects import SPOKE
from api.kube import Json

__all__ = ["HUB_ONLY_KEY", "hash_basis"]

#: Where the basis keeps what only the hub can show (no spec field begins with `$`).
HUB_ONLY_KEY = "$hubOnly"


def hash_basis(obj: Json) -> Any:
    """The value a drift hash of `obj` (one of the five kinds, either version) is computed
    over: its `v1alpha1` spec (None when it has none), or, when only `v1beta1` can show part
    of the spec, a new dict of that spec and the rest under `HUB_ONLY_KEY`. Raises
    ConversionFailure as `convert` does."""
    if obj.get("kind") not in CONVERSIONS:
        return obj.get("spec")
    spoke = obj if obj.get("apiVersion") == SPOKE else convert(obj, SPOKE)
    spec = spoke.get("spec")
    annotations = (spoke.get("metadata") or {}).get("annotations") or {}
    remainder = annotations.get(CONVERSIONS[str(obj["kind"])].spec_annotation)
    if remainder is None:
        return spec
    return {"spec": spec, HUB_ONLY_KEY: remainder}
