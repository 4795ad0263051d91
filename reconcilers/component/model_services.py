"""Waking every component that serves a model when its shared headless Service changes.

Components of one namespace that serve the same base model share one Service
(`dynamo-model-<hash>`); only the first of them controls it, so an owner-based watch wakes
only that one. When it goes away (its owner deleted, say) the others must recreate it: this
mapper sends every DCD whose `modelRef` hashes to the Service's label a reconcile.
"""

from __future__ import annotations

from typing import Any

from backends import constants, naming
from controller.cache import Cache
from controller.handlers import Mapper
from controller.reconcile import Request
from reconcilers.machinery.resources import COMPONENT_DEPLOYMENTS

Json = dict[str, Any]


def model_service_informer_mapper(cache: Cache) -> Mapper:
    """A watch mapper for Services, reading DCDs from the cache's DCD informer."""
    dcds = cache.informer(COMPONENT_DEPLOYMENTS)

    def mapper(service: Json) -> list[Request]:
        meta = service.get("metadata") or {}
        labels = meta.get("labels") or {}
        digest = labels.get(constants.LABEL_BASE_MODEL_HASH)
        if not digest or labels.get(constants.LABEL_MANAGED_BY) != constants.MANAGED_BY:
            return []
        namespace = str(meta.get("namespace", ""))
        requests = []
        for dcd in dcds.store.list(namespace):
            model = ((dcd.get("spec") or {}).get("modelRef") or {}).get("name")
            if model and naming.model_hash(str(model)) == digest:
                requests.append(Request(namespace, dcd["metadata"]["name"]))
        return requests

    return mapper
