"""Hypothesis strategies for objects of the five kinds, schema-valid and mutated.

`objects(namespace)` draws one `Drawn`: a kind, a JSON object meant for a create, and, when
it was mutated, the mutation and the path it hit. A valid base is drawn per kind (small,
runnable in the simulated cluster), then with some probability one mutation is applied at a
path chosen among the object's own: a wrong type, an out-of-range number, an unknown field,
a huge string, deep nesting, unicode, or colliding keys.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

Json = dict[str, Any]
API_VERSION = "nvidia.com/v1alpha1"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"
KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment",
         "DynamoGraphDeploymentRequest", "DynamoModel", "DynamoGraphDeploymentScalingAdapter")
MUTATIONS = ("wrong-type", "out-of-range", "unknown-field", "huge-string", "deep-nesting",
             "unicode", "colliding-keys")

_names = itertools.count(1)


@dataclass
class Drawn:
    """One object to create, and how it was made."""

    kind: str
    obj: Json
    mutation: str = ""
    path: str = ""

    @property
    def name(self) -> str:
        return str(self.obj.get("metadata", {}).get("name", ""))


def unique_name(prefix: str) -> str:
    """A fresh object name (the cluster keeps every object a run creates)."""
    return f"{prefix}{next(_names)}"


_label_values = st.from_regex(r"[a-z0-9]([a-z0-9.-]{0,10}[a-z0-9])?", fullmatch=True)
_label_keys = st.sampled_from(["app", "team", "example.com/tier", "nvidia.com/x", "cost"])
_quantities = st.sampled_from(["100m", "1", "2", "512Mi", "1Gi"])


@st.composite
def main_container(draw: st.DrawFn) -> Json:
    main: Json = {"image": IMAGE}
    if draw(st.booleans()):
        main["env"] = [{"name": "LOG_LEVEL", "value": draw(st.sampled_from(["info", "debug"]))}]
    if draw(st.booleans()):
        main["args"] = ["--flag", draw(st.sampled_from(["a", "b"]))]
    return main


@st.composite
def service(draw: st.DrawFn, component_type: str | None = None) -> Json:
    svc: Json = {
        "componentType": component_type or draw(st.sampled_from(["frontend", "worker",
                                                                 "decode", "prefill"])),
        "replicas": draw(st.integers(0, 2)),
        "extraPodSpec": {"mainContainer": draw(main_container())},
    }
    if draw(st.booleans()):
        svc["labels"] = draw(st.dictionaries(_label_keys, _label_values, max_size=2))
    if draw(st.booleans()):
        svc["annotations"] = {"example.com/note": draw(st.text(max_size=20))}
    if draw(st.booleans()):
        svc["resources"] = {"requests": {"cpu": draw(_quantities)},
                            "limits": {"memory": draw(st.sampled_from(["1Gi", "2Gi"]))}}
    if draw(st.booleans()):
        svc["envs"] = [{"name": "MODEL", "value": "qwen"}]
    if draw(st.booleans()):
        svc["extraPodMetadata"] = {"labels": {"pod": draw(_label_values)}}
    return svc


def _meta(prefix: str, namespace: str) -> Json:
    return {"name": unique_name(prefix), "namespace": namespace}


@st.composite
def graph_deployment(draw: st.DrawFn, namespace: str) -> Json:
    keys = draw(st.lists(st.sampled_from(["Frontend", "decode", "prefill", "worker"]),
                         min_size=1, max_size=3, unique=True))
    services = {k: draw(service("frontend" if k == "Frontend" else "worker")) for k in keys}
    spec: Json = {"services": services}
    if draw(st.booleans()):
        spec["backendFramework"] = draw(st.sampled_from(["vllm", "sglang", "trtllm"]))
    if draw(st.booleans()):
        spec["envs"] = [{"name": "GRAPH_ENV", "value": "1"}]
    return {"apiVersion": API_VERSION, "kind": "DynamoGraphDeployment",
            "metadata": _meta("fz-g", namespace), "spec": spec}


@st.composite
def component_deployment(draw: st.DrawFn, namespace: str) -> Json:
    spec = draw(service())
    if draw(st.booleans()):
        spec["backendFramework"] = draw(st.sampled_from(["vllm", "sglang"]))
    return {"apiVersion": API_VERSION, "kind": "DynamoComponentDeployment",
            "metadata": _meta("fz-c", namespace), "spec": spec}


@st.composite
def graph_deployment_request(draw: st.DrawFn, namespace: str) -> Json:
    spec: Json = {
        "model": draw(st.sampled_from(["Qwen/Qwen3-0.6B", "meta-llama/Llama-3.1-8B"])),
        "backend": draw(st.sampled_from(["vllm", "sglang", "trtllm"])),
        "profilingConfig": {"profilerImage": IMAGE, "config": {
            "sla": {"ttft": draw(st.integers(50, 500)), "itl": draw(st.integers(5, 1500))}}},
    }
    if draw(st.booleans()):
        spec["autoApply"] = False
    return {"apiVersion": API_VERSION, "kind": "DynamoGraphDeploymentRequest",
            "metadata": _meta("fz-r", namespace), "spec": spec}


@st.composite
def model(draw: st.DrawFn, namespace: str) -> Json:
    base = draw(st.sampled_from(["Qwen/Qwen3-0.6B", "meta-llama/Llama-3.1-8B"]))
    spec: Json = {"modelName": draw(st.sampled_from(["m1", "support-lora"])),
                  "baseModelName": base}
    if draw(st.booleans()):
        spec["modelType"] = "lora"
        spec["source"] = {"uri": "s3://loras/" + draw(st.sampled_from(["a", "b"]))}
    return {"apiVersion": API_VERSION, "kind": "DynamoModel",
            "metadata": _meta("fz-m", namespace), "spec": spec}


@st.composite
def scaling_adapter(draw: st.DrawFn, namespace: str) -> Json:
    return {"apiVersion": API_VERSION, "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": _meta("fz-a", namespace),
            "spec": {"replicas": draw(st.integers(0, 3)),
                     "dgdRef": {"name": draw(st.sampled_from(["missing", "fz-g1"])),
                                "serviceName": draw(st.sampled_from(["Frontend", "decode"]))}}}


_BASES = {"DynamoGraphDeployment": graph_deployment,
          "DynamoComponentDeployment": component_deployment,
          "DynamoGraphDeploymentRequest": graph_deployment_request,
          "DynamoModel": model,
          "DynamoGraphDeploymentScalingAdapter": scaling_adapter}


def paths(obj: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every path below `spec` (and the name) of a JSON object."""
    out: list[tuple[str | int, ...]] = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            if not prefix and key not in ("spec",):
                continue
            out.append((*prefix, key))
            out += paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out.append((*prefix, i))
            out += paths(value, (*prefix, i))
    return out


def dotted(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _set(obj: Json, path: tuple[str | int, ...], value: Any) -> None:
    target: Any = obj
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def _get(obj: Json, path: tuple[str | int, ...]) -> Any:
    target: Any = obj
    for part in path:
        target = target[part]
    return target


_unicode = st.sampled_from(["名前", "ünïcödé", "\u202eevil", "emoji-\U0001F600", "a\u0000b",
                            "Ⅻ", "\ufeffbom"])


@st.composite
def mutated(draw: st.DrawFn, base: Json) -> tuple[Json, str, str]:
    """`base` with one mutation applied: (object, mutation, dotted path)."""
    obj = copy.deepcopy(base)
    mutation = draw(st.sampled_from(MUTATIONS))
    if mutation == "colliding-keys":
        return _collide(draw, obj)
    candidates = paths(obj)
    path = draw(st.sampled_from(candidates))
    where = dotted(path)
    if mutation == "wrong-type":
        current = _get(obj, path)
        choices: list[Any] = [7, "seven", [1, "x"], {"k": "v"}, True, None, 1.5]
        replacement = draw(st.sampled_from([c for c in choices if type(c) is not type(current)]))
        _set(obj, path, replacement)
    elif mutation == "out-of-range":
        _set(obj, path, draw(st.sampled_from([-1, -2**31 - 1, 2**31, 2**40, 2**63, 10**30,
                                              0.000001, -0.5])))
    elif mutation == "unknown-field":
        container = _get(obj, path[:-1]) if len(path) > 1 else obj
        if isinstance(container, dict):
            container[draw(st.sampled_from(["zzUnknown", "extra", "spec"]))] = draw(
                st.sampled_from([1, "x", {"a": 1}]))
        else:
            _set(obj, path, {"zzUnknown": 1})
    elif mutation == "huge-string":
        size = draw(st.sampled_from([300, 5000, 70000, 300000]))
        _set(obj, path, draw(st.sampled_from(["x", "a-", "Z."])) * size)
    elif mutation == "deep-nesting":
        depth = draw(st.integers(20, 120))
        value: Any = "leaf"
        for _ in range(depth):
            value = {"n": value}
        _set(obj, path, value)
    elif mutation == "unicode":
        _set(obj, path, draw(_unicode))
    return obj, mutation, where


def _collide(draw: st.DrawFn, obj: Json) -> tuple[Json, str, str]:
    spec = obj["spec"]
    services = spec.get("services")
    if isinstance(services, dict) and services:
        key = next(iter(services))
        twin = key.upper() if key != key.upper() else key.lower()
        services[twin] = copy.deepcopy(services[key])
        return obj, "colliding-keys", f"spec.services.{twin}"
    # Duplicate env names, or a label twice under two spellings of one key.
    spec["envs"] = [{"name": "DUP", "value": "1"}, {"name": "DUP", "value": "2"}]
    if draw(st.booleans()):
        spec["labels"] = {"App": "a", "app": "b"}
    return obj, "colliding-keys", "spec.envs"


@st.composite
def objects(draw: st.DrawFn, namespace: str, mutate: float = 0.7) -> Drawn:
    """One object of any kind; mutated with probability about `mutate`."""
    kind = draw(st.sampled_from(KINDS))
    base = draw(_BASES[kind](namespace))
    if draw(st.floats(0, 1)) >= mutate:
        return Drawn(kind, base)
    obj, mutation, path = draw(mutated(base))
    return Drawn(kind, obj, mutation, path)
