"""The rules of the v1beta1 shape itself, which conversion to v1alpha1 would hide.

The business rules are written once, against v1alpha1 (the other modules of this package);
a v1beta1 object is checked by them through its v1alpha1 view. What only exists in the
v1beta1 shape is checked here, on the object as the user wrote it (plain JSON; the schema
has already checked the types):

- a graph's `spec.components`: names unique case-insensitively (they name the same child
  objects), at most 25, at most one of type epp; `spec.restart` unset on create;
- every component (a graph's entries, a DCD's spec): a `podTemplate` has a container `main`
  (the one the operator configures), every other container names its image (sidecars get
  no defaults), `frontendSidecar` names a container of the template and `dynamoSidecar` a
  restartable init container (only on a single-node worker, prefill or decode without
  checkpoint, GMS or failover); `minAvailable` at most `replicas` unless that is 0; `roles`
  only on a multinode component, exactly one leader and one worker, of 1 and
  `multinode.nodeCount - 1` pods when given; role podTemplates on both roles or none, each
  with a `main`, not beside a graph component's own template, and not with GMS or failover;
- on update: a component's `type`, once set, and its `minAvailable` do not change (a graph's
  components are matched by name);
- a graph's topology constraints and KV transfer policy (`api.validation.topology`), which
  also do not change on update.

Errors are worded as kube-apiserver words field errors (`Duplicate value: "Worker"`).
"""

from __future__ import annotations

from typing import Any

from api.errors import FieldError
from api.kube import Json
from api.v1beta1 import MAIN_CONTAINER, MAX_COMPONENTS
from api.validation.topology import topology_errors, topology_update_errors

__all__ = ["component_deployment_shape", "graph_deployment_shape", "v1beta1_shape"]

EPP = "epp"
#: The component types that may run the Dynamo runtime in a dynamoSidecar.
RUNTIME_TYPES = ("worker", "prefill", "decode")
#: The roles of a multinode component, and the pods each has in one instance.
ROLE_PODS = {"leader": "the leader role has 1 pod",
             "worker": "the worker role has multinode.nodeCount - 1 pods"}


def v1beta1_shape(obj: Json, old: Json | None) -> list[FieldError]:
    """The v1beta1 shape errors of a create (`old` None) or an update of any of our kinds;
    kinds without rules of their own have none."""
    kind = obj.get("kind")
    if kind == "DynamoGraphDeployment":
        return graph_deployment_shape(obj, old)
    if kind == "DynamoComponentDeployment":
        return component_deployment_shape(obj, old)
    return []


def graph_deployment_shape(obj: Json, old: Json | None) -> list[FieldError]:
    """A graph's components as a list, restart on create, and each component."""
    spec = _dict(obj.get("spec"))
    errors: list[FieldError] = []
    if old is None and spec.get("restart") is not None:
        errors.append(FieldError("spec.restart", "Forbidden: must be unset on create; set it "
                                                 "on an existing graph to restart its pods"))
    components = _list(spec.get("components"))
    if len(components) > MAX_COMPONENTS:
        errors.append(FieldError("spec.components", f"Too many: {len(components)}: must have "
                                                    f"at most {MAX_COMPONENTS} items"))
    old_components = {c.get("name"): c for c in _dicts(
        _dict((old or {}).get("spec")).get("components"))}
    seen: dict[str, int] = {}
    epp: int | None = None
    for i, component in enumerate(components):
        path = f"spec.components[{i}]"
        if not isinstance(component, dict):
            continue
        name = component.get("name")
        if isinstance(name, str):
            first = seen.setdefault(name.lower(), i)
            if first != i:
                errors.append(FieldError(f"{path}.name", f"Duplicate value: {_quoted(name)}"))
        if component.get("type") == EPP:
            if epp is None:
                epp = i
            else:
                errors.append(FieldError(
                    f"{path}.type", f"Forbidden: at most one component may have type epp "
                                    f"(spec.components[{epp}] has it)"))
        previous = old_components.get(name) if old is not None else None
        errors += component_shape(path, component, previous, in_graph=True)
    errors += topology_errors(spec)
    if old is not None:
        errors += topology_update_errors(spec, _dict(old.get("spec")))
    return errors


def component_deployment_shape(obj: Json, old: Json | None) -> list[FieldError]:
    """A DCD's spec, which is one component."""
    previous = _dict(old.get("spec")) if old is not None else None
    return component_shape("spec", _dict(obj.get("spec")), previous)


def component_shape(path: str, component: Json, old: Json | None, *,
                    in_graph: bool = False) -> list[FieldError]:
    """One component's pod template and sidecar references; with `old`, what may not
    change. `in_graph`: a graph's entry (a DCD's own podTemplate may sit beside role
    templates: a graph's child DCD carries there what the graph decides, its identity labels
    and the graph's env, which the role templates are merged over)."""
    errors = _pod_template(path, component)
    errors += _roles(path, component, in_graph)
    replicas, least = component.get("replicas"), component.get("minAvailable")
    if isinstance(least, int) and isinstance(replicas, int) and 0 < replicas < least:
        errors.append(FieldError(
            f"{path}.minAvailable",
            f"Invalid value: {least}: must be less than or equal to replicas ({replicas}) "
            "unless replicas is 0"))
    if old is None:
        return errors
    if "type" in old and component.get("type") != old["type"]:
        shown = _quoted(component["type"]) if "type" in component else "null"
        errors.append(FieldError(f"{path}.type", f"Invalid value: {shown}: field is immutable "
                                                 f"once set (was {_quoted(old['type'])})"))
    if "minAvailable" in old and component.get("minAvailable") != old["minAvailable"]:
        errors.append(FieldError(f"{path}.minAvailable",
                                 "Invalid value: field is immutable after creation"))
    return errors


def _pod_template(path: str, component: Json) -> list[FieldError]:
    template = component.get("podTemplate")
    containers = _dicts(_dict(_dict(template).get("spec")).get("containers"))
    names = [c.get("name") for c in containers]
    errors: list[FieldError] = []
    where = f"{path}.podTemplate.spec.containers"
    if isinstance(template, dict) and MAIN_CONTAINER not in names:
        errors.append(FieldError(where, f'Required value: a container named "{MAIN_CONTAINER}" '
                                        "is required: it runs the component and gets the "
                                        "operator's defaults"))
    for i, container in enumerate(containers):
        if container.get("name") != MAIN_CONTAINER and not container.get("image"):
            errors.append(FieldError(
                f"{where}[{i}].image", "Required value: a sidecar container gets no defaults "
                                       "and must name its image"))
    sidecar = component.get("frontendSidecar")
    if sidecar is not None and sidecar not in names:
        errors.append(FieldError(f"{path}.frontendSidecar",
                                 f"Invalid value: {_quoted(sidecar)}: must name a container "
                                 "of podTemplate.spec.containers"))
    runtime = component.get("dynamoSidecar")
    if runtime is not None:
        inits = _dicts(_dict(_dict(template).get("spec")).get("initContainers"))
        if not any(c.get("name") == runtime and c.get("restartPolicy") == "Always"
                   for c in inits):
            errors.append(FieldError(
                f"{path}.dynamoSidecar",
                f"Invalid value: {_quoted(runtime)}: must name an init container of "
                "podTemplate.spec.initContainers with restartPolicy Always"))
        errors += _runtime_mode(path, component)
    return errors


def _runtime_mode(path: str, component: Json) -> list[FieldError]:
    """What a component with a dynamoSidecar may not be (the runtime runs beside the engine
    only for a single-node worker, prefill or decode, without checkpoint, GMS or failover)."""
    if component.get("type") not in RUNTIME_TYPES:
        return [FieldError(f"{path}.dynamoSidecar", "Forbidden: is supported only for "
                                                    "worker, prefill and decode components")]
    errors = []
    if component.get("multinode") is not None:
        errors.append(FieldError(f"{path}.multinode", "Forbidden: is not supported with a "
                                                      "dynamoSidecar"))
    experimental = _dict(component.get("experimental"))
    if _dict(experimental.get("checkpoint")).get("enabled") is True:
        errors.append(FieldError(f"{path}.experimental.checkpoint",
                                 "Forbidden: is not supported with a dynamoSidecar"))
    for key in ("gpuMemoryService", "failover"):
        if experimental.get(key) is not None:
            errors.append(FieldError(f"{path}.experimental.{key}",
                                     "Forbidden: is not supported with a dynamoSidecar"))
    return errors


def _roles(path: str, component: Json, in_graph: bool) -> list[FieldError]:
    roles = component.get("roles")
    if roles is None:
        return []
    multinode = component.get("multinode")
    if not isinstance(multinode, dict):
        return [FieldError(f"{path}.roles", "Forbidden: only a multinode component has roles")]
    errors = []
    names = []
    for i, role in enumerate(_dicts(roles)):
        name = role.get("name")
        names.append(name)
        if name not in ROLE_PODS:
            supported = ", ".join(f'"{r}"' for r in ROLE_PODS)
            errors.append(FieldError(f"{path}.roles[{i}].name", f"Unsupported value: "
                                     f"{_quoted(name)}: supported values: {supported}"))
            continue
        count = role.get("replicas")
        nodes = multinode.get("nodeCount")
        expected = 1 if name == "leader" else nodes - 1 if isinstance(nodes, int) else None
        if isinstance(count, int) and expected is not None and count != expected:
            errors.append(FieldError(
                f"{path}.roles[{i}].replicas",
                f"Invalid value: {count}: {ROLE_PODS[name]} ({expected})"))
    if sorted(n for n in names if n in ROLE_PODS) != sorted(ROLE_PODS):
        errors.append(FieldError(f"{path}.roles", "Required value: exactly one leader and "
                                                  "one worker role"))
    return errors + _role_templates(path, component, in_graph)


def _role_templates(path: str, component: Json, in_graph: bool) -> list[FieldError]:
    """Role templates are complete: both roles have one (with a `main` container) and the
    component none; and they do not combine with GMS or failover."""
    roles = _dicts(component.get("roles"))
    given = [i for i, role in enumerate(roles) if role.get("podTemplate") is not None]
    if not given:
        return []
    errors = []
    if in_graph and "podTemplate" in component:
        errors.append(FieldError(f"{path}.podTemplate", "Forbidden: a component with role "
                                                        "podTemplates has none of its own"))
    for i, role in enumerate(roles):
        if i not in given:
            errors.append(FieldError(f"{path}.roles[{i}].podTemplate", "Required value: every "
                                     "role has a podTemplate when one role has"))
            continue
        spec = _dict(_dict(role.get("podTemplate")).get("spec"))
        names = [c.get("name") for c in _dicts(spec.get("containers"))]
        if MAIN_CONTAINER not in names:
            errors.append(FieldError(f"{path}.roles[{i}].podTemplate.spec.containers",
                                     f'Required value: a container named "{MAIN_CONTAINER}" '
                                     "is required"))
    experimental = _dict(component.get("experimental"))
    for key in ("gpuMemoryService", "failover"):
        if experimental.get(key) is not None:
            errors.append(FieldError(f"{path}.experimental.{key}", "Forbidden: is not "
                                     "supported with role podTemplates"))
    return errors


def _quoted(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[Json]:
    return [v for v in _list(value) if isinstance(v, dict)]
