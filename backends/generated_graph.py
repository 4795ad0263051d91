"""What a request's profiling output becomes: the DynamoGraphDeployment autoApply creates
and the extra ConfigMaps the profiler emitted, both marked with the request they came from.

Neither carries an owner reference: the graph outlives its request (deleting a request must
not take a running deployment down), and the ConfigMaps serve the graph.

`materialize` makes the graph of a v1beta1 request, as a v1beta1 object, the way the
original's override helper does: the generated graph (either version) is converted to the
version of `spec.overrides.dgd` and the override merged there (v1beta1: components,
containers and env by name, `$patch: {args: append}`, other lists replaced; v1alpha1:
services by name, the main container's args appended), then converted to v1beta1. An override
naming a component the graph lacks fails (`GenerationError`). Metadata: `metadata.name`
selects the graph's name (else the profiler's, else the request's), labels and annotations
merge, the namespace is the override's or the request's. Before the override,
`features.kvRouter` sets DYN_ROUTER_MODE=kv on the Frontend and `runtimeVersionOverride`
is given to components without their own; after it, `overrides.trustRemoteCode` adds
`--trust-remote-code` to every vLLM or SGLang worker.
"""

from __future__ import annotations

import copy
from typing import Any

from api.conversion import HUB, SPOKE, ConversionFailure, convert
from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest as HubRequest
from backends import constants
from backends.errors import GenerationError
from backends.named_merge import MergeError, merge_named
from backends.profiling_job import LABEL_DGDR_NAME, LABEL_DGDR_NAMESPACE

Json = dict[str, Any]

__all__ = ["additional_config_maps", "materialize", "target_namespace"]

_MAIN = "main"


def _origin(dgdr: HubRequest) -> dict[str, str]:
    return {LABEL_DGDR_NAME: str(dgdr.metadata["name"]),
            LABEL_DGDR_NAMESPACE: str(dgdr.metadata["namespace"]),
            constants.LABEL_MANAGED_BY: constants.MANAGED_BY}


def target_namespace(dgdr: HubRequest) -> str:
    """The override's namespace (`overrides.dgd.metadata.namespace`), else the request's."""
    namespace = _override_metadata(dgdr).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else str(
        dgdr.metadata["namespace"])


def _override(dgdr: HubRequest) -> Json:
    overrides = dgdr.spec.overrides
    return dict(overrides.dgd) if overrides is not None and overrides.dgd else {}


def _override_metadata(dgdr: HubRequest) -> Json:
    meta = _override(dgdr).get("metadata")
    return meta if isinstance(meta, dict) else {}


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def materialize(generated: Json, dgdr: HubRequest) -> Json:
    """The v1beta1 graph a request creates from the profiler's `generated` graph (see the
    module's docstring); GenerationError when the override cannot apply."""
    override = _override(dgdr)
    meta = generated.get("metadata") or {}
    body: Json = {"apiVersion": generated.get("apiVersion") or SPOKE,
                  "kind": "DynamoGraphDeployment",
                  "metadata": {"name": str(meta.get("name") or dgdr.metadata["name"]),
                               "namespace": str(dgdr.metadata["namespace"])},
                  "spec": copy.deepcopy(generated.get("spec") or {})}
    try:
        hub = _features(convert(body, HUB), dgdr)
        spec_override = override.get("spec")
        if isinstance(spec_override, dict) and spec_override:
            if override.get("apiVersion") == SPOKE:
                spoke = convert(hub, SPOKE)
                spoke["spec"] = _merge_spoke(spoke["spec"], spec_override)
                hub = convert(spoke, HUB)
            else:
                hub["spec"] = merge_named(hub["spec"], spec_override, atomic={("env",)},
                                          closed={("components",)})
    except (ConversionFailure, MergeError) as error:
        raise GenerationError(f"spec.overrides.dgd: {error}") from None
    _trust_remote_code(hub, dgdr)
    given = _override_metadata(dgdr)
    name = given.get("name") if isinstance(given.get("name"), str) else None
    labels = {**_strings(meta.get("labels")), **_origin(dgdr), **_strings(given.get("labels"))}
    annotations = {**_strings(meta.get("annotations")),
                   **_strings((hub.get("metadata") or {}).get("annotations")),
                   **_strings(given.get("annotations"))}
    out: Json = {"apiVersion": HUB, "kind": "DynamoGraphDeployment",
                 "metadata": {"name": name or hub["metadata"]["name"],
                              "namespace": target_namespace(dgdr), "labels": labels},
                 "spec": hub["spec"]}
    if annotations:
        out["metadata"]["annotations"] = annotations
    return out


def _features(hub: Json, dgdr: HubRequest) -> Json:
    """The request's features and runtime version on the generated graph (v1beta1)."""
    spec = dgdr.spec
    kv = spec.features is not None and spec.features.kv_router is not None and bool(
        spec.features.kv_router.enabled)
    for component in (hub.get("spec") or {}).get("components") or []:
        if spec.runtime_version_override and not component.get("runtimeVersionOverride"):
            component["runtimeVersionOverride"] = spec.runtime_version_override
        if kv and component.get("type") == constants.FRONTEND:
            _set_env(component, "DYN_ROUTER_MODE", "kv")
    return hub


#: Engines that take --trust-remote-code, and the component types that run them.
_TRUSTING_BACKENDS = ("vllm", "sglang")
_WORKER_TYPES = ("worker", "prefill", "decode")
TRUST_REMOTE_CODE = "--trust-remote-code"


def _trust_remote_code(hub: Json, dgdr: HubRequest) -> None:
    """overrides.trustRemoteCode: the flag on every vLLM or SGLang worker, once the
    topology (and the override) is known."""
    overrides = dgdr.spec.overrides
    if overrides is None or not overrides.trust_remote_code:
        return
    spec = hub.get("spec") or {}
    backend = spec.get("backendFramework") or dgdr.spec.backend
    if backend not in _TRUSTING_BACKENDS:
        return
    for component in spec.get("components") or []:
        if component.get("type") not in _WORKER_TYPES:
            continue
        main = _main(component)
        args = list(main.get("args") or [])
        if TRUST_REMOTE_CODE not in args:
            main["args"] = [*args, TRUST_REMOTE_CODE]


def _main(component: Json) -> Json:
    pod = component.setdefault("podTemplate", {}).setdefault("spec", {})
    containers = pod.setdefault("containers", [])
    main: Json | None = next((c for c in containers if c.get("name") == _MAIN), None)
    if main is None:
        main = {"name": _MAIN}
        containers.append(main)
    return main


def _set_env(component: Json, name: str, value: str) -> None:
    main = _main(component)
    env = [e for e in main.get("env") or [] if e.get("name") != name]
    main["env"] = [*env, {"name": name, "value": value}]


def _merge_spoke(spec: Json, override: Json) -> Json:
    """A v1alpha1 override: services by name (only those generated), the main container's
    args appended to the generated ones, everything else laid over."""
    services = spec.get("services") or {}
    result = merge_named({k: v for k, v in spec.items() if k != "services"},
                         {k: v for k, v in override.items() if k != "services"})
    merged: Json = copy.deepcopy(services)
    for name, given in (override.get("services") or {}).items():
        if name not in merged:
            known = ", ".join(sorted(merged)) or "none"
            raise MergeError(f"spec.services: no service named {name!r} in the generated "
                             f"graph (it has {known}); an override cannot add one")
        given = copy.deepcopy(given)
        args = (((given.get("extraPodSpec") or {}).get("mainContainer") or {}).pop("args", None))
        merged[name] = merge_named(merged[name], given)
        if args:
            main = merged[name].setdefault("extraPodSpec", {}).setdefault("mainContainer", {})
            main["args"] = [*(main.get("args") or []), *args]
    result["services"] = merged
    return result


def additional_config_maps(resources: list[Json], dgdr: HubRequest) -> list[Json]:
    """The ConfigMaps among the extra documents, in the target namespace, with the request's
    labels; other kinds are not created."""
    out = []
    for doc in resources:
        if doc.get("kind") != "ConfigMap" or not (doc.get("metadata") or {}).get("name"):
            continue
        cm = copy.deepcopy(doc)
        meta = cm["metadata"]
        meta["namespace"] = target_namespace(dgdr)
        meta["labels"] = {**(meta.get("labels") or {}), **_origin(dgdr)}
        for key in ("uid", "resourceVersion", "creationTimestamp", "ownerReferences"):
            meta.pop(key, None)
        cm.setdefault("apiVersion", "v1")
        out.append(cm)
    return out
