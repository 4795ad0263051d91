"""Kubernetes discovery in container mode: a graph's `nvidia.com/dynamo-kube-discovery-mode:
container` makes each container of its pods register as a worker of its own (failover's
engines, which name themselves).

As the original renders it: the graph's annotation reaches its components (a child DCD's
annotations, a Grove clique's), and a component whose annotations say container mode gives
`main` `CONTAINER_NAME` and `DYN_KUBE_DISCOVERY_MODE=container` among the common env
(`backends.component_defaults`; a DCD of its own states the annotation itself).

The operator before `KUBE_DISCOVERY_MODE` (0.2.0) left a graph's annotation alone: passing it
on for the graphs it made would change their children's pod templates, and restart their
pods, when this operator takes over. So a graph passes it on by its origin version
(`backends.origin_gates`): a graph stamped by an older operator, or not stamped, keeps its
children as they were, unless one of its components fails over (`experimental.failover`,
which needs container mode, for the whole graph, and is rendered anew anyway).
"""

from __future__ import annotations

from api.origin_version import OriginVersion, origin_version
from backends import constants
from backends.hub_graph import HubGraph
from backends.origin_gates import OriginGate

__all__ = ["KUBE_DISCOVERY_MODE", "inherited_discovery_mode"]

KUBE_DISCOVERY_MODE = OriginGate("KubeDiscoveryMode", OriginVersion((0, 2, 0)))


def inherited_discovery_mode(graph: HubGraph) -> dict[str, str]:
    """The graph's discovery-mode annotation as each of its components inherits it ({} when
    the graph has none, or the gate leaves its children as they were)."""
    annotations = graph.model.metadata.get("annotations") or {}
    mode = annotations.get(constants.ANNOTATION_KUBE_DISCOVERY_MODE)
    if mode is None:
        return {}
    fails_over = any(c.experimental is not None and c.experimental.failover is not None
                     for _, c in graph.components())
    if not (fails_over or KUBE_DISCOVERY_MODE.enabled(origin_version(annotations))):
        return {}
    return {constants.ANNOTATION_KUBE_DISCOVERY_MODE: str(mode)}
