"""The inputs of the DGDR differential test (`test_request_hub_differential.py`): every
request the operator may find stored, as the hub, and what the controller makes of it.

Cases: every DynamoGraphDeploymentRequest of `deploy/examples/` and `tests/api/manifests/`,
each as written and written in the other version (stored as the hub either way); the requests
the controller's tests and the e2e tests write (`FIXTURES`); and requests drawn by hypothesis
(`tests/api/model_strategies.py`), written in `v1alpha1`, in `v1beta1`, or written in
`v1alpha1` and then edited in `v1beta1` (the payload kept, the `v1beta1` fields drawn anew),
recorded in the baseline itself.

`python tests/reconcilers/request_hub_cases.py` records the baseline (the drawn inputs and
every case's outcome); `outcome` is what the test compares.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from api.conversion import HUB, SPOKE, convert

Json = dict[str, Any]

ROOT = Path(__file__).resolve().parents[2]
BASELINE = Path(__file__).parent / "golden" / "request-hub-baseline.json"
KIND = "DynamoGraphDeploymentRequest"
NAMESPACE = "team"
#: Hardware as GPU discovery reports it (`backends.gpu_discovery.hardware_from_nodes`).
DISCOVERED = {"gpu_model": "NVIDIA-H100-80GB-HBM3", "gpu_vram_mib": 81559,
              "num_gpus_per_node": 8, "system": "h100_sxm"}
#: The profiling ClusterRole of a cluster-wide operator; "" is a namespace-restricted one's.
ROLES = ("dynamo-dgdr-profiling", "")

_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"
_SLA = {"profilerImage": _IMAGE, "config": {"sla": {"ttft": 100, "itl": 1500}}}
#: Spec entries the tests write over `request_support.request`'s (and the e2e tests' own).
FIXTURES: dict[str, Json] = {
    "plain": {},
    "aic": {"profilingConfig": {"profilerImage": "img", "config": {
        "sweep": {"use_ai_configurator": True}, "sla": {"ttft": 100}},
        "configMapRef": {"name": "base", "key": "graph.yaml"}},
        "deploymentOverrides": {"workersImage": "my/worker:1"}},
    "bad-ttft": {"profilingConfig": {"profilerImage": "img", "config": {"sla": {}},
                                     "configMapRef": {"name": "Not_A_Name"}}},
    "bad-name": {"deploymentOverrides": {"name": "Not_A_Name"}},
    "discovery": {"enableGpuDiscovery": True},
    "discovery-sized": {"enableGpuDiscovery": True, "profilingConfig": {
        "profilerImage": "img", "config": {"hardware": {"min_num_gpus_per_engine": 1,
                                                        "max_num_gpus_per_engine": 4}}}},
    "discovery-given": {"enableGpuDiscovery": True, "profilingConfig": {
        "profilerImage": "img", "config": {"hardware": {"gpu_model": "mine"}}}},
    "backwards": {"profilingConfig": {"profilerImage": "img", "config": {"hardware": {
        "min_num_gpus_per_engine": 8, "max_num_gpus_per_engine": 2}}}},
    "auto-apply": {"autoApply": True, "profilingConfig": {
        "profilerImage": _IMAGE, "config": {"sla": {"ttft": 150, "itl": 10}}}},
    "mocker": {"useMocker": True},
    "mocker-off": {"useMocker": False, "autoApply": False},
    "overrides": {"autoApply": True, "deploymentOverrides": {
        "name": "prod", "namespace": "serve", "labels": {"team": "x"},
        "annotations": {"note": "n"}, "workersImage": "w:1"}},
    "missing-map": {"profilingConfig": {"profilerImage": "img", "config": {"x": 1},
                                        "configMapRef": {"name": "missing"}}},
    "output-pvc": {"profilingConfig": {"profilerImage": "img", "config": {"a": 1},
                                       "outputPVC": "results",
                                       "resources": {"requests": {"cpu": "1"}},
                                       "tolerations": [{"key": "nvidia.com/gpu",
                                                        "operator": "Exists"}]}},
    "not-an-object": {"profilingConfig": {"profilerImage": "img",
                                          "config": {"deployment": "x"}}},
    "image-only": {"profilingConfig": {"profilerImage": _IMAGE}},
    "older-shape": {"modelName": "m", "online": True, "sla": {"ttft": 1, "itl": 2},
                    "gpu": {"type": "h100"}},
    "sglang": {"backend": "sglang", "profilingConfig": _SLA},
}


def _stored(obj: Json) -> Json:
    """`obj` as the API server stores it (the hub), with the metadata it gives."""
    hub = convert(obj, HUB)
    meta = hub.setdefault("metadata", {})
    meta.setdefault("name", "r")
    meta.setdefault("namespace", NAMESPACE)
    meta.setdefault("uid", "uid-1")
    meta.setdefault("generation", 1)
    meta.setdefault("resourceVersion", "7")
    return hub


def _other_version(obj: Json) -> Json:
    other = SPOKE if obj.get("apiVersion") == HUB else HUB
    return _stored(convert(obj, other))


def manifest_cases() -> Iterator[tuple[str, Json]]:
    """(id, stored request) of every request manifest of the repository."""
    files = sorted([*(ROOT / "deploy" / "examples").rglob("*.yaml"),
                    *(ROOT / "tests" / "api" / "manifests").rglob("*.yaml")])
    for path in files:
        for index, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if not isinstance(doc, dict) or doc.get("kind") != KIND:
                continue
            doc.setdefault("metadata", {}).setdefault("namespace", NAMESPACE)
            name = f"{path.relative_to(ROOT)}#{index}"
            yield name, _stored(doc)
            yield f"{name}@other", _other_version(doc)


def fixture_cases() -> Iterator[tuple[str, Json]]:
    """(id, stored request) of the requests the tests write, in both versions."""
    for name, spec in FIXTURES.items():
        body: Json = {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", "profilingConfig": _SLA}
        body.update(json.loads(json.dumps(spec)))
        obj = {"apiVersion": SPOKE, "kind": KIND,
               "metadata": {"name": name, "namespace": NAMESPACE}, "spec": body}
        yield f"fixture:{name}", _stored(obj)
        yield f"fixture:{name}@other", _other_version(obj)


def drawn_cases(count: int) -> dict[str, Json]:
    """Requests drawn by hypothesis (for recording only; the baseline keeps them)."""
    import warnings

    from hypothesis import strategies as st
    from hypothesis.errors import NonInteractiveExampleWarning

    sys.path.insert(0, str(ROOT))
    from api.convert import dump
    from tests.api.model_strategies import objects

    def drawn(version: str) -> Json:
        obj = dump(objects(version, KIND).example())
        obj.pop("status", None)
        obj["metadata"] = {"name": "drawn", "namespace": NAMESPACE}
        return obj

    out: dict[str, Json] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        for i in range(count):
            alpha, beta = drawn("v1alpha1"), drawn("v1beta1")
            out[f"drawn:{i}:v1alpha1"] = _stored(alpha)
            out[f"drawn:{i}:v1beta1"] = _stored(beta)
            # Written in v1alpha1, then edited in v1beta1: the payload stays, a group drawn
            # anew (or kept) per field.
            edited = _stored(alpha)
            for key in ("image", "features", "backend", "overrides", "autoApply"):
                if st.booleans().example():
                    if key in beta["spec"]:
                        edited["spec"][key] = beta["spec"][key]
                    else:
                        edited["spec"].pop(key, None)
            out[f"drawn:{i}:edited"] = edited
    return out


def digest(value: Any) -> str:
    """A digest of JSON as it would be sent (key order kept)."""
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:24]


def outcome(stored: Json) -> Json:
    """What the controller makes of a stored request, before any cluster read: its check (the
    Validation status' message, each setting), whether it profiles by its profilingConfig,
    and then what that path reads and builds (the profile config and the Job and identity,
    with and without discovered hardware, under each role; the output key, the AIC event).
    The baseline was recorded by the view's path (the request's `v1alpha1` view, commit
    7dbcb87); this is the hub's (the `v1beta1` request and its `request_inputs`)."""
    from api.convert import load
    from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest
    from api.validation.request_versions import check_request
    from backends import profiling_intent as intent
    from backends import profiling_job as pj
    from backends.errors import GenerationError
    from reconcilers.request import legacy as legacy_module
    from reconcilers.request.reconciler import _legacy

    legacy = _legacy(stored)
    checks = {}
    for restricted in (False, True):
        for new in (False, True):
            checked = check_request(stored, namespace_restricted=restricted, new=new,
                                    written_as=SPOKE if legacy else None)
            checks[f"restricted={restricted},new={new}"] = {
                "loaded": checked.hub is not None,
                "message": "; ".join(str(e) for e in checked.errors)}
    out: Json = {"legacy": legacy is not None, "check": checks}
    if legacy is None:
        out["output_key"] = intent.INTENT_OUTPUT_KEY
        return out
    dgdr = load(DynamoGraphDeploymentRequest, {k: v for k, v in stored.items()
                                                if k != "status"})
    profiling = legacy.profiling_config
    ref = profiling.config_map_ref if profiling is not None else None
    out.update(
        output_key=pj.MOCKER_OUTPUT_KEY if legacy.use_mocker else pj.OUTPUT_KEY,
        given_hardware=legacy_module._given_hardware(legacy),
        discovery=bool(legacy.enable_gpu_discovery),
        config_map=[ref.name, ref.key or pj.DEFAULT_CONFIG_KEY] if ref is not None else None)
    built: Json = {}
    for hardware in (None, DISCOVERED):
        key = "discovered" if hardware else "none"
        try:
            config = pj.profile_config(dgdr, legacy, str(stored["metadata"]["namespace"]),
                                       hardware)
        except GenerationError as error:
            built[key] = {"error": str(error)}
            continue
        text = yaml.safe_dump(config, sort_keys=False)
        entry: Json = {"config": digest(config), "text": digest(text),
                       "aic": pj.profiler_app(config) == "aic-profiler"}
        for role in ROLES:
            desired = pj.profiling_children(dgdr, legacy, config, text, cluster_role=role)
            entry[f"role={role}"] = [
                [c.obj["kind"], c.write.name, list(c.immutable), digest(c.obj)]
                for c in desired.children]
        built[key] = entry
    out["built"] = built
    return out


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    inputs = drawn_cases(count)
    cases = {**dict(manifest_cases()), **dict(fixture_cases()), **inputs}
    outcomes = {name: outcome(obj) for name, obj in cases.items()}
    BASELINE.parent.mkdir(exist_ok=True)
    BASELINE.write_text(_lines({"inputs": inputs, "outcomes": outcomes}), encoding="utf-8")
    legacy = sum(1 for o in outcomes.values() if o["legacy"])
    print(f"{len(outcomes)} cases, {legacy} profiled by their profilingConfig")


def _lines(baseline: Json) -> str:
    """The baseline as JSON, one case a line (small diffs when it is recorded again)."""
    parts = []
    for section, cases in baseline.items():
        rows = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
                          for k, v in sorted(cases.items()))
        parts.append(f" {json.dumps(section)}: {{\n{rows}\n }}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


if __name__ == "__main__":
    main()
