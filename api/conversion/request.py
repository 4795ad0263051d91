"""DynamoGraphDeploymentRequest: v1alpha1's profiling-config request <-> v1beta1's intent.

Spec decisions (v1alpha1 -> v1beta1):

- native: model; backend (v1beta1's `auto` has no v1alpha1 value and stays in the payload).
- derived: autoApply keeps its meaning, not its spelling: v1alpha1 defaults to false and
  v1beta1 to true, so an absent v1alpha1 autoApply is an explicit `false` in v1beta1 and an
  absent v1beta1 one an explicit `true` in v1alpha1 (the absence is saved).
- projected: profilingConfig.profilerImage -> image (an empty one is none; v1alpha1 always
  gets a profilingConfig, required there); useMocker -> features.mocker.enabled;
  deploymentOverrides name, namespace, labels and annotations -> the metadata of a partial
  v1beta1 DGD in overrides.dgd.
- saved (v1alpha1 only): the rest of profilingConfig, enableGpuDiscovery,
  deploymentOverrides.workersImage and the older shape's modelName, sla, gpu, online;
  restored (v1beta1 only): runtimeVersionOverride, searchStrategy, workload, sla, hardware,
  modelCache, features.planner and kvRouter, overrides.profilingJob.

Status: observedGeneration and conditions native; state + deployment <-> phase + dgdName
(Ready with a created graph is Deployed, DeploymentDeleted has no v1beta1 phase and reads as
Ready); generatedDeployment <-> profilingResults.selectedConfig; v1alpha1's backend and
profilingResults (a ConfigMap reference) and v1beta1's profilingPhase, profilingJobName and
deploymentInfo are kept in the payloads.
"""

from __future__ import annotations

from typing import Any

from api.conversion.objects import HUB, KindConversion
from api.conversion.rules import projection, same
from api.kube import Json

__all__ = ["GRAPH_DEPLOYMENT_REQUEST"]

_OVERRIDE_METADATA = ("name", "namespace", "labels", "annotations")


def _backend_to_spoke(hub: Json) -> Json:
    return {"backend": hub["backend"]} if hub.get("backend", "auto") != "auto" else {}


def _auto_apply_to_hub(spoke: Json) -> Json:
    return {"autoApply": spoke.get("autoApply", False)}


def _auto_apply_to_spoke(hub: Json) -> Json:
    return {"autoApply": hub.get("autoApply", True)}


def _profiling_to_hub(spoke: Json) -> Json:
    out: Json = {}
    config = _dict(spoke.get("profilingConfig"))
    if config.get("profilerImage"):
        out["image"] = config["profilerImage"]
    if "useMocker" in spoke:
        out["features"] = {"mocker": {"enabled": spoke["useMocker"]}}
    return out


def _profiling_to_spoke(hub: Json) -> Json:
    # v1alpha1 requires profilingConfig and its profilerImage: a request by intent reads with
    # an empty one (as upstream's, whose Go struct always has both), so it can be applied back.
    out: Json = {"profilingConfig": {"profilerImage": hub.get("image", "")}}
    mocker = _dict(_dict(hub.get("features")).get("mocker"))
    if "enabled" in mocker:
        out["useMocker"] = mocker["enabled"]
    return out


def _overrides_to_hub(spoke: Json) -> Json:
    overrides = _dict(spoke.get("deploymentOverrides"))
    metadata = {k: overrides[k] for k in _OVERRIDE_METADATA if k in overrides}
    if not metadata:
        return {}
    dgd = {"apiVersion": HUB, "kind": "DynamoGraphDeployment", "metadata": metadata}
    return {"overrides": {"dgd": dgd}}


def _overrides_to_spoke(hub: Json) -> Json:
    metadata = _dict(_dict(_dict(hub.get("overrides")).get("dgd")).get("metadata"))
    overrides = {k: metadata[k] for k in _OVERRIDE_METADATA if _fits(k, metadata.get(k))}
    return {"deploymentOverrides": overrides} if overrides else {}


def _fits(key: str, value: Any) -> bool:
    """Whether deploymentOverrides can hold this metadata value (strings, string maps)."""
    if key in ("name", "namespace"):
        return isinstance(value, str)
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _state_to_hub(spoke: Json) -> Json:
    out: Json = {}
    deployment = _dict(spoke.get("deployment"))
    if "state" in spoke:
        state = spoke["state"]
        if state == "Ready" and deployment.get("created") is True:
            state = "Deployed"
        elif state == "DeploymentDeleted":
            state = "Ready"
        out["phase"] = state
    if "name" in deployment:
        out["dgdName"] = deployment["name"]
    return out


def _state_to_spoke(hub: Json) -> Json:
    out: Json = {}
    phase = hub.get("phase")
    if isinstance(phase, str):
        out["state"] = "Ready" if phase == "Deployed" else phase
    deployment: Json = {}
    if "dgdName" in hub:
        deployment["name"] = hub["dgdName"]
    if phase == "Deployed":
        deployment["created"] = True
    if deployment:
        out["deployment"] = deployment
    return out


def _results_to_hub(spoke: Json) -> Json:
    if "generatedDeployment" not in spoke:
        return {}
    return {"profilingResults": {"selectedConfig": spoke["generatedDeployment"]}}


def _results_to_spoke(hub: Json) -> Json:
    results = _dict(hub.get("profilingResults"))
    return {"generatedDeployment": results["selectedConfig"]} if "selectedConfig" in results else {}


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


GRAPH_DEPLOYMENT_REQUEST = KindConversion(
    kind="DynamoGraphDeploymentRequest",
    spec_annotation="nvidia.com/dgdr-spec",
    status_annotation="nvidia.com/dgdr-status",
    spec_rules=[
        *same("model"),
        projection(("backend",), ("backend",), lambda s: dict(s), _backend_to_spoke),
        projection(
            ("autoApply",), ("autoApply",), _auto_apply_to_hub, _auto_apply_to_spoke, fills=True
        ),
        projection(
            ("profilingConfig", "useMocker"),
            ("image", "features"),
            _profiling_to_hub,
            _profiling_to_spoke,
            fills=True,
        ),
        projection(
            ("deploymentOverrides",), ("overrides",), _overrides_to_hub, _overrides_to_spoke
        ),
    ],
    status_rules=[
        *same("observedGeneration", "conditions"),
        projection(("state", "deployment"), ("phase", "dgdName"), _state_to_hub, _state_to_spoke),
        projection(
            ("profilingResults", "generatedDeployment"),
            ("profilingResults",),
            _results_to_hub,
            _results_to_spoke,
        ),
    ],
)
