"""Pods naming a ServiceAccount that does not exist: refused by admission, reported by each
workload controller in its own words, and created once the account appears."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client
from simulation_support import deployment, eventually, install_crds, job, pod_template

NS = "default"
Json = dict[str, Any]


def _refusal(name: str, account: str = "runner") -> str:
    return (f'pods "{name}" is forbidden: error looking up service account {NS}/{account}:'
            f' serviceaccount "{account}" not found')


async def _events(core: client.CoreV1Api, name: str, reason: str) -> list[Any]:
    return [e for e in (await core.list_namespaced_event(NS)).items
            if e.involved_object.name == name and e.reason == reason]


async def _pods(core: client.CoreV1Api, selector: str) -> list[Any]:
    return list((await core.list_namespaced_pod(NS, label_selector=selector)).items)


async def _create_account(core: client.CoreV1Api) -> None:
    await core.create_namespaced_service_account(NS, {"metadata": {"name": "runner"}})


async def test_a_replicaset_reports_the_refusal_and_creates_once_the_account_exists(
        apps: client.AppsV1Api, core: client.CoreV1Api) -> None:
    body = deployment("web", replicas=2)
    body["spec"]["template"]["spec"]["serviceAccountName"] = "runner"
    await apps.create_namespaced_deployment(NS, body)
    rs = await eventually(lambda: _replica_set_failing(apps))
    failure = next(c for c in rs.status.conditions if c.type == "ReplicaFailure")
    generate = f"{rs.metadata.name}-"
    assert (failure.status, failure.reason, failure.message) == (
        "True", "FailedCreate", _refusal(generate))
    events = await eventually(lambda: _events(core, rs.metadata.name, "FailedCreate"))
    assert events[0].type == "Warning"
    assert events[0].message == f"Error creating: {_refusal(generate)}"
    assert events[0].source.component == "replicaset-controller"
    deploy = await eventually(lambda: _deployment_failing(apps))
    mirrored = next(c for c in deploy.status.conditions if c.type == "ReplicaFailure")
    assert (mirrored.reason, mirrored.message) == ("FailedCreate", _refusal(generate))
    assert await _pods(core, "app=web") == []

    await _create_account(core)
    await eventually(lambda: _ready_without_failure(apps))
    assert len(await _pods(core, "app=web")) == 2


async def _replica_set_failing(apps: client.AppsV1Api) -> Any:
    for rs in (await apps.list_namespaced_replica_set(NS, label_selector="app=web")).items:
        if any(c.type == "ReplicaFailure" for c in (rs.status.conditions or [])):
            return rs
    return None


async def _deployment_failing(apps: client.AppsV1Api) -> Any:
    d = await apps.read_namespaced_deployment("web", NS)
    return d if any(c.type == "ReplicaFailure" for c in d.status.conditions or []) else None


async def _ready_without_failure(apps: client.AppsV1Api) -> bool:
    d = await apps.read_namespaced_deployment("web", NS)
    rs = (await apps.list_namespaced_replica_set(NS, label_selector="app=web")).items
    return d.status.ready_replicas == 2 and not any(
        c.type == "ReplicaFailure" for o in [d, *rs] for c in (o.status.conditions or []))


async def test_a_job_reports_the_refusal_and_runs_once_the_account_exists(
        batch: client.BatchV1Api, core: client.CoreV1Api) -> None:
    body = job("once")
    body["spec"]["template"]["spec"]["serviceAccountName"] = "runner"
    await batch.create_namespaced_job(NS, body)
    events = await eventually(lambda: _events(core, "once", "FailedCreate"))
    assert events[0].message == f"Error creating: {_refusal('once-')}"
    assert events[0].source.component == "job-controller"
    assert await _pods(core, "job=once") == []

    await _create_account(core)

    async def complete() -> bool:
        j = await batch.read_namespaced_job_status("once", NS)
        return any(c.type == "Complete" and c.status == "True"
                   for c in j.status.conditions or [])
    await eventually(complete)


async def test_a_leaderworkerset_reports_the_statefulset_refusal(
        sim_api: client.ApiClient, custom: client.CustomObjectsApi,
        core: client.CoreV1Api) -> None:
    await install_crds(sim_api, "leaderworkerset.yaml")
    template = pod_template({"role": "leader"})
    template["spec"]["serviceAccountName"] = "runner"
    await custom.create_namespaced_custom_object(
        "leaderworkerset.x-k8s.io", "v1", NS, "leaderworkersets",
        {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
         "metadata": {"name": "llm"},
         "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2,
                                                          "leaderTemplate": template,
                                                          "workerTemplate": template}}})
    events = await eventually(lambda: _events(core, "llm", "FailedCreate"))
    assert events[0].message == ("create Pod llm-0 in StatefulSet llm failed error: "
                                 + _refusal("llm-0"))
    assert events[0].source.component == "statefulset-controller"

    await _create_account(core)

    async def group() -> bool:
        return len(await _pods(core, "leaderworkerset.sigs.k8s.io/name=llm")) == 2
    await eventually(group)


async def test_a_podclique_reports_the_refusal(
        sim_api: client.ApiClient, custom: client.CustomObjectsApi,
        core: client.CoreV1Api) -> None:
    await install_crds(sim_api, "grove.yaml")
    spec = pod_template({})["spec"]
    spec["serviceAccountName"] = "runner"
    await custom.create_namespaced_custom_object(
        "grove.io", "v1alpha1", NS, "podcliquesets",
        {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "metadata": {"name": "g"},
         "spec": {"replicas": 1, "template": {"cliques": [{
             "name": "frontend", "spec": {"roleName": "frontend", "replicas": 1,
                                          "podSpec": spec}}]}}})
    events = await eventually(lambda: _events(core, "g-0-frontend", "PodCreateFailed"))
    assert events[0].type == "Warning"
    assert events[0].message == f"Error creating pod : {_refusal('g-0-frontend-')}"

    await _create_account(core)

    async def created() -> bool:
        return len(await _pods(core, "grove.io/podclique=g-0-frontend")) == 1
    await eventually(created)
