"""The DynamoModel controller's pure parts: candidates from slices, incarnations, answers."""

from __future__ import annotations

from typing import Any

from controller.http import HttpAnswer
from reconcilers.model.endpoints import Candidate, candidates, labelled_key, model_key
from reconcilers.model.lora import succeeded
from reconcilers.model.reconciler import incarnation
from reconcilers.model.status import endpoints_status, transition_event

Json = dict[str, Any]


def endpoint(ip: str, pod: str, ready: bool | None = True, kind: str = "Pod") -> Json:
    e: Json = {"addresses": [ip], "targetRef": {"kind": kind, "name": pod, "uid": f"u-{pod}"}}
    if ready is not None:
        e["conditions"] = {"ready": ready}
    return e


def test_candidates_one_per_address_with_readiness_and_services() -> None:
    slices = [
        {"metadata": {"labels": {"kubernetes.io/service-name": "a"}},
         "endpoints": [endpoint("10.0.0.2", "p2", ready=False), endpoint("10.0.0.1", "p1"),
                       endpoint("10.0.0.9", "not-a-pod", kind="Node")]},
        {"metadata": {"labels": {"kubernetes.io/service-name": "b"}},
         "endpoints": [endpoint("10.0.0.1", "p1", ready=None),
                       endpoint("fd00::3", "p3", ready=False)]},
        {"metadata": {"labels": {"kubernetes.io/service-name": "c"}}, "endpoints": None},
    ]
    found, services = candidates(slices)
    assert services == {"a", "b", "c"}
    assert found == [
        Candidate("p1", "http://10.0.0.1:9090", "u-p1", True),
        Candidate("p2", "http://10.0.0.2:9090", "u-p2", False),
        Candidate("p3", "http://[fd00::3]:9090", "u-p3", False),
    ]


def test_models_and_slices_meet_on_namespace_and_hash() -> None:
    dm = {"metadata": {"namespace": "n"}, "spec": {"baseModelName": "Qwen/Qwen3-0.6B"}}
    [key] = model_key(dm)
    slice_ = {"metadata": {"namespace": "n",
                           "labels": {"nvidia.com/dynamo-base-model-hash": key.split("/")[1]}}}
    assert labelled_key(slice_) == [key]
    assert labelled_key({"metadata": {"namespace": "n"}}) == []


def test_incarnation_counts_restarts_of_every_container() -> None:
    pod = {"metadata": {"uid": "u"}, "status": {"containerStatuses": [
        {"restartCount": 2}, {"restartCount": 1}]}}
    assert incarnation(Candidate("p", "a", "u"), pod) == "u/3"
    assert incarnation(Candidate("p", "a", "u"), None) == "u/0"


def test_a_2xx_saying_error_is_a_failure() -> None:
    assert succeeded(HttpAnswer(200, '{"status": "success"}'))
    assert succeeded(HttpAnswer(204, ""))
    assert not succeeded(HttpAnswer(200, '{"status": "error", "message": "x"}'))
    assert not succeeded(HttpAnswer(503, "busy"))


def test_status_and_events_follow_readiness() -> None:
    live: Json = {"metadata": {"generation": 2}, "status": {}}
    eps = [{"address": "a", "podName": "p", "ready": True},
           {"address": "b", "podName": "q", "ready": False}]
    partial = endpoints_status(live, eps, {"s"}, lora=True)
    assert (partial["readyEndpoints"], partial["totalEndpoints"]) == (1, 2)
    event = transition_event({}, partial)
    assert event is not None and (event.warning, event.reason) == (True, "NotReady")
    assert transition_event(partial, endpoints_status({**live, "status": partial}, eps, {"s"},
                                                      lora=True)) is None
    eps[1]["ready"] = True
    done = endpoints_status({**live, "status": partial}, eps, {"s"}, lora=True)
    event = transition_event(partial, done)
    assert event is not None and (event.warning, event.reason) == (False, "EndpointsReady")
    assert all(c["observedGeneration"] == 2 for c in done["conditions"])
