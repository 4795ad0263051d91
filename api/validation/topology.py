"""The rules of a graph's topology fields, on the v1beta1 object as written (plain JSON):
`spec.topologyConstraint` with each component's `topologyConstraint`, and
`spec.experimental.kvTransferPolicy`. Both exist only in v1beta1's shape (a v1alpha1 graph
keeps them in its conversion payload), so `v1beta1_shape` calls these.

- **Topology constraints.** A pack domain is a topology level's name
  (`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`). Any constraint needs the graph's, which names the
  ClusterTopology; a graph constraint without a packDomain needs one on every component.
- **KV transfer policy.** Exactly one topology source (`labelKey`, a node label key, or
  `clusterTopologyName`, an object name); a `domain` named like a pack domain;
  `preferredWeight` (0 to 1) given with `enforcement: preferred` and only then.
- **On update** the graph's constraint, each existing component's constraint and the policy
  do not change: the placement and the workers' topology metadata are fixed at creation
  (delete and recreate the graph to change them). The policy is compared as it acts
  (`enforcement` left out is `required`).

The CRD states the same as the original's schema does (the domain pattern, the policy's
three CEL rules, labelKey's pattern, preferredWeight's bounds): these rules say it again, in
the webhook's words, for what reaches admission without CEL and for `render`.

Whether the named ClusterTopology exists and holds the levels is the cluster's to say:
admission reads it when the graph is created (`api.validation.topology_levels`, the rules of
what it read), and the graph controller reads it for the render (`reconcilers.graph`).
"""

from __future__ import annotations

import re
from typing import Any

from api import names
from api.errors import FieldError
from api.kube import Json
from api.validation.kube_values import qualified_name

__all__ = ["constraint_errors", "topology_errors", "topology_update_errors"]

#: A topology level's name, as Dynamo's API states it.
DOMAIN = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")
DOMAIN_FMT = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
REQUIRED, PREFERRED = "required", "preferred"
POLICY = "spec.experimental.kvTransferPolicy"


def topology_errors(spec: Json) -> list[FieldError]:
    """The errors of a graph's topology constraints and KV transfer policy."""
    return constraint_errors(spec) + _policy(spec)


def topology_update_errors(spec: Json, old_spec: Json) -> list[FieldError]:
    """What an update of the graph may not change: its constraint, an existing component's
    constraint, its KV transfer policy."""
    errors = []
    if spec.get("topologyConstraint") != old_spec.get("topologyConstraint"):
        errors.append(FieldError("spec.topologyConstraint", _fixed("topology constraints")))
    old_components = {c.get("name"): c for c in _dicts(old_spec.get("components"))}
    for i, component in enumerate(_dicts(spec.get("components"))):
        old = old_components.get(component.get("name"))
        if old is not None and old.get("topologyConstraint") != component.get(
                "topologyConstraint"):
            errors.append(FieldError(f"spec.components[{i}].topologyConstraint",
                                     _fixed("topology constraints")))
    if effective_policy(spec) != effective_policy(old_spec):
        errors.append(FieldError(POLICY, _fixed("the KV transfer policy")))
    return errors


def effective_policy(spec: Json) -> Json | None:
    """The graph's KV transfer policy as it acts: `enforcement` defaults to required."""
    policy = _dict(spec.get("experimental")).get("kvTransferPolicy")
    if not isinstance(policy, dict):
        return None
    return {**policy, "enforcement": policy.get("enforcement") or REQUIRED}


def _fixed(what: str) -> str:
    return (f"Forbidden: is immutable and cannot be added, removed, or changed after creation; "
            f"delete and recreate the DynamoGraphDeployment to change {what}")


def constraint_errors(spec: Json) -> list[FieldError]:
    """The errors of the graph's and its components' topology constraints."""
    graph = spec.get("topologyConstraint")
    errors = []
    if isinstance(graph, dict) and graph.get("packDomain") is not None:
        errors += _domain("spec.topologyConstraint.packDomain", graph.get("packDomain"))
    constrained = []
    for i, component in enumerate(_dicts(spec.get("components"))):
        constraint = component.get("topologyConstraint")
        if not isinstance(constraint, dict):
            continue
        constrained.append(i)
        errors += _domain(f"spec.components[{i}].topologyConstraint.packDomain",
                          constraint.get("packDomain"), required=True)
    if constrained and not isinstance(graph, dict):
        errors.append(FieldError("spec.topologyConstraint", "Required value: a graph whose "
                                 "components set a topologyConstraint names its "
                                 "ClusterTopology here (clusterTopologyName)"))
    if isinstance(graph, dict) and not graph.get("packDomain"):
        for i, component in enumerate(_dicts(spec.get("components"))):
            if not isinstance(component.get("topologyConstraint"), dict):
                errors.append(FieldError(
                    f"spec.components[{i}].topologyConstraint",
                    "Required value: spec.topologyConstraint has no packDomain for the "
                    "components to inherit: set one there or give every component its own"))
    return errors


def _policy(spec: Json) -> list[FieldError]:
    policy = _dict(spec.get("experimental")).get("kvTransferPolicy")
    if not isinstance(policy, dict):
        return []
    label_key, topology = policy.get("labelKey"), policy.get("clusterTopologyName")
    errors = []
    if bool(label_key) == bool(topology):
        errors.append(FieldError(POLICY, "Invalid value: exactly one of labelKey or "
                                         "clusterTopologyName is required"))
    if label_key:
        errors += qualified_name(f"{POLICY}.labelKey", label_key)
    if isinstance(topology, str) and topology:
        errors += [FieldError(f"{POLICY}.clusterTopologyName", f'Invalid value: "{topology}": '
                              f"{problem}") for problem in names.is_dns1123_subdomain(topology)]
    errors += _domain(f"{POLICY}.domain", policy.get("domain"), required=True)
    enforcement = policy.get("enforcement") or REQUIRED
    weight = policy.get("preferredWeight")
    if enforcement == PREFERRED and weight is None:
        errors.append(FieldError(f"{POLICY}.preferredWeight", "Required value: is required "
                                                               "when enforcement is preferred"))
    if weight is not None and enforcement != PREFERRED:
        errors.append(FieldError(f"{POLICY}.preferredWeight", "Forbidden: may only be set "
                                                               "when enforcement is preferred"))
    if isinstance(weight, int | float) and not 0 <= weight <= 1:
        errors.append(FieldError(f"{POLICY}.preferredWeight",
                                 f"Invalid value: {weight}: must be between 0 and 1"))
    return errors


def _domain(path: str, value: Any, *, required: bool = False) -> list[FieldError]:
    if value is None or value == "":
        return [FieldError(path, "Required value")] if required else []
    if not isinstance(value, str) or not DOMAIN.fullmatch(value):
        return [FieldError(path, f'Invalid value: "{value}": a topology domain must consist '
                                 "of lower case alphanumeric characters or '-', and must "
                                 "start and end with an alphanumeric character (regex used "
                                 f"for validation is '{DOMAIN_FMT}')")]
    return []


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _dicts(value: Any) -> list[Json]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
