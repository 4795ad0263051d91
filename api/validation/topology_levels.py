"""A graph's topology fields against the Grove ClusterTopology they name, at admission.

The cluster's half of the topology rules (`api.validation.topology` has the half that needs
nothing but the object). Admission reads the ClusterTopologies `topologies_to_read` names
(the one I/O, in `reconcilers.operator`) and `topology_level_errors` judges the graph by what
it read, as the original's validating webhook does:

- Only a graph Grove runs (Grove enabled in the operator, the graph not opting out with
  `nvidia.com/enable-grove: "false"`) and only at `metadata.generation` 1 or before (its
  creation; the fields are immutable afterwards, and a level removed later is the graph's
  `TopologyLevelsAvailable` condition to tell).
- `spec.topologyConstraint.clusterTopologyName` must name an existing ClusterTopology (read
  only when the constraints break no rule of their own); the graph's `packDomain` and each
  component's must be levels of it, and a component's no broader than the graph's (levels
  run broadest first).
- `spec.experimental.kvTransferPolicy.clusterTopologyName` needs the Grove pathway; it must
  name an existing ClusterTopology, and the policy's `domain` must be one of its levels.

Errors are worded as the original words them (`does not exist in ClusterTopology "t";
available domains: [block host rack]`, the domains sorted).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from api.errors import FieldError
from api.kube import Json
from api.validation.topology import POLICY, constraint_errors

__all__ = ["ENABLE_GROVE", "ClusterTopologyRead", "grove_pathway_refusal",
           "topologies_to_read", "topology_level_errors"]

#: A graph's annotation opting out of Grove ("false").
ENABLE_GROVE = "nvidia.com/enable-grove"
CONSTRAINT = "spec.topologyConstraint"


@attrs.frozen
class ClusterTopologyRead:
    """What admission read of one ClusterTopology: its levels' domains, broadest first; None
    when it does not exist; or why it could not be read (`failure`)."""

    domains: tuple[str, ...] | None
    failure: str | None = None


def grove_pathway_refusal(obj: Json, *, grove_enabled: bool) -> str | None:
    """None when Grove runs the graph; otherwise why it does not, as the original says."""
    if not grove_enabled:
        return "requires the Grove pathway, but Grove is disabled in the operator configuration"
    value = _dict(_dict(obj.get("metadata")).get("annotations")).get(ENABLE_GROVE)
    if isinstance(value, str) and value.lower() == "false":
        return (f"requires the Grove pathway; remove or unset annotation {_q(ENABLE_GROVE)} "
                f"(currently {_q(value)})")
    return None


def topologies_to_read(obj: Json, *, grove_enabled: bool) -> tuple[str, ...]:
    """The ClusterTopologies admission reads to judge the graph (none for most graphs)."""
    if not _judged(obj, grove_enabled=grove_enabled):
        return ()
    spec = _dict(obj.get("spec"))
    names = []
    constraint = spec.get("topologyConstraint")
    if isinstance(constraint, dict) and not constraint_errors(spec):
        names.append(constraint.get("clusterTopologyName"))
    names.append(_policy(spec).get("clusterTopologyName"))
    return tuple(dict.fromkeys(n for n in names if isinstance(n, str) and n))


def topology_level_errors(obj: Json, read: Mapping[str, ClusterTopologyRead], *,
                          grove_enabled: bool) -> list[FieldError]:
    """The errors of the graph's topology fields against the ClusterTopologies in `read`
    (one not in it was not read: nothing is said of it), and a policy's
    `clusterTopologyName` off the Grove pathway."""
    spec = _dict(obj.get("spec"))
    errors = []
    constraint = spec.get("topologyConstraint")
    if isinstance(constraint, dict):
        errors += _constraint_levels(spec, constraint, read)
    policy = _policy(spec)
    name = policy.get("clusterTopologyName")
    if isinstance(name, str) and name:
        refusal = grove_pathway_refusal(obj, grove_enabled=grove_enabled)
        if refusal is not None:
            errors.append(FieldError(f"{POLICY}.clusterTopologyName", f"Forbidden: {refusal}"))
        elif name in read:
            errors += _policy_levels(policy, name, read[name])
    return errors


def _judged(obj: Json, *, grove_enabled: bool) -> bool:
    generation = _dict(obj.get("metadata")).get("generation")
    created = not isinstance(generation, int) or generation <= 1
    return created and grove_pathway_refusal(obj, grove_enabled=grove_enabled) is None


def _constraint_levels(spec: Json, constraint: Json, read: Mapping[str, ClusterTopologyRead]
                       ) -> list[FieldError]:
    name = constraint.get("clusterTopologyName")
    if not isinstance(name, str) or name not in read:
        return []
    topology = read[name]
    unread = _unread(f"{CONSTRAINT}.clusterTopologyName", name, topology)
    if unread is not None or topology.domains is None:
        return [unread] if unread is not None else []
    levels = {domain: i for i, domain in enumerate(topology.domains)}
    errors = []
    graph_domain = constraint.get("packDomain")
    if graph_domain and graph_domain not in levels:
        errors.append(_missing(f"{CONSTRAINT}.packDomain", graph_domain, name, topology))
    for i, component in enumerate(_dicts(spec.get("components"))):
        own = component.get("topologyConstraint")
        if not isinstance(own, dict):
            continue
        path = f"spec.components[{i}].topologyConstraint.packDomain"
        domain = own.get("packDomain")
        if domain not in levels:
            errors.append(_missing(path, domain, name, topology))
        elif graph_domain in levels and levels[domain] < levels[graph_domain]:
            errors.append(FieldError(path, f"Invalid value: {_q(domain)}: must be equal to or "
                                           "narrower than the deployment-level domain "
                                           f"{_q(graph_domain)}"))
    return errors


def _policy_levels(policy: Json, name: str, topology: ClusterTopologyRead) -> list[FieldError]:
    unread = _unread(f"{POLICY}.clusterTopologyName", name, topology)
    if unread is not None:
        return [unread]
    domain = policy.get("domain")
    if topology.domains is not None and domain not in topology.domains:
        return [_missing(f"{POLICY}.domain", domain, name, topology)]
    return []


def _unread(path: str, name: str, topology: ClusterTopologyRead) -> FieldError | None:
    if topology.failure is not None:
        return FieldError(path, f"Invalid value: {_q(name)}: failed to read ClusterTopology: "
                                f"{topology.failure}")
    if topology.domains is None:
        return FieldError(path, f"Invalid value: {_q(name)}: references a ClusterTopology "
                                "resource that was not found")
    return None


def _missing(path: str, domain: Any, name: str, topology: ClusterTopologyRead) -> FieldError:
    available = " ".join(sorted(topology.domains or ()))
    return FieldError(path, f"Invalid value: {_q(domain)}: does not exist in ClusterTopology "
                            f"{_q(name)}; available domains: [{available}]")


def _q(value: Any) -> str:
    return json.dumps(value)


def _policy(spec: Json) -> Json:
    return _dict(_dict(spec.get("experimental")).get("kvTransferPolicy"))


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _dicts(value: Any) -> list[Json]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
