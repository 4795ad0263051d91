"""What a graph or DCD held as the hub (`v1beta1`) says to the builders that `v1beta1` cannot.

The builders take the `v1beta1` models. A deployment written in `v1alpha1` may hold fields that
`v1beta1` cannot represent and that still decide its children: the graph's `pvcs`, each
component's `ingress`, `dynamoNamespace`, `autoscaling` and a graph service's `serviceName`,
and groups that `v1beta1` folds into one field, where the `v1alpha1` form is not the one the
`v1beta1` field gives back: the component's own `labels` and `annotations` (which `v1alpha1`
puts on the Deployment and Service, and `v1beta1` merges into `podTemplate.metadata`), its
`componentType`/`subComponentType` pair, and its `sharedMemory`. Conversion keeps them in the
object's spec payload annotation; only this package reads it, so the builders get them here.

The pod group is one of those: `v1beta1` composes v1alpha1's resources, envs, envFromSecret,
probes, volumeMounts, extraPodMetadata, extraPodSpec (and its mainContainer) and
frontendSidecar into one `podTemplate`, and the composition loses what renders differently
(`envs` are merged after the generated env and `mainContainer.env` before it; a `gpu` under
`requests` becomes a limit, a `mainContainer` resource does not; a volume mount without a
mountPoint takes the backend's cache path; the user's mounts are merged with the generated
ones by name and path, the PVC mounts appended). `PodInputs` is that group as `v1alpha1`
states it, by the projection's own rule (`api.conversion.rules.projection`).

The values are exactly those of the object's `v1alpha1` view (`convert(obj, "v1alpha1")`),
taken from the payload under the same rule as conversion: a saved field that `v1beta1` has
no place for is always given back; a saved group only while it still converts to the live
`v1beta1` fields (else the live fields win, and the value is what they give). An object
written in `v1beta1` has no payload, and its inputs follow from its fields alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from api.conversion.component import SHARED_SPEC_RULES
from api.conversion.component_deployment import COMPONENT_DEPLOYMENT
from api.conversion.graph_deployment import GRAPH_DEPLOYMENT
from api.conversion.objects import HUB, NAME_FROM_METADATA, read_payload
from api.conversion.pod_template import (
    HUB_KEYS,
    SPOKE_KEYS,
    pod_to_hub,
    pod_to_spoke,
    spoke_stands_for,
)
from api.conversion.rules import Rule, convert_fields, present
from api.convert import load
from api.kube import Json, Probe
from api.v1alpha1 import (
    PVC,
    DynamoComponentDeploymentSharedSpec,
    ExtraPodMetadata,
    ExtraPodSpec,
    FrontendSidecarSpec,
    IngressSpec,
    Resources,
    ScalingAdapter,
    SharedMemorySpec,
    VolumeMount,
)

__all__ = ["ComponentInputs", "PodInputs", "RenderInputs", "render_inputs", "template_pod_inputs"]

_METADATA_KEYS = ("labels", "annotations")


def _rule(hub_keys: tuple[str, ...]) -> list[Rule]:
    """The component rule of these hub fields, alone in a list (compiled once)."""
    return [next(r for r in SHARED_SPEC_RULES if r.hub == hub_keys)]


_TYPE = _rule(("type",))
_SHARED_MEMORY = _rule(("sharedMemorySize",))
_SCALING_ADAPTER = _rule(("scalingAdapter",))


@attrs.frozen
class PodInputs:
    """A component's pod group as `v1alpha1` states it (the fields of its shared spec)."""

    resources: Resources | None = None
    envs: list[Json] | None = None
    env_from_secret: str | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    volume_mounts: list[VolumeMount] | None = None
    extra_pod_metadata: ExtraPodMetadata | None = None
    extra_pod_spec: ExtraPodSpec | None = None
    frontend_sidecar: FrontendSidecarSpec | None = None

    def replace(self, **changes: Any) -> PodInputs:
        """A copy with `changes` (field name -> value); the fields not named are shared."""
        return attrs.evolve(self, **changes)


_POD_FIELDS = tuple(f.name for f in attrs.fields(PodInputs))


@attrs.frozen
class ComponentInputs:
    """The `v1alpha1` inputs of one component (a graph's service, or a DCD's spec)."""

    #: `componentType` and `subComponentType` as `v1alpha1` reads them.
    component_type: str | None = None
    sub_component_type: str | None = None
    #: The component's own labels and annotations, which `v1alpha1` places on the workload
    #: and its Service (and the pod), `v1beta1` on the pod template only.
    labels: Mapping[str, str] | None = None
    annotations: Mapping[str, str] | None = None
    ingress: IngressSpec | None = None
    dynamo_namespace: str | None = None
    autoscaling: Json | None = None
    #: `serviceName`: a graph service's (saved), or a DCD's as given (`v1beta1`'s `name`,
    #: unless the hub took that from metadata.name for a DCD that gave none).
    service_name: str | None = None
    shared_memory: SharedMemorySpec | None = None
    #: `scalingAdapter.enabled` as `v1alpha1` reads it, and the whole group (`{}` is not
    #: absent in `v1alpha1`).
    scaling_adapter_enabled: bool | None = None
    scaling_adapter: ScalingAdapter | None = None
    #: The pod group (resources, envs, probes, volumeMounts, extraPodSpec...).
    pod: PodInputs = attrs.field(factory=PodInputs)

    def replace(self, **changes: Any) -> ComponentInputs:
        """A copy with `changes` (field name -> value); the fields not named are shared."""
        return attrs.evolve(self, **changes)


@attrs.frozen
class RenderInputs:
    """The `v1alpha1` inputs of a graph (`pvcs`, and each component's by name) or of a DCD
    (its one component, under its `name`)."""

    pvcs: tuple[PVC, ...] = ()
    components: Mapping[str, ComponentInputs] = attrs.field(factory=dict)

    def component(self, name: str) -> ComponentInputs:
        """The inputs of component `name` (all unset when it has none)."""
        return self.components.get(name) or _NONE


_NONE = ComponentInputs()


def render_inputs(obj: Json, *, sidecar_remainder: bool = True) -> RenderInputs:
    """The `v1alpha1` inputs of a graph or DCD held as the hub. Only reads `obj`.
    `sidecar_remainder=False` reads the saved pod group by the rule before a frontend
    sidecar's remainder was `v1beta1`'s (`api.conversion.pod_template.spoke_stands_for`): only
    while it composes to the live pod fields exactly, for the builders of a graph made before
    (`backends.origin_gates.FRONTEND_SIDECAR_LOSSLESS`), whose inputs must not move.
    ValueError for another kind or version; `api.errors.ConversionError` (a ValueError) for a
    saved pvc, ingress or sharedMemory that does not fit its model (the object's view then
    fails validation as well)."""
    kind = obj.get("kind")
    if obj.get("apiVersion") != HUB or kind not in (GRAPH_DEPLOYMENT.kind,
                                                   COMPONENT_DEPLOYMENT.kind):
        raise ValueError(f"render inputs are read from a graph or DCD in {HUB}, not "
                         f"{obj.get('apiVersion')} {kind}")
    spec = _read(obj.get("spec"))
    meta = _read(obj.get("metadata"))
    annotations = _read(meta.get("annotations"))
    if kind == COMPONENT_DEPLOYMENT.kind:
        saved = read_payload(annotations.get(COMPONENT_DEPLOYMENT.spec_annotation)) or {}
        name = spec.get("name", meta.get("name"))
        own = _component(spec, saved, sidecar_remainder)
        given = _text(spec.get("name"))
        if saved.get(NAME_FROM_METADATA) and given == meta.get("name"):
            given = None  # the rule of `api.conversion.objects._defaulted_name`
        return RenderInputs(components={str(name): attrs.evolve(own, service_name=given)})
    saved = read_payload(annotations.get(GRAPH_DEPLOYMENT.spec_annotation)) or {}
    services = _read(saved.get("services"))
    components = {}
    for entry in spec.get("components") or []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            components[entry["name"]] = _component(entry, _read(services.get(entry["name"])),
                                                    sidecar_remainder)
    pvcs = tuple(load(PVC, p) for p in saved.get("pvcs") or [] if isinstance(p, dict))
    return RenderInputs(pvcs=pvcs, components=components)


def _component(hub: Json, saved: Json, sidecar_remainder: bool) -> ComponentInputs:
    kinds = _group(hub, saved, _TYPE)
    pod = _pod_group(hub, saved, sidecar_remainder)
    shm = _group(hub, saved, _SHARED_MEMORY)
    adapter = _group(hub, saved, _SCALING_ADAPTER)
    metadata = {k: pod[k] for k in _METADATA_KEYS if isinstance(pod.get(k), dict)}
    ingress = saved.get("ingress")
    shared_memory = shm.get("sharedMemory")
    scaling = adapter.get("scalingAdapter")
    enabled = _read(scaling).get("enabled")
    return ComponentInputs(
        component_type=_text(kinds.get("componentType")),
        sub_component_type=_text(kinds.get("subComponentType")),
        labels=metadata.get("labels"),
        annotations=metadata.get("annotations"),
        ingress=load(IngressSpec, ingress) if isinstance(ingress, dict) else None,
        dynamo_namespace=_text(saved.get("dynamoNamespace")),
        autoscaling=saved.get("autoscaling") if isinstance(saved.get("autoscaling"),
                                                           dict) else None,
        service_name=_text(saved.get("serviceName")),
        shared_memory=(load(SharedMemorySpec, shared_memory)
                       if isinstance(shared_memory, dict) else None),
        scaling_adapter_enabled=enabled if isinstance(enabled, bool) else None,
        scaling_adapter=load(ScalingAdapter, scaling) if isinstance(scaling, dict) else None,
        pod=_pod_inputs(pod),
    )


def template_pod_inputs(template: Json) -> PodInputs:
    """The pod group a `podTemplate` of its own states (a multinode role's), as the live
    fields of a component's template give it (`v1beta1` only: nothing is saved for it).
    ConversionError when its fields do not fit the `v1alpha1` models."""
    return _pod_inputs(pod_to_spoke({"podTemplate": template}))


def _group(hub: Json, saved: Json, rules: list[Rule]) -> Json:
    """The `v1alpha1` fields of one projected group, by conversion's own rule: the saved ones
    while they convert to the live fields, else those the live fields give."""
    rule = rules[0]
    live = {k: hub[k] for k in rule.hub if k in hub}
    restored = {k: saved[k] for k in rule.spoke if k in saved}
    return convert_fields(live, rules, to_hub=False, restored=restored)[0]


def _pod_group(hub: Json, saved: Json, sidecar_remainder: bool) -> Json:
    """The component's pod group in `v1alpha1` fields, by the rule
    `api.conversion.rules.projection` converts it by: the saved group while it still stands
    for the live pod fields (`api.conversion.pod_template.spoke_stands_for`; without
    `sidecar_remainder`, while it composes to them), else what the live fields give (which
    never holds the component's own labels and annotations: the projection puts the
    template's metadata into extraPodMetadata)."""
    group = {k: saved[k] for k in SPOKE_KEYS if k in saved}
    live = {k: hub[k] for k in HUB_KEYS if k in hub}
    if group:
        candidate = present(group)
        if (spoke_stands_for(candidate, live) if sidecar_remainder
                else pod_to_hub(candidate) == live):
            return candidate
    return pod_to_spoke(live) if live else {}


def _pod_inputs(group: Json) -> PodInputs:
    """The group's fields as the `v1alpha1` models hold them (ConversionError when they do
    not fit, as the view's validation would fail)."""
    fields = {k: v for k, v in group.items() if k not in _METADATA_KEYS}
    if not fields:
        return _NO_POD
    spec = load(DynamoComponentDeploymentSharedSpec, fields)
    return PodInputs(**{name: getattr(spec, name) for name in _POD_FIELDS})


_NO_POD = PodInputs()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _read(value: Any) -> Json:
    return value if isinstance(value, dict) else {}
