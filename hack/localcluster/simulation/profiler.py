"""The DGDR profiler, played by the simulated kubelet: what the profiler image and its output
copier do on a real cluster, without GPUs.

A pod is a profiling pod when it has a container named `profiler` whose args carry
`--profile-config <yaml>` (the Jobs the operator creates for v1alpha1 requests with a
profilingConfig) or `--config <json>` (those of intent-based v1beta1 requests, below).
It runs for `Delays.profiler_run` seconds (or the `localcluster.dev/job-duration` annotation),
then writes ConfigMap `dgdr-output-<dgdr>` as the copier would, and its containers exit:

* a feasible SLA: keys `config_with_planner.yaml` (the generated DynamoGraphDeployment plus a
  planner profile ConfigMap), `mocker_config_with_planner.yaml` (the same graph with mocker
  workers that need no GPUs) and `profiler_status.yaml` (`status: success`); exit code 0;
* an infeasible one: only `profiler_status.yaml` with `status: failed` and the reason; exit
  code 1, so the Job retries and then fails as a real one does.

The rule (deliberately simple, so a manifest alone can pick the outcome):

* infeasible when `sla.ttft` is below TTFT_FLOOR_MS or `sla.itl` below ITL_FLOOR_MS;
* model size in billions of parameters from the model name ("Qwen3-0.6B" -> 0.6; 8 if none);
* prefill tensor parallelism: the smallest power of two with
  PREFILL_MS_PER_B * size / tp <= ttft, decode likewise with DECODE_MS_PER_B * size / tp <= itl,
  both capped at `hardware.num_gpus_per_node` (default 8); past the cap the SLA is infeasible;
* replicas: 2 prefill workers when ttft < 200 ms, 2 decode workers when itl < 20 ms, else 1;
* images: `deployment.dgd_image`, else the backend's runtime image at RUNTIME_VERSION.

A v1beta1 (intent-based) profiling pod carries `--config <json>` instead: the request's spec,
which the same rule reads (`sla.ttft`/`itl`, or an `e2eLatency` split as a quarter to the
first token and the rest over `workload.osl` tokens; `hardware.numGpusPerNode`; `backend`
`auto` profiled as vllm). Its output is one key, `final_config.yaml`: the graph with the
component names of the original's profiler templates (`Frontend`, `prefill`, `decode`, and
`Planner` when `features.planner` is set; mocker workers when `features.mocker.enabled`),
plus the planner's profile ConfigMap when there is a planner. A `modelCache` PVC is declared
in the graph and mounted into the workers, which load the model from it.
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

from .behaviors import JOB_DURATION, JobRun
from .objects import annotations_of
from .writer import Writer

Json = dict[str, Any]

CONFIG_MAPS = ("", "configmaps")
TTFT_FLOOR_MS = 10.0
ITL_FLOOR_MS = 2.0
PREFILL_MS_PER_B = 40.0
DECODE_MS_PER_B = 3.0
DEFAULT_SIZE_B = 8.0
RUNTIME_VERSION = "0.8.0"
RUNTIME_IMAGES = {"vllm": "vllm-runtime", "sglang": "sglang-runtime",
                  "trtllm": "tensorrtllm-runtime"}
ENGINE_MODULES = {"vllm": "dynamo.vllm", "sglang": "dynamo.sglang", "trtllm": "dynamo.trtllm"}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)[bB](?![a-zA-Z])")


@dataclass(frozen=True)
class Plan:
    """The profiler's answer: per-worker parallelism and replicas, or why there is none."""

    prefill_tp: int = 1
    decode_tp: int = 1
    prefill_replicas: int = 1
    decode_replicas: int = 1
    error: str = ""


def model_size(model: str) -> float:
    found = _SIZE.findall(model)
    return float(found[-1]) if found else DEFAULT_SIZE_B


def _tp(ms_per_b: float, size: float, target: float, cap: int) -> int | None:
    tp = 1
    while ms_per_b * size / tp > target:
        tp *= 2
        if tp > cap:
            return None
    return tp


def plan(config: Json) -> Plan:
    """What the simulated profiler finds for a profile config (see the module's rule); a
    config it cannot read fails the run, as the real profiler exits with an error."""
    sla = config.get("sla") or {}
    hardware = config.get("hardware") or {}
    deployment = config.get("deployment") or {}
    for section, value in (("sla", sla), ("hardware", hardware), ("deployment", deployment)):
        if not isinstance(value, dict):
            return Plan(error=f"invalid profile config: {section} must be a mapping")
    try:
        ttft = float(sla.get("ttft", 200))
        itl = float(sla.get("itl", 20))
        cap = int(hardware.get("num_gpus_per_node") or 8)
    except (TypeError, ValueError) as err:
        return Plan(error=f"invalid profile config: {err}")
    if not (math.isfinite(ttft) and math.isfinite(itl)) or cap < 1:
        return Plan(error="invalid profile config: sla and hardware need positive numbers")
    if ttft < TTFT_FLOOR_MS:
        return Plan(error=f"no configuration meets the SLA: ttft {ttft:g} ms is below the "
                          f"{TTFT_FLOOR_MS:g} ms floor")
    if itl < ITL_FLOOR_MS:
        return Plan(error=f"no configuration meets the SLA: itl {itl:g} ms is below the "
                          f"{ITL_FLOOR_MS:g} ms floor")
    size = model_size(str(deployment.get("model") or ""))
    prefill = _tp(PREFILL_MS_PER_B, size, ttft, cap)
    decode = _tp(DECODE_MS_PER_B, size, itl, cap)
    if prefill is None or decode is None:
        return Plan(error=f"no configuration meets the SLA (ttft {ttft:g} ms, itl {itl:g} ms) "
                          f"with {cap} GPUs per node")
    return Plan(prefill_tp=prefill, decode_tp=decode,
                prefill_replicas=2 if ttft < 200 else 1, decode_replicas=2 if itl < 20 else 1)


def _worker(backend: str, image: str, model: str, role: str, tp: int, replicas: int,
            mocker: bool) -> Json:
    if mocker:
        command = ["python3", "-m", "dynamo.mocker"]
        args = ["--model-path", model, f"--is-{role}-worker"]
    else:
        command = ["python3", "-m", ENGINE_MODULES.get(backend, "dynamo.vllm")]
        args = ["--model", model, "--tensor-parallel-size", str(tp), f"--is-{role}-worker"]
    worker: Json = {"componentType": "worker", "subComponentType": role, "replicas": replicas,
                    "extraPodSpec": {"mainContainer": {"image": image, "command": command,
                                                       "args": args}}}
    if not mocker:
        worker["resources"] = {"limits": {"gpu": str(tp)}}
    return worker


def generated_graph(config: Json, dgdr: str, p: Plan, *, mocker: bool) -> Json:
    """The DynamoGraphDeployment the profiler proposes (or its mocker variant)."""
    deployment = config.get("deployment") or {}
    backend = str((config.get("engine") or {}).get("backend") or "vllm")
    model = str(deployment.get("model") or "")
    image = str(deployment.get("dgd_image") or
                f"nvcr.io/nvidia/ai-dynamo/{RUNTIME_IMAGES.get(backend, 'vllm-runtime')}:"
                f"{RUNTIME_VERSION}")
    title = backend.capitalize()
    profile = f"planner-profile-data-{dgdr}"
    services: Json = {
        "Frontend": {"componentType": "frontend", "replicas": 1,
                     "extraPodSpec": {"mainContainer": {"image": image}}},
        "Planner": {"componentType": "planner", "replicas": 1, "extraPodSpec": {
            "volumes": [{"name": "planner-profile-data",
                         "configMap": {"name": profile, "optional": True}}],
            "mainContainer": {
                "image": image, "command": ["python3", "-m", "planner_sla"],
                "args": ["--environment=kubernetes", f"--backend={backend}",
                         "--profile-results-dir=/data/profiling_results"],
                "volumeMounts": [{"name": "planner-profile-data",
                                  "mountPath": "/data/profiling_results", "readOnly": True}]}}},
        f"{title}PrefillWorker": _worker(backend, image, model, "prefill", p.prefill_tp,
                                         p.prefill_replicas, mocker),
        f"{title}DecodeWorker": _worker(backend, image, model, "decode", p.decode_tp,
                                        p.decode_replicas, mocker),
    }
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": f"{backend}-{'mocker' if mocker else 'disagg'}",
                         "namespace": str(deployment.get("namespace") or "")},
            "spec": {"backendFramework": backend, "services": services}}


def _profile_data(config: Json, dgdr: str, p: Plan) -> Json:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"planner-profile-data-{dgdr}"},
            "data": {"prefill_tp.txt": str(p.prefill_tp), "decode_tp.txt": str(p.decode_tp),
                     "sla.yaml": yaml.safe_dump(config.get("sla") or {})}}


def output_data(config: Json, dgdr: str) -> tuple[bool, dict[str, str]]:
    """Whether the run succeeds, and the output ConfigMap's data."""
    p = plan(config)
    if p.error:
        return False, {"profiler_status.yaml": yaml.safe_dump(
            {"status": "failed", "message": p.error})}

    def stream(mocker: bool) -> str:
        docs = [generated_graph(config, dgdr, p, mocker=mocker), _profile_data(config, dgdr, p)]
        return "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)

    return True, {"config_with_planner.yaml": stream(False),
                  "mocker_config_with_planner.yaml": stream(True),
                  "profiler_status.yaml": yaml.safe_dump(
                      {"status": "success", "message": "profiling completed"})}


def _profiler_arg(pod: Json, flag: str) -> Json | None:
    """The YAML (or JSON) value of `flag` in a profiling pod's profiler args ({} when it
    does not parse), or None when the pod has no such profiler."""
    for c in (pod.get("spec") or {}).get("containers") or ():
        args = [str(a) for a in c.get("args") or ()]
        if c.get("name") == "profiler" and flag in args:
            i = args.index(flag)
            try:
                loaded = yaml.safe_load(args[i + 1]) if i + 1 < len(args) else None
            except yaml.YAMLError:
                loaded = None
            return loaded if isinstance(loaded, dict) else {}
    return None


def profile_config(pod: Json) -> Json | None:
    """The inline profile config of a v1alpha1 profiling pod, or None for any other pod."""
    return _profiler_arg(pod, "--profile-config")


def intent_spec(pod: Json) -> Json | None:
    """The request spec of a v1beta1 profiling pod, or None for any other pod."""
    return _profiler_arg(pod, "--config")


def _section(spec: Json, key: str) -> Json:
    value = spec.get(key)
    return value if isinstance(value, dict) else {}


def intent_config(spec: Json) -> Json:
    """The profile config the rule reads, from an intent-based request's spec."""
    sla, workload, hardware = (_section(spec, k) for k in ("sla", "workload", "hardware"))
    targets: Json = {k: sla[k] for k in ("ttft", "itl") if k in sla}
    e2e = sla.get("e2eLatency")
    if isinstance(e2e, int | float) and not isinstance(e2e, bool):
        osl = workload.get("osl") or 1000
        targets = {"ttft": e2e / 4, "itl": e2e * 3 / 4 / float(osl)}
    backend = str(spec.get("backend") or "auto")
    config: Json = {"sla": targets, "deployment": {"model": spec.get("model") or ""},
                    "engine": {"backend": "vllm" if backend == "auto" else backend}}
    if hardware.get("numGpusPerNode"):
        config["hardware"] = {"num_gpus_per_node": hardware["numGpusPerNode"]}
    return config


def intent_graph(spec: Json, dgdr: str, p: Plan) -> Json:
    """The graph the profiler's templates give an intent-based request."""
    config = intent_config(spec)
    features = _section(spec, "features")
    mocker = bool((features.get("mocker") or {}).get("enabled"))
    graph = generated_graph(config, dgdr, p, mocker=mocker)
    services = graph["spec"]["services"]
    title = str(config["engine"]["backend"]).capitalize()
    # The templates give the Frontend its whole command line (overrides append to it).
    frontend = services["Frontend"]["extraPodSpec"]["mainContainer"]
    frontend.update(command=["python3", "-m", "dynamo.frontend"],
                    args=["--http-port", "8000"])
    renamed = {"Frontend": services["Frontend"],
               "prefill": services[f"{title}PrefillWorker"],
               "decode": services[f"{title}DecodeWorker"]}
    if features.get("planner") is not None:
        renamed["Planner"] = services["Planner"]
    graph["spec"]["services"] = renamed
    _model_cache(graph, _section(spec, "modelCache"), mocker)
    return graph


def _model_cache(graph: Json, cache: Json, mocker: bool) -> None:
    """The request's model cache PVC, mounted into the workers, which load the model from
    it (`<mount>/<pvcModelPath>`)."""
    pvc = cache.get("pvcName")
    if not pvc:
        return
    mount = str(cache.get("pvcMountPath") or "/opt/model-cache")
    path = f"{mount}/{cache['pvcModelPath']}" if cache.get("pvcModelPath") else mount
    graph["spec"]["pvcs"] = [{"name": pvc, "create": False}]
    for name in ("prefill", "decode"):
        worker = graph["spec"]["services"][name]
        worker["volumeMounts"] = [{"name": pvc, "mountPoint": mount}]
        args = worker["extraPodSpec"]["mainContainer"]["args"]
        flag = "--model-path" if mocker else "--model"
        args[args.index(flag) + 1] = path


def intent_output_data(spec: Json, dgdr: str) -> tuple[bool, dict[str, str]]:
    """Whether an intent-based run succeeds, and the output ConfigMap's data."""
    config = intent_config(spec)
    p = plan(config)
    if p.error:
        return False, {"profiler_status.yaml": yaml.safe_dump(
            {"status": "failed", "message": p.error})}
    docs = [intent_graph(spec, dgdr, p)]
    features = _section(spec, "features")
    if features.get("planner") is not None:
        docs.append(_profile_data(config, dgdr, p))
    return True, {"final_config.yaml": "---\n".join(yaml.safe_dump(d, sort_keys=False)
                                                     for d in docs),
                  "profiler_status.yaml": yaml.safe_dump(
                      {"status": "success", "message": "profiling completed"})}


def run_output(pod: Json) -> tuple[bool, dict[str, str]] | None:
    """The outcome and output data of a profiling pod of either kind (None: not one)."""
    config = profile_config(pod)
    if config is not None:
        return output_data(config, _dgdr_of(pod))
    spec = intent_spec(pod)
    if spec is not None:
        return intent_output_data(spec, _dgdr_of(pod))
    return None


def _dgdr_of(pod: Json) -> str:
    for c in (pod.get("spec") or {}).get("containers") or ():
        for env in c.get("env") or ():
            if env.get("name") == "DGDR_NAME" and env.get("value"):
                return str(env["value"])
    return str(((pod.get("metadata") or {}).get("labels") or {}).get("dgdr") or "")


class Profiler:
    """Runs profiling pods for the kubelet: how long and how they end, and their output."""

    def __init__(self, writer: Writer, duration: float) -> None:
        self.writer = writer
        self.duration = duration

    def job_run(self, pod: Json) -> JobRun | None:
        """The run of a profiling pod (None for other pods)."""
        outcome = run_output(pod)
        if outcome is None:
            return None
        ok, _ = outcome
        duration = self.duration
        value = annotations_of(pod).get(JOB_DURATION)
        if value:
            with contextlib.suppress(ValueError):
                duration = float(value)
        return JobRun("succeed" if ok else "fail", duration)

    def finish(self, pod: Json) -> None:
        """Write the output ConfigMap, as the copier does when the profiler has ended."""
        outcome = run_output(pod)
        if outcome is None:
            return
        dgdr = _dgdr_of(pod)
        _, data = outcome
        namespace = pod["metadata"]["namespace"]
        name = f"dgdr-output-{dgdr}"
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace,
                             "labels": {"dgdr.nvidia.com/name": dgdr,
                                        "nvidia.com/managed-by": "dynamo-operator"}},
                "data": data}
        live = self.writer.get(CONFIG_MAPS, namespace, name)
        if live is None:
            self.writer.create(CONFIG_MAPS, namespace, body)
        else:
            self.writer.update(CONFIG_MAPS, {**live, "data": data})
