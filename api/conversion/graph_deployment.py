"""DynamoGraphDeployment: v1alpha1's `services` map <-> v1beta1's `components` list.

Components are matched by name: the map key is the component's `name`, and saved entries of
either payload carry it (`services.<name>` on the hub, `components[].name` on the spoke). The
hub's list order is kept: when it is not sorted by name, the spoke payload lists every
component in order; otherwise the hub list comes out sorted by name.

Spec: native envs <-> env, backendFramework, restart, annotations, labels; saved (v1alpha1
only) pvcs; restored (v1beta1 only) priorityClassName, topologyConstraint, providerOverride,
experimental. Status: services <-> components entry by entry; checkpoints and placement are
v1beta1 only.
"""

from __future__ import annotations

from typing import Any

from api.conversion.component import REPLICA_STATUS_RULES, SHARED_SPEC_RULES
from api.conversion.errors import ConversionFailure
from api.conversion.objects import KindConversion
from api.conversion.rules import Rule, convert_fields, keyed_map, rename, same
from api.kube import Json

__all__ = ["GRAPH_DEPLOYMENT"]


def _services_to_components(src: Json, restored: Json) -> tuple[Json, Json]:
    if "services" not in src:
        return {}, {}
    services = src["services"]
    if not isinstance(services, dict):
        return {"components": services}, {}
    entries = {
        e["name"]: e
        for e in _list(restored.get("components"))
        if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    components: list[Json] = []
    saves: Json = {}
    for name in _hub_order(list(services), list(entries)):
        service = services[name]
        if not isinstance(service, dict):
            raise ConversionFailure(f"spec.services.{name}: expected an object")
        entry = {k: v for k, v in entries.get(name, {}).items() if k != "name"}
        component, save = convert_fields(service, SHARED_SPEC_RULES, to_hub=True, restored=entry)
        components.append({"name": name, **component})
        if save:
            saves[name] = save
    return {"components": components}, ({"services": saves} if saves else {})


def _hub_order(names: list[str], saved_order: list[str]) -> list[str]:
    """Sorted by name, unless the payload recorded another order (then its names first)."""
    if saved_order == sorted(saved_order):
        return sorted(names)
    live = set(names)
    first = [n for n in saved_order if n in live]
    return first + sorted(live - set(first))


def _components_to_services(src: Json, restored: Json) -> tuple[Json, Json]:
    if "components" not in src:
        return {}, {}
    components = src["components"]
    if not isinstance(components, list):
        return {"services": components}, {}
    saved = restored.get("services")
    saved = saved if isinstance(saved, dict) else {}
    services: Json = {}
    saves: dict[str, Json] = {}
    for index, component in enumerate(components):
        name = component.get("name") if isinstance(component, dict) else None
        if not isinstance(name, str):
            raise ConversionFailure(f"spec.components[{index}].name: required value")
        if name in services:
            raise ConversionFailure(f"spec.components[{index}].name: duplicate name {name!r}")
        body = {k: v for k, v in component.items() if k != "name"}
        entry = saved.get(name)
        services[name], save = convert_fields(
            body,
            SHARED_SPEC_RULES,
            to_hub=False,
            restored=entry if isinstance(entry, dict) else None,
        )
        if save:
            saves[name] = save
    names = list(services)
    if names != sorted(names):  # keep the order: an entry for every component
        listed = [{"name": n, **saves.get(n, {})} for n in names]
    else:
        listed = [{"name": n, **save} for n, save in saves.items()]
    return {"services": services}, ({"components": listed} if listed else {})


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


SPEC_RULES: list[Rule] = [
    *same("backendFramework", "restart", "annotations", "labels"),
    rename("envs", "env"),
    Rule(("services",), ("components",), _services_to_components, _components_to_services),
]

STATUS_RULES: list[Rule] = [
    *same("observedGeneration", "state", "conditions", "restart", "rollingUpdate", "gpus"),
    keyed_map("services", "components", REPLICA_STATUS_RULES),
]

GRAPH_DEPLOYMENT = KindConversion(
    kind="DynamoGraphDeployment",
    spec_annotation="nvidia.com/dgd-spec",
    status_annotation="nvidia.com/dgd-status",
    spec_rules=SPEC_RULES,
    status_rules=STATUS_RULES,
)
