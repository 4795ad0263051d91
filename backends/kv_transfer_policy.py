"""`spec.experimental.kvTransferPolicy`: the worker pods of a graph learn their node's place in
the cluster's topology, and which level decode routing keeps KV transfers within.

For every worker, prefill and decode component of a graph with a policy (DCD path and Grove
alike, baked into the component's inputs as the original bakes it into the pod template):

- the main container's env: `DYN_KV_TRANSFER_DOMAIN` (the policy's domain),
  `DYN_KV_TRANSFER_ENFORCEMENT` (`required` unless stated), `DYN_TOPOLOGY_ENABLED=true`,
  `DYN_TOPOLOGY_MOUNT_PATH=/etc/dynamo/topology`, and with a weight
  `DYN_KV_TRANSFER_PREFERRED_WEIGHT` (as a float32 prints shortest: 0.85, not
  0.8500000238418579); these names are the operator's (a user's value of them is replaced);
- a Downward API volume `topology-labels`, mounted read-only at `/etc/dynamo/topology`,
  projecting pod labels into one file per domain: with `labelKey` the label of that key into
  `<domain>`; with `clusterTopologyName` (Grove only) the label
  `nvidia.com/dynamo-topology.<level>` into `<level>`, for every level of that ClusterTopology;
- the source annotation the topology label controller (`reconcilers.topology_label`) acts on:
  `nvidia.com/topology-label-key` or `nvidia.com/topology-cluster-topology-name`.

The labels themselves are copied from the pod's node once it is scheduled, by that
controller: a pod's labels are not known when its template is written. The levels of a
ClusterTopology come from the cluster (`topologies`: name -> its domains, broadest first, read
by the graph controller); a graph naming one that does not exist, or a domain it lacks, cannot
be rendered, and neither can a `clusterTopologyName` outside the Grove path.
"""

from __future__ import annotations

import copy
import struct
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from api.conversion.render_inputs import ComponentInputs, PodInputs
from api.v1alpha1 import ExtraPodMetadata, ExtraPodSpec
from api.v1beta1 import DynamoComponentDeploymentSharedSpec, KvTransferPolicy
from backends import constants
from backends.errors import GenerationError
from backends.hub_graph import HubGraph

Json = dict[str, Any]

__all__ = [
    "ANNOTATION_CLUSTER_TOPOLOGY",
    "ANNOTATION_LABEL_KEY",
    "TOPOLOGY_LABEL_PREFIX",
    "kv_transfer_policy",
    "policy_env",
    "topology_label",
    "with_kv_transfer_policy",
    "with_policy_volume",
]

ANNOTATION_LABEL_KEY = "nvidia.com/topology-label-key"
ANNOTATION_CLUSTER_TOPOLOGY = "nvidia.com/topology-cluster-topology-name"
TOPOLOGY_LABEL_PREFIX = "nvidia.com/dynamo-topology."
VOLUME = "topology-labels"
MOUNT_PATH = "/etc/dynamo/topology"
ENV_DOMAIN = "DYN_KV_TRANSFER_DOMAIN"
ENV_ENFORCEMENT = "DYN_KV_TRANSFER_ENFORCEMENT"
ENV_PREFERRED_WEIGHT = "DYN_KV_TRANSFER_PREFERRED_WEIGHT"
ENV_TOPOLOGY_ENABLED = "DYN_TOPOLOGY_ENABLED"
ENV_TOPOLOGY_MOUNT_PATH = "DYN_TOPOLOGY_MOUNT_PATH"
POLICY_ENV = frozenset({ENV_DOMAIN, ENV_ENFORCEMENT, ENV_PREFERRED_WEIGHT, ENV_TOPOLOGY_ENABLED,
                        ENV_TOPOLOGY_MOUNT_PATH})
FIELD = "spec.experimental.kvTransferPolicy"


def kv_transfer_policy(graph: HubGraph) -> KvTransferPolicy | None:
    """The graph's policy, when it names a topology source."""
    experimental = graph.model.spec.experimental
    policy = experimental.kv_transfer_policy if experimental is not None else None
    if policy is None or not (policy.label_key or policy.cluster_topology_name):
        return None
    return policy


def topology_label(domain: str) -> str:
    """The pod label a ClusterTopology level is copied into."""
    return TOPOLOGY_LABEL_PREFIX + domain


def policy_env(policy: KvTransferPolicy) -> list[Json]:
    """The workers' env of the policy."""
    env = [{"name": ENV_DOMAIN, "value": policy.domain},
           {"name": ENV_ENFORCEMENT, "value": policy.enforcement or "required"},
           {"name": ENV_TOPOLOGY_ENABLED, "value": "true"},
           {"name": ENV_TOPOLOGY_MOUNT_PATH, "value": MOUNT_PATH}]
    if policy.preferred_weight is not None:
        env.append({"name": ENV_PREFERRED_WEIGHT, "value": _float32(policy.preferred_weight)})
    return env


def with_kv_transfer_policy(graph: HubGraph, component: DynamoComponentDeploymentSharedSpec,
                            inputs: ComponentInputs, *, grove: bool, grove_enabled: bool = True,
                            topologies: Mapping[str, Sequence[str]] | None = None
                            ) -> ComponentInputs:
    """`inputs` of a graph's component with the policy baked in (unchanged for a component
    that is not a worker, or a graph without a policy). `grove`: the graph runs on Grove;
    `grove_enabled`: the operator could run it there (for the message when it does not)."""
    policy = kv_transfer_policy(graph)
    if policy is None or component.type not in constants.WORKER_TYPES:
        return inputs
    domains = _domains(graph, policy, grove=grove, grove_enabled=grove_enabled,
                       topologies=topologies or {})
    pod = inputs.pod
    envs = [e for e in pod.envs or [] if e.get("name") not in POLICY_ENV] + policy_env(policy)
    extra = copy.deepcopy(pod.extra_pod_spec) if pod.extra_pod_spec is not None else (
        ExtraPodSpec())
    extra.pod_spec["volumes"] = [
        *(v for v in extra.pod_spec.get("volumes") or [] if v.get("name") != VOLUME),
        _volume(policy, domains)]
    main = dict(extra.main_container or {})
    mount = {"name": VOLUME, "mountPath": MOUNT_PATH, "readOnly": True}
    main["volumeMounts"] = [
        *(m for m in main.get("volumeMounts") or []
          if m.get("name") != VOLUME and m.get("mountPath") != MOUNT_PATH), mount]
    extra.main_container = main
    metadata = pod.extra_pod_metadata or ExtraPodMetadata()
    annotations = {k: v for k, v in (metadata.annotations or {}).items()
                   if k not in (ANNOTATION_LABEL_KEY, ANNOTATION_CLUSTER_TOPOLOGY)}
    if policy.label_key:
        annotations[ANNOTATION_LABEL_KEY] = policy.label_key
    else:
        annotations[ANNOTATION_CLUSTER_TOPOLOGY] = str(policy.cluster_topology_name)
    metadata = ExtraPodMetadata(labels=metadata.labels, annotations=annotations)
    return inputs.replace(pod=pod.replace(envs=envs, extra_pod_spec=extra,
                                          extra_pod_metadata=metadata))


def with_policy_volume(component: PodInputs, pod: PodInputs) -> PodInputs:
    """`pod` (a role's pod group, whose template replaces the component's) with the policy's
    topology volume and main-container mount that `component`'s group carries, if any."""
    source = component.extra_pod_spec
    volume = next((v for v in (source.pod_spec.get("volumes") or []) if v.get("name") == VOLUME),
                  None) if source is not None else None
    if source is None or volume is None:
        return pod
    mount = {"name": VOLUME, "mountPath": MOUNT_PATH, "readOnly": True}
    extra = copy.deepcopy(pod.extra_pod_spec) if pod.extra_pod_spec is not None else (
        ExtraPodSpec())
    extra.pod_spec["volumes"] = [
        *(v for v in extra.pod_spec.get("volumes") or [] if v.get("name") != VOLUME), volume]
    main = dict(extra.main_container or {})
    main["volumeMounts"] = [
        *(m for m in main.get("volumeMounts") or []
          if m.get("name") != VOLUME and m.get("mountPath") != MOUNT_PATH), mount]
    extra.main_container = main
    return pod.replace(extra_pod_spec=extra)


def _domains(graph: HubGraph, policy: KvTransferPolicy, *, grove: bool, grove_enabled: bool,
             topologies: Mapping[str, Sequence[str]]) -> Sequence[str]:
    """The levels projected for a ClusterTopology source (none for a label key)."""
    name = policy.cluster_topology_name
    if not name:
        return ()
    if not grove:
        annotations = graph.model.metadata.get("annotations") or {}
        why = ("Grove is disabled in the operator configuration" if not grove_enabled else
               f'remove or unset the "{constants.ANNOTATION_ENABLE_GROVE}" annotation '
               f'(currently "{annotations.get(constants.ANNOTATION_ENABLE_GROVE, "")}")')
        raise GenerationError(f"{FIELD}.clusterTopologyName requires the Grove pathway: {why}")
    domains = topologies.get(name)
    if domains is None:
        raise GenerationError(f'{FIELD}.clusterTopologyName "{name}": no ClusterTopology of '
                              "that name exists")
    if policy.domain not in domains:
        raise GenerationError(f'{FIELD}.domain "{policy.domain}" is not a level of '
                              f'ClusterTopology "{name}" (its levels: {", ".join(domains)})')
    return domains


def _volume(policy: KvTransferPolicy, domains: Sequence[str]) -> Json:
    if policy.label_key:
        items = [_item(policy.domain, policy.label_key)]
    else:
        items = [_item(domain, topology_label(domain)) for domain in domains]
    return {"name": VOLUME, "downwardAPI": {"items": items}}


def _item(path: str, label: str) -> Json:
    return {"path": path, "fieldRef": {"fieldPath": f"metadata.labels['{label}']"}}


def _float32(value: float) -> str:
    """The shortest decimal that reads back as the same float32, without an exponent (the
    field is a float32 in the original's API, and printed so)."""
    single = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return format(Decimal(text), "f")
    return format(Decimal(repr(single)), "f")
