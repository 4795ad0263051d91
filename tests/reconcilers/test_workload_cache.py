"""The cache holds workloads without their pod templates, keeping what readiness reads."""

from __future__ import annotations

from reconcilers.component.workload_cache import trim_deployment, trim_leader_worker_set


def test_deployment_keeps_counts_status_and_template_annotations() -> None:
    deployment = {
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
