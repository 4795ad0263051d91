"""The simulated DGDR profiler's rule: what it proposes for an SLA, and when it gives up."""

from __future__ import annotations

import yaml

from hack.localcluster.simulation.profiler import (
    Plan,
    generated_graph,
    model_size,
    output_data,
    plan,
    profile_config,
)


def config(ttft: float, itl: float, model: str = "Qwen/Qwen3-0.6B", gpus: int = 8) -> dict:
    return {"sla": {"ttft": ttft, "itl": itl}, "hardware": {"num_gpus_per_node": gpus},
            "deployment": {"model": model, "namespace": "ns"}, "engine": {"backend": "vllm"}}


def test_model_size_from_the_name() -> None:
    assert model_size("Qwen/Qwen3-0.6B") == 0.6
    assert model_size("meta-llama/Llama-3-70b-Instruct") == 70
    assert model_size("some/model") == 8


def test_parallelism_and_replicas_follow_the_sla() -> None:
    assert plan(config(300, 30)) == Plan(1, 1, 1, 1)
    # 70B: prefill 2800 ms / tp <= 400 -> tp 8; decode 210 ms / tp <= 50 -> tp 8.
    assert plan(config(400, 50, "llama-70B")) == Plan(8, 8, 1, 1)
    assert plan(config(100, 10, "m-8B")) == Plan(4, 4, 2, 2)


def test_infeasible_slas() -> None:
    assert "below the 10 ms floor" in plan(config(5, 10)).error
    assert "itl 1 ms is below the 2 ms floor" in plan(config(100, 1)).error
    assert "with 2 GPUs per node" in plan(config(100, 10, "llama-70B", gpus=2)).error
    ok, data = output_data(config(5, 10), "r")
    assert not ok
    assert yaml.safe_load(data["profiler_status.yaml"])["status"] == "failed"


def test_output_holds_graph_mocker_and_profile_data() -> None:
    ok, data = output_data(config(150, 10), "r")
    assert ok
    docs = list(yaml.safe_load_all(data["config_with_planner.yaml"]))
    assert [d["kind"] for d in docs] == ["DynamoGraphDeployment", "ConfigMap"]
    graph = docs[0]
    assert graph["metadata"] == {"name": "vllm-disagg", "namespace": "ns"}
    image = graph["spec"]["services"]["Frontend"]["extraPodSpec"]["mainContainer"]["image"]
    assert image == "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"
    mocker = next(yaml.safe_load_all(data["mocker_config_with_planner.yaml"]))
    assert all("resources" not in s for s in mocker["spec"]["services"].values())
    assert yaml.safe_load(data["profiler_status.yaml"])["status"] == "success"


def test_workers_image_and_profiling_pods() -> None:
    c = config(150, 10)
    c["deployment"]["dgd_image"] = "my/img:2"
    graph = generated_graph(c, "r", Plan(), mocker=False)
    images = {s["extraPodSpec"]["mainContainer"]["image"]
              for s in graph["spec"]["services"].values()}
    assert images == {"my/img:2"}
    pod = {"spec": {"containers": [{"name": "profiler",
                                    "args": ["--profile-config", "sla: {ttft: 1}"]}]}}
    assert profile_config(pod) == {"sla": {"ttft": 1}}
    assert profile_config({"spec": {"containers": [{"name": "main"}]}}) is None
