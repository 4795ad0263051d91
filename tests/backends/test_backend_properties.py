"""Property test: for random valid graphs, the builders never raise, and everything they
produce is accepted by the local API server (the kinds it cannot serve, Volcano PodGroups and
Istio VirtualServices, are checked for well-formedness instead)."""

from __future__ import annotations

import asyncio
import copy
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from backend_cases import SETTINGS
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kubernetes_asyncio import client

from api import names
from api.convert import load
from api.v1alpha1 import DynamoGraphDeployment
from api.validation import validate
from backends.render import render
from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from hack.our_crds import with_conversion

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
CRD_FILES = sorted((ROOT / "deploy" / "crds").glob("*.yaml")) + sorted(
    (ROOT / "hack" / "crds").glob("*.yaml")
)
IMAGES = ["nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0", "registry.local:5000/dynamo:dev", "ubuntu"]
LABEL_KEY = st.from_regex(r"(example\.com/)?[a-z][a-z0-9-]{0,6}[a-z0-9]", fullmatch=True)
LABEL_VALUE = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?", fullmatch=True)
ENV_NAME = st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True)
ENV = st.builds(lambda n, v: {"name": n, "value": v}, ENV_NAME, st.text("abc xyz:/=", max_size=8))
CPU = st.sampled_from(["100m", "1", "2", "0.5"])
MEMORY = st.sampled_from(["512Mi", "1Gi", "100M"])
KEYS = ["Frontend", "VllmWorker", "decode", "prefill", "Planner", "Epp", "Tool"]


@st.composite
def _command(draw: st.DrawFn, backend: str) -> Json:
    args = ["--model", "m"]
    parallel = draw(st.sampled_from(["", "--tensor-parallel-size", "--data-parallel-size"]))
    if parallel:
        args += [parallel, str(draw(st.sampled_from([2, 8, 16])))]
    if draw(st.booleans()):
        return {"command": ["python3", "-m", f"dynamo.{backend}"], "args": args}
    tail = draw(st.sampled_from(["", " 2>&1 | tee /tmp/log"]))
    script = f"python3 -m dynamo.{backend} {' '.join(args)}{tail}"
    return {"command": ["/bin/sh", "-c"], "args": [script]}


@st.composite
def _service(draw: st.DrawFn, key: str, backend: str, pvcs: list[str]) -> Json:
    kind = {"Frontend": "frontend", "Planner": "planner", "Epp": "epp", "Tool": None}.get(
        key, draw(st.sampled_from(["worker", "prefill", "decode"]))
    )
    main: Json = {"image": draw(st.sampled_from(IMAGES))}
    service: Json = {"replicas": draw(st.integers(0, 3))}
    if kind is not None:
        service["componentType"] = kind
    if kind in ("worker", "prefill", "decode"):
        main.update(draw(_command(backend)))
        service["resources"] = {"limits": {"gpu": draw(st.sampled_from(["1", "4", "8"]))}}
        nodes = draw(st.sampled_from([1, 2, 4]))
        if nodes > 1:
            service["multinode"] = {"nodeCount": nodes}
    elif kind == "planner":
        main["command"] = ["python3", "-m", "dynamo.planner"]
    elif kind is None:
        main.update(command=["python3"], args=["-m", "tool"])
    if kind == "epp":
        service["replicas"] = 1
        service["eppConfig"] = {"configMapRef": {"name": "picker", "key": "picker.yaml"}}
    if draw(st.booleans()):
        requests = {"cpu": draw(CPU), "memory": draw(MEMORY)}
        service.setdefault("resources", {})["requests"] = requests
        service["resources"].setdefault("limits", {})["custom"] = {"example.com/nic": "1"}
    service["envs"] = draw(st.lists(ENV, max_size=3))
    main["env"] = draw(st.lists(ENV, max_size=2))
    if draw(st.booleans()):
        service["envFromSecret"] = "hf-token"
    if pvcs and draw(st.booleans()):
        cache = (
            backend == "vllm" and kind in ("worker", "prefill", "decode") and draw(st.booleans())
        )
        mount: Json = {"name": draw(st.sampled_from(pvcs))}
        mount.update({"useAsCompilationCache": True} if cache else {"mountPoint": "/data"})
        service["volumeMounts"] = [mount]
    shared_memory = draw(st.sampled_from([{"disabled": True}, {"size": "16Gi"}, None]))
    if shared_memory is not None:
        service["sharedMemory"] = shared_memory
    service["labels"] = draw(st.dictionaries(LABEL_KEY, LABEL_VALUE, max_size=2))
    service["annotations"] = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "nvidia.com/dynamo-discovery-backend": st.sampled_from(["kubernetes", "etcd"]),
                "nvidia.com/disable-image-pull-secret-discovery": st.just("true"),
                "nvidia.com/deployment-strategy": st.sampled_from(
                    ["Recreate", "RampedSlowRollout"]
                ),
            },
        )
    )
    service["extraPodMetadata"] = {
        "labels": draw(st.dictionaries(LABEL_KEY, LABEL_VALUE, max_size=2)),
        "annotations": draw(st.dictionaries(LABEL_KEY, st.text(max_size=5), max_size=2)),
    }
    extra: Json = {"mainContainer": main}
    if draw(st.booleans()):
        extra["nodeSelector"] = {"pool": draw(LABEL_VALUE)}
        extra["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
        extra["terminationGracePeriodSeconds"] = draw(st.integers(0, 600))
        extra["securityContext"] = {"runAsUser": 1000}
        extra["containers"] = [{"name": "sidecar", "image": "busybox"}]
    service["extraPodSpec"] = extra
    if draw(st.booleans()):
        service["livenessProbe"] = {"tcpSocket": {"port": 9090}, "periodSeconds": 5}
    if kind == "frontend" and draw(st.booleans()):
        service["ingress"] = {
            "enabled": True, "host": draw(LABEL_VALUE), "ingressControllerClassName": "nginx",
            "useVirtualService": True, "virtualServiceGateway": "istio-system/gw",
        }  # fmt: skip
    if kind == "frontend":
        service["globalDynamoNamespace"] = draw(st.booleans())
    if kind not in (None, "epp") and draw(st.booleans()):
        service["modelRef"] = {"name": draw(st.sampled_from(["Qwen/Qwen3-0.6B", "m"]))}
    if kind not in (None, "epp") and draw(st.booleans()):
        service["scalingAdapter"] = {"enabled": True}
    return service


@st.composite
def graphs(draw: st.DrawFn) -> Json:
    backend = draw(st.sampled_from(["vllm", "sglang", "trtllm"]))
    pvcs = draw(st.lists(st.sampled_from(["models", "cache"]), unique=True, max_size=2))
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=4, unique=True))
    spec: Json = {
        "services": {key: draw(_service(key, backend, pvcs)) for key in keys},
        "pvcs": [
            {"name": n, "create": True, "size": "10Gi", "storageClass": "standard",
             "volumeAccessMode": "ReadWriteOnce"} for n in pvcs
        ],
        "envs": draw(st.lists(ENV, max_size=2)),
    }  # fmt: skip
    if draw(st.booleans()):
        spec["backendFramework"] = backend
    annotations = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "nvidia.com/enable-metrics": st.just("false"),
                "nvidia.com/dynamo-discovery-backend": st.sampled_from(["kubernetes", "etcd"]),
            },
        )
    )
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": draw(st.sampled_from(["g", "llm", "my-graph"])),
            "annotations": annotations,
        },
        "spec": spec,
    }


SETTINGS_VARIANTS = [
    SETTINGS,
    replace(SETTINGS, grove_enabled=True, kai_scheduler_enabled=True),
    replace(SETTINGS, virtual_service_gateway="istio-system/gw", volcano_enabled=False,
            ingress_controller_class_name="nginx"),
]  # fmt: skip
UNSERVED = {"PodGroup", "VirtualService"}
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _pod_templates(obj: Json) -> list[Json]:
    """The pod templates (metadata + spec) of a workload, whatever its kind."""
    spec = obj.get("spec") or {}
    if obj["kind"] == "Deployment":
        return [spec["template"]]
    if obj["kind"] == "LeaderWorkerSet":
        templates = spec["leaderWorkerTemplate"]
        return [templates["leaderTemplate"], templates["workerTemplate"]]
    if obj["kind"] == "PodCliqueSet":
        return [
            {"metadata": {"labels": c["labels"]}, "spec": c["spec"]["podSpec"]}
            for c in spec["template"]["cliques"]
        ]
    return []


def _well_formed(obj: Json) -> list[str]:
    """What the API server checks first (names, labels), what it cannot check inside the
    pod templates of custom resources, and the labels `kubectl get -l` relies on."""
    meta = obj.get("metadata") or {}
    problems = [f"name: {m}" for m in names.is_dns1123_subdomain(meta.get("name", ""))]
    problems += [f"namespace: {m}" for m in names.is_dns1123_label(meta.get("namespace", ""))]
    for key, value in (meta.get("labels") or {}).items():
        if len(value) > 63 or (value and not value[0].isalnum()):
            problems.append(f"label {key}={value!r}")
    if obj["kind"] in UNSERVED and not isinstance(obj.get("spec"), dict):
        problems.append("spec")
    # A model's headless Service and the planner's and EPP's accounts serve every graph of
    # the namespace.
    shared = (obj["kind"] == "Service" and meta["name"].startswith("dynamo-model-")) or (
        (meta.get("labels") or {}).get("app.kubernetes.io/name")
        in ("planner-serviceaccount", "epp-serviceaccount"))
    if not shared and "nvidia.com/dynamo-graph-deployment-name" not in meta.get("labels", {}):
        problems.append("no graph label")
    for template in _pod_templates(obj):
        pod_labels = template["metadata"]["labels"]
        if not {"nvidia.com/dynamo-component", "nvidia.com/dynamo-namespace"} <= set(pod_labels):
            problems.append(f"pod labels {pod_labels}")
        container_names = [c.get("name") for c in template["spec"]["containers"]]
        if len(set(container_names)) != len(container_names):
            problems.append(f"containers {container_names}")
        if not all(c.get("image") for c in template["spec"]["containers"]):
            problems.append("container without image")
    return problems


def _selected(objects: list[Json]) -> list[str]:
    """Component Services that select none of the pods of their own workload."""
    problems = []
    for service in (o for o in objects if o["kind"] == "Service"):
        selector = service["spec"]["selector"]
        name = service["metadata"]["name"]
        own = [o for o in objects if o["kind"] != "Service" and o["metadata"]["name"] == name]
        own += [o for o in objects if o["kind"] == "LeaderWorkerSet"
                and o["metadata"]["name"].startswith(f"{name}-")]  # fmt: skip
        templates = [t for o in own for t in _pod_templates(o)]
        labels = [t["metadata"]["labels"] for t in templates]
        if templates and not any(selector.items() <= lab.items() for lab in labels):
            problems.append(f"Service {name} selects none of {labels}")
    return problems


async def _install_crds(kube: KubeClient) -> None:
    # Ours convert through the operator's conversion webhook served in-process: the DCDs
    # built are v1alpha1, stored as v1beta1.
    crds = [with_conversion(doc) for path in CRD_FILES
            for doc in yaml.safe_load_all(path.read_text()) if doc]
    for crd in crds:
        await kube.request("POST", CRD_PATH, body=crd)
    for crd in crds:
        version = next(v["name"] for v in crd["spec"]["versions"] if v.get("served"))
        path = f"/apis/{crd['spec']['group']}/{version}/{crd['spec']['names']['plural']}"
        deadline = time.monotonic() + 10
        while True:
            try:
                await kube.request("GET", path)
                break
            except ApiError:
                assert time.monotonic() < deadline, f"CRD {crd['metadata']['name']} not served"
                await asyncio.sleep(0.05)


def _path(obj: Json, namespace: str) -> str:
    group, _, version = obj["apiVersion"].rpartition("/")
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    plural = {
        "Ingress": "ingresses",
        "DynamoGraphDeploymentScalingAdapter": "dynamographdeploymentscalingadapters",
    }.get(obj["kind"], obj["kind"].lower() + "s")
    return f"{base}/namespaces/{namespace}/{plural}"


async def test_generated_objects_are_accepted_by_the_api_server(api: client.ApiClient) -> None:
    cases: list[tuple[int, Json]] = []

    @settings(
        max_examples=20,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(manifest=graphs(), variant=st.integers(0, len(SETTINGS_VARIANTS) - 1))
    def builders_never_raise(manifest: Json, variant: int) -> None:
        data = copy.deepcopy(manifest)
        data["metadata"]["namespace"] = "default"
        assume(not validate(load(DynamoGraphDeployment, data)))
        assert render(manifest, SETTINGS_VARIANTS[variant])
        cases.append((variant, manifest))

    builders_never_raise()
    kube = KubeClient(api, ClientConfig(qps=None))
    await _install_crds(kube)
    served = 0
    for i, (variant, manifest) in enumerate(cases):
        namespace = f"case-{i}"
        await kube.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
        manifest = {**manifest, "metadata": {**manifest["metadata"], "namespace": namespace}}
        # The input itself must be one the API server takes.
        await kube.request("POST", _path(manifest, namespace), body=manifest,
                           query=[("fieldValidation", "Strict")])  # fmt: skip
        objects = render(manifest, SETTINGS_VARIANTS[variant])
        assert _selected(objects) == [], yaml.safe_dump(manifest)
        for obj in objects:
            context = f"{obj['kind']} {obj['metadata']['name']} of {yaml.safe_dump(manifest)}"
            assert _well_formed(obj) == [], context
            if obj["kind"] in UNSERVED:
                continue
            try:
                await kube.request(
                    "POST", _path(obj, namespace), body=obj, query=[("fieldValidation", "Strict")]
                )
            except ApiError as exc:
                raise AssertionError(f"{exc}\n{context}") from None
            served += 1
    assert served > 60
