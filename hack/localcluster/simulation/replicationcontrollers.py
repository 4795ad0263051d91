"""The ReplicationController controller (core/v1): the ReplicaSet controller on the older kind.

kube-controller-manager runs one controller for both (`replication` wraps the ReplicaSet
controller); a ReplicationController differs only in its selector, a plain map of labels
(equality-based, defaulted by the API server to the template's labels), and in the name its
events come from (`replication-controller`). Pods are `<rc>-<random>`, controller-owned;
status carries replicas / fullyLabeledReplicas / readyReplicas / availableReplicas /
observedGeneration.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..selectors import LabelSelector
from ..storage import ResourceKey
from .replicasets import ReplicaSetController

Json = dict[str, Any]

REPLICATION_CONTROLLERS: ResourceKey = ("", "replicationcontrollers")


class ReplicationControllerController(ReplicaSetController):
    """Keeps each ReplicationController's pods at spec.replicas."""

    component = "replication-controller"
    resource: ClassVar[ResourceKey] = REPLICATION_CONTROLLERS
    kind: ClassVar[str] = "ReplicationController"

    def selector(self, spec: Json) -> LabelSelector:
        selector = spec.get("selector") or ((spec.get("template") or {}).get(
            "metadata") or {}).get("labels") or {}
        return LabelSelector.from_validated_set({str(k): str(v) for k, v in selector.items()})
