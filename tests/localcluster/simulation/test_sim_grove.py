"""Grove PodCliqueSets, PodCliqueScalingGroups and PodCliques, once hack/crds/grove.yaml is in."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client
from simulation_support import eventually, install_crds, pod_template, status_condition

NS = "default"
GROUP, VERSION = "grove.io", "v1alpha1"
MERGE = "application/merge-patch+json"
Json = dict[str, Any]


def clique(name: str, replicas: int, image: str = "dynamo:1") -> Json:
    return {"name": name, "labels": {"nvidia.com/dynamo-component": name},
            "annotations": {"nvidia.com/restartAt": "never"},
            "spec": {"roleName": name, "replicas": replicas,
                     "podSpec": pod_template({}, image=image)["spec"]}}


def pcs(name: str, image: str = "dynamo:1") -> Json:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PodCliqueSet",
            "metadata": {"name": name},
            "spec": {"replicas": 1, "template": {
                "cliques": [clique("frontend", 2, image), clique("worker-ldr", 1, image),
                            clique("worker-wkr", 2, image)],
                "podCliqueScalingGroups": [{"name": "worker",
                                            "cliqueNames": ["worker-ldr", "worker-wkr"]}]}}}


async def get(custom: client.CustomObjectsApi, plural: str, name: str) -> Json | None:
    try:
        obj: Json = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, plural, name)
    except client.ApiException:
        return None
    return obj


async def settled(custom: client.CustomObjectsApi, plural: str, name: str,
                  **want: int) -> Json | None:
    obj = await get(custom, plural, name)
    if obj is None:
        return None
    status = obj.get("status") or {}
    if status.get("observedGeneration") != obj["metadata"]["generation"]:
        return None
    return obj if all(status.get(k) == v for k, v in want.items()) else None


async def test_podcliqueset_makes_cliques_groups_and_pods(
        sim_api: client.ApiClient, custom: client.CustomObjectsApi,
        core: client.CoreV1Api) -> None:
    await install_crds(sim_api, "grove.yaml")
    await custom.create_namespaced_custom_object(GROUP, VERSION, NS, "podcliquesets", pcs("g"))
    top = await eventually(lambda: settled(custom, "podcliquesets", "g", replicas=1,
                                           availableReplicas=1, updatedReplicas=1))
    assert top["status"]["hpaPodSelector"] == \
        "app.kubernetes.io/managed-by=grove-operator,app.kubernetes.io/part-of=g"

    frontend = await eventually(lambda: settled(custom, "podcliques", "g-0-frontend",
                                                readyReplicas=2))
    assert frontend["spec"]["replicas"] == 2 and frontend["spec"]["roleName"] == "frontend"
    assert frontend["metadata"]["labels"]["nvidia.com/dynamo-component"] == "frontend"
    assert frontend["metadata"]["annotations"]["nvidia.com/restartAt"] == "never"
    fs = frontend["status"]
    assert (fs["replicas"], fs["updatedReplicas"], fs["scheduledReplicas"]) == (2, 2, 2)
    assert fs["hpaPodSelector"] == "grove.io/podclique=g-0-frontend"
    breached = status_condition(frontend, "MinAvailableBreached")
    assert breached is not None
    assert (breached["status"], breached["reason"]) == ("False", "SufficientReadyPods")

    group = await eventually(lambda: settled(custom, "podcliquescalinggroups", "g-0-worker",
                                             replicas=1, availableReplicas=1,
                                             updatedReplicas=1))
    assert group["spec"] == {"replicas": 1, "minAvailable": 1,
                             "cliqueNames": ["worker-ldr", "worker-wkr"]}
    assert group["status"]["selector"] == "grove.io/podcliquescalinggroup=g-0-worker"
    wkr = await eventually(lambda: settled(custom, "podcliques", "g-0-worker-0-worker-wkr",
                                           readyReplicas=2))
    assert wkr["metadata"]["labels"]["grove.io/podcliquescalinggroup"] == "g-0-worker"
    assert wkr["metadata"]["ownerReferences"][0]["kind"] == "PodCliqueScalingGroup"

    pods = (await core.list_namespaced_pod(
        NS, label_selector="grove.io/podclique=g-0-worker-0-worker-wkr")).items
    assert len(pods) == 2
    p = sorted(pods, key=lambda p: p.metadata.labels["grove.io/podclique-pod-index"])[1]
    env = {e.name: e.value for e in p.spec.containers[0].env}
    assert env["GROVE_PCLQ_POD_INDEX"] == "1" and env["GROVE_PCSG_NAME"] == "g-0-worker"
    assert env["GROVE_HEADLESS_SERVICE"] == "g-0.default.svc.cluster.local"
    assert (p.spec.hostname, p.spec.subdomain) == ("g-0-worker-0-worker-wkr-1", "g-0")
    assert p.metadata.labels["app.kubernetes.io/part-of"] == "g"
    headless = await core.read_namespaced_service("g-0", NS)
    assert headless.spec.cluster_ip == "None"


async def test_scaling_children_through_the_scale_subresource(
        sim_api: client.ApiClient, custom: client.CustomObjectsApi) -> None:
    await install_crds(sim_api, "grove.yaml")
    await custom.create_namespaced_custom_object(GROUP, VERSION, NS, "podcliquesets", pcs("s"))
    await eventually(lambda: settled(custom, "podcliquesets", "s", availableReplicas=1))
    await custom.patch_namespaced_custom_object_scale(
        GROUP, VERSION, NS, "podcliques", "s-0-frontend", {"spec": {"replicas": 3}},
        _content_type=MERGE)
    await custom.patch_namespaced_custom_object_scale(
        GROUP, VERSION, NS, "podcliquescalinggroups", "s-0-worker", {"spec": {"replicas": 2}},
        _content_type=MERGE)
    await eventually(lambda: settled(custom, "podcliques", "s-0-frontend", readyReplicas=3))
    await eventually(lambda: settled(custom, "podcliquescalinggroups", "s-0-worker",
                                     replicas=2, availableReplicas=2))
    assert await get(custom, "podcliques", "s-0-worker-1-worker-ldr") is not None

    # A template change rolls pods over but keeps the replicas set through the scale.
    body = pcs("s", image="dynamo:2")
    await custom.patch_namespaced_custom_object(GROUP, VERSION, NS, "podcliquesets", "s",
                                                {"spec": body["spec"]}, _content_type=MERGE)
    frontend = await eventually(lambda: settled(custom, "podcliques", "s-0-frontend",
                                                readyReplicas=3, updatedReplicas=3,
                                                replicas=3))
    assert frontend["spec"]["podSpec"]["containers"][0]["image"] == "dynamo:2"
    await eventually(lambda: settled(custom, "podcliquesets", "s", updatedReplicas=1,
                                     availableReplicas=1))
