"""The cache holds workloads without their pod templates, keeping what readiness reads;
EndpointSlices serving no model as stubs; and which status changes are only progress."""

from __future__ import annotations

from typing import Any

from reconcilers.component.workload_cache import trim_deployment, trim_leader_worker_set


def test_deployment_keeps_counts_status_and_template_annotations() -> None:
    deployment: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "w", "generation": 3, "managedFields": [{"manager": "x"}],
                     "annotations": {"nvidia.com/last-applied-hash": "h"}},
        "spec": {"replicas": 2, "paused": False, "selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"annotations": {"nvidia.com/restartAt": "r1"}},
                              "spec": {"containers": [{"name": "main", "image": "i"}]}}},
        "status": {"observedGeneration": 3, "availableReplicas": 2},
    }
    trimmed = trim_deployment(deployment)
    assert trimmed["spec"]["template"] == {"metadata": {"annotations": {
        "nvidia.com/restartAt": "r1"}}}
    assert trimmed["spec"]["replicas"] == 2 and trimmed["status"] == deployment["status"]
    assert "managedFields" not in trimmed["metadata"]
    assert trimmed["metadata"]["annotations"] == {"nvidia.com/last-applied-hash": "h"}
    # The informer's object is not changed in place.
    assert "spec" in deployment["spec"]["template"]


def test_leader_worker_set_keeps_replicas_and_status() -> None:
    lws = {"metadata": {"name": "w-0"},
           "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {}}},
           "status": {"readyReplicas": 1}}
    trimmed = trim_leader_worker_set(lws)
    assert trimmed["spec"] == {"replicas": 1}
    assert trimmed["status"] == {"readyReplicas": 1}


def test_endpoint_slices_without_a_model_are_held_as_stubs() -> None:
    from reconcilers.model.endpoints import trim_endpoint_slice
    meta: dict[str, Any] = {"name": "s", "namespace": "n", "uid": "u", "resourceVersion": "7",
            "labels": {"kubernetes.io/service-name": "svc"}, "managedFields": [{}]}
    plain: dict[str, Any] = {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta,
        "endpoints": [{"addresses": ["10.0.0.1"]}], "ports": [{"port": 80}]}
    assert trim_endpoint_slice(plain) == {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "s", "namespace": "n", "uid": "u", "resourceVersion": "7"}}
    labelled = {**plain, "metadata": {**meta, "labels": {
        "nvidia.com/dynamo-base-model-hash": "abc"}}}
    kept = trim_endpoint_slice(labelled)
    assert kept["endpoints"] == plain["endpoints"] and kept["ports"] == plain["ports"]
    assert "managedFields" not in kept["metadata"]


def test_progress_is_messages_and_moving_counts_only() -> None:
    from reconcilers.machinery.progress import only_progress
    cond: dict[str, Any] = {"type": "Available", "status": "False", "reason": "DeploymentNotReady",
            "message": "waiting for Deployment w spec update to be observed"}
    old: dict[str, Any] = {"observedGeneration": 1, "conditions": [cond],
           "service": {"replicas": 0, "updatedReplicas": 0, "readyReplicas": 0}}
    moved: dict[str, Any] = {**old, "conditions": [{**cond, "message": "0/1 replicas available"}],
             "service": {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 0}}
    assert only_progress(old, moved)
    assert not only_progress(old, old)
    ready = {**moved, "service": {**moved["service"], "readyReplicas": 1}}
    assert not only_progress(old, ready)
    reason = {**moved, "conditions": [{**cond, "reason": "ImagePullBackOff"}]}
    assert not only_progress(old, reason)
    assert not only_progress(old, {**moved, "observedGeneration": 2})
