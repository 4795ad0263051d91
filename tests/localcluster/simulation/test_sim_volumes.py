"""Pods whose ConfigMaps, Secrets or claims are missing: FailedMount and ContainerCreating,
CreateContainerConfigError, an unschedulable pod for a missing claim; and each pod starts
once what it needs appears."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client
from simulation_support import eventually, pod

NS = "default"
Json = dict[str, Any]


async def _events(core: client.CoreV1Api, name: str, reason: str) -> list[Any]:
    return [e for e in (await core.list_namespaced_event(NS)).items
            if e.involved_object.name == name and e.reason == reason]


async def _running(core: client.CoreV1Api, name: str) -> Any:
    p = await core.read_namespaced_pod(name, NS)
    return p if p.status.phase == "Running" else None


async def _waiting(core: client.CoreV1Api, name: str, reason: str) -> Any:
    p = await core.read_namespaced_pod(name, NS)
    for cs in p.status.container_statuses or []:
        if cs.state.waiting is not None and cs.state.waiting.reason == reason:
            return p
    return None


def _with_volumes(name: str, volumes: list[Json], **container: Any) -> Json:
    body = pod(name)
    body["spec"]["volumes"] = volumes
    body["spec"]["containers"][0]["volumeMounts"] = [
        {"name": v["name"], "mountPath": f"/{v['name']}"} for v in volumes]
    body["spec"]["containers"][0].update(container)
    return body


async def test_a_missing_configmap_volume_keeps_the_pod_creating_until_it_appears(
        core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, _with_volumes("web", [
        {"name": "config", "configMap": {"name": "web-config"}}]))
    events = await eventually(lambda: _events(core, "web", "FailedMount"))
    assert events[0].type == "Warning"
    assert events[0].source.component == "kubelet"
    assert events[0].message == ('MountVolume.SetUp failed for volume "config" :'
                                 ' configmap "web-config" not found')
    p = await eventually(lambda: _waiting(core, "web", "ContainerCreating"))
    assert p.status.phase == "Pending"
    assert p.status.pod_ip is None
    await eventually(lambda: _count_over(core, "web", "FailedMount", 1))

    await core.create_namespaced_config_map(NS, {"metadata": {"name": "web-config"},
                                                 "data": {"a": "1"}})
    await eventually(lambda: _running(core, "web"))


async def _count_over(core: client.CoreV1Api, name: str, reason: str, n: int) -> bool:
    return any((e.count or 1) > n for e in await _events(core, name, reason))


async def test_secret_and_projected_volumes_report_each_missing_source(
        core: client.CoreV1Api) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "present"},
                                                 "data": {"a": "1"}})
    await core.create_namespaced_pod(NS, _with_volumes("keys", [
        {"name": "ssh", "secret": {"secretName": "ssh-keys"}},
        {"name": "bundle", "projected": {"sources": [
            {"configMap": {"name": "absent"}},
            {"secret": {"name": "hidden"}},
            {"configMap": {"name": "present", "items": [{"key": "b", "path": "b"}]}},
            {"configMap": {"name": "maybe", "optional": True}}]}},
        {"name": "keyed", "configMap": {"name": "present",
                                        "items": [{"key": "b", "path": "b"}]}},
        {"name": "optional", "secret": {"secretName": "nothing", "optional": True}}]))

    async def all_reported() -> set[str] | None:
        messages = {e.message for e in await _events(core, "keys", "FailedMount")}
        return messages if len(messages) == 3 else None
    messages = await eventually(all_reported)
    assert messages == {
        'MountVolume.SetUp failed for volume "ssh" : secret "ssh-keys" not found',
        'MountVolume.SetUp failed for volume "bundle" : [configmap "absent" not found,'
        ' secret "hidden" not found, configmap references non-existent config key: b]',
        'MountVolume.SetUp failed for volume "keyed" :'
        ' configmap references non-existent config key: b'}


async def test_missing_env_sources_give_create_container_config_error(
        core: client.CoreV1Api) -> None:
    for name, env, message in [
        ("cm-key", {"env": [{"name": "A", "valueFrom": {"configMapKeyRef": {
            "name": "settings", "key": "a"}}}]}, 'configmap "settings" not found'),
        ("secret-key", {"env": [{"name": "T", "valueFrom": {"secretKeyRef": {
            "name": "token", "key": "t"}}}]}, 'secret "token" not found'),
        ("env-from", {"envFrom": [{"configMapRef": {"name": "maybe", "optional": True}},
                                  {"secretRef": {"name": "creds"}}]},
         'secret "creds" not found'),
    ]:
        body = pod(name)
        body["spec"]["containers"][0].update(env)
        await core.create_namespaced_pod(NS, body)
        p = await eventually(lambda n=name: _waiting(core, n, "CreateContainerConfigError"))
        waiting = p.status.container_statuses[0].state.waiting
        assert waiting.message == message
        assert p.status.phase == "Pending"
        failed = await eventually(lambda n=name: _events(core, n, "Failed"))
        assert (failed[0].type, failed[0].message) == ("Warning", f"Error: {message}")


async def test_a_missing_key_waits_until_the_configmap_has_it(core: client.CoreV1Api) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "settings"},
                                                 "data": {"other": "1"}})
    body = pod("keyed")
    body["spec"]["containers"][0]["env"] = [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "a"}}},
        {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "b",
                                                        "optional": True}}}]
    await core.create_namespaced_pod(NS, body)
    p = await eventually(lambda: _waiting(core, "keyed", "CreateContainerConfigError"))
    assert p.status.container_statuses[0].state.waiting.message == (
        f"couldn't find key a in ConfigMap {NS}/settings")

    await core.patch_namespaced_config_map("settings", NS, {"data": {"a": "x"}})
    await eventually(lambda: _running(core, "keyed"))


async def test_a_missing_claim_leaves_the_pod_unschedulable_until_it_exists(
        core: client.CoreV1Api) -> None:
    await core.create_namespaced_pod(NS, _with_volumes("db", [
        {"name": "data", "persistentVolumeClaim": {"claimName": "db-data"}}]))

    async def unschedulable() -> Any:
        p = await core.read_namespaced_pod("db", NS)
        for c in p.status.conditions or []:
            if c.type == "PodScheduled" and c.reason == "Unschedulable":
                return c
        return None
    scheduled = await eventually(unschedulable)
    assert scheduled.message == (
        '0/4 nodes are available: persistentvolumeclaim "db-data" not found. preemption:'
        ' 0/4 nodes are available: 4 Preemption is not helpful for scheduling.')
    failed = await eventually(lambda: _events(core, "db", "FailedScheduling"))
    assert failed[0].message == scheduled.message

    await core.create_namespaced_persistent_volume_claim(NS, {
        "metadata": {"name": "db-data"},
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}})
    await eventually(lambda: _running(core, "db"))
