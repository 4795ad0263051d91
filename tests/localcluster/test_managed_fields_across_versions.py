"""managedFields across the versions of a kind with a conversion webhook, as kube-apiserver's
field manager keeps them: each entry stays at the version it was written in, and a write in
another version takes from it what changed there, the objects converted by the webhook. The
kind is the toy Widget (`hack.localcluster.conversion.toy_webhook`: v1 `spec.size` is v2
`spec.dimension`), served by the local cluster over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.managed_fields import owners_of
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.conversion.toy_webhook import (
    V1,
    V2,
    WIDGETS_V1,
    WIDGETS_V2,
    ToyConversionWebhook,
    widget,
    widget_crd,
)
from hack.localcluster.server import LocalCluster
from hack.our_crds import install_our_crds

Json = dict[str, Any]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
APPLY = "application/apply-patch+yaml"


@pytest.fixture
async def toy() -> AsyncIterator[ToyConversionWebhook]:
    hook = await ToyConversionWebhook().start()
    try:
        yield hook
    finally:
        await hook.stop()
        hook.tls.close()


@pytest.fixture
async def kube(kubeconfig: Path, cluster: LocalCluster,
               toy: ToyConversionWebhook) -> AsyncIterator[KubeClient]:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    try:
        await client.create(CRDS, widget_crd(toy.client_config()))
        await cluster.settle()
        yield client
    finally:
        await client.close()


def _path(resource: Resource, name: str = "") -> str:
    base = f"/apis/{resource.group}/{resource.version}/namespaces/default/{resource.plural}"
    return f"{base}/{name}" if name else base


async def _write(kube: KubeClient, resource: Resource, name: str, body: Any, manager: str,
                 content_type: str = "application/merge-patch+json", **params: str) -> Json:
    result: Json = await kube.request("PATCH", _path(resource, name), body=body,
                                      content_type=content_type,
                                      query=[("fieldManager", manager), *params.items()])
    return result


async def _create(kube: KubeClient, resource: Resource, obj: Json, manager: str) -> Json:
    result: Json = await kube.request("POST", _path(resource), body=obj,
                                      query=[("fieldManager", manager)])
    return result


def _entries(obj: Json) -> dict[tuple[str, str, str], Json]:
    return {(e["manager"], e["operation"], e["apiVersion"]): e["fieldsV1"]
            for e in obj["metadata"].get("managedFields") or ()}


def _size_owners(obj: Json) -> set[str]:
    return owners_of(obj, ("spec", "size"), ("spec", "dimension"))


async def test_an_edit_in_v1_takes_the_field_from_its_v2_writer(kube: KubeClient) -> None:
    await _create(kube, WIDGETS_V2, widget("a", V2, dimension=1), "beta")
    edited = await _write(kube, WIDGETS_V1, "a", {"spec": {"size": 2}}, "alpha")
    # beta keeps spec itself (a map of a schemaless kind is owned as such), not its dimension.
    assert _entries(edited) == {
        ("beta", "Update", V2): {"f:spec": {}},
        ("alpha", "Update", V1): {"f:spec": {"f:size": {}}}}
    assert _size_owners(edited) == {"alpha"}


async def test_an_edit_in_v2_takes_the_field_from_its_v1_writer(kube: KubeClient) -> None:
    await _create(kube, WIDGETS_V1, widget("a", size=1, color="red"), "alpha")
    edited = await _write(kube, WIDGETS_V2, "a", {"spec": {"dimension": 5}}, "beta")
    assert _entries(edited) == {
        ("alpha", "Update", V1): {"f:spec": {".": {}, "f:color": {}}},
        ("beta", "Update", V2): {"f:spec": {"f:dimension": {}}}}
    # Read in v1, the entries are the same: each keeps the version it was written in.
    read = await kube.get(WIDGETS_V1, "default", "a")
    assert read["metadata"]["managedFields"] == edited["metadata"]["managedFields"]


async def test_an_unchanged_field_stays_with_its_writer_in_the_other_version(
        kube: KubeClient) -> None:
    await _create(kube, WIDGETS_V2, widget("a", V2, dimension=1), "beta")
    edited = await _write(kube, WIDGETS_V1, "a", {"spec": {"color": "blue"}}, "alpha")
    assert _size_owners(edited) == {"beta"}
    assert _entries(edited)[("alpha", "Update", V1)] == {"f:spec": {"f:color": {}}}


async def test_an_apply_in_v1_conflicts_with_a_v2_owner_in_its_words(kube: KubeClient) -> None:
    await _create(kube, WIDGETS_V2, widget("a", V2, dimension=1), "beta")
    with pytest.raises(ApiError) as refused:
        await _write(kube, WIDGETS_V1, "a", widget("a", size=3), "applier", APPLY)
    assert refused.value.code == 409
    assert refused.value.message == ('Apply failed with 1 conflict: conflict with "beta" using '
                                      f'{V2}: .spec.dimension')
    assert refused.value.status["details"]["causes"] == [{
        "reason": "FieldManagerConflict", "message": f'conflict with "beta" using {V2}',
        "field": ".spec.dimension"}]
    forced = await _write(kube, WIDGETS_V1, "a", widget("a", size=3), "applier", APPLY,
                          force="true")
    assert _entries(forced) == {("beta", "Update", V2): {"f:spec": {}},
                                ("applier", "Apply", V1): {"f:spec": {".": {}, "f:size": {}}}}


async def test_the_same_value_applied_in_another_version_is_shared(kube: KubeClient) -> None:
    await _write(kube, WIDGETS_V2, "a", widget("a", V2, dimension=2), "beta", APPLY)
    shared = await _write(kube, WIDGETS_V1, "a", widget("a", size=2), "alpha", APPLY)
    assert _size_owners(shared) == {"alpha", "beta"}


async def test_an_applier_that_moves_to_another_version_prunes_there(kube: KubeClient) -> None:
    await _write(kube, WIDGETS_V2, "a", widget("a", V2, dimension=2, color="red"), "app",
                 APPLY)
    moved = await _write(kube, WIDGETS_V1, "a", widget("a", size=2), "app", APPLY)
    assert moved["spec"] == {"size": 2}
    assert _entries(moved) == {("app", "Apply", V1): {"f:spec": {".": {}, "f:size": {}}}}


async def test_a_field_another_version_owns_survives_a_prune(kube: KubeClient) -> None:
    await _write(kube, WIDGETS_V1, "a", widget("a", size=2, color="red"), "app", APPLY)
    await _write(kube, WIDGETS_V2, "a", widget("a", V2, color="red"), "beta", APPLY)
    pruned = await _write(kube, WIDGETS_V1, "a", widget("a", size=2), "app", APPLY)
    assert pruned["spec"] == {"size": 2, "color": "red"}


async def test_writes_that_cannot_take_a_field_convert_nothing(
        kube: KubeClient, toy: ToyConversionWebhook) -> None:
    """A status write cannot take the spec a v1 entry owns, and a write that changes nothing
    takes nothing: neither asks the webhook (kube-apiserver converts for them anyway, which
    only the webhook's call count would show)."""
    await _create(kube, WIDGETS_V1, widget("a", size=1), "alpha")  # stored as v2
    toy.converted.clear()
    status = await kube.request("PATCH", _path(WIDGETS_V2, "a") + "/status",
                                body={"status": {"phase": "up"}},
                                content_type="application/merge-patch+json")
    assert status["status"] == {"phase": "up"}
    same = await _write(kube, WIDGETS_V2, "a", {"spec": {"dimension": 1}}, "beta")
    assert _size_owners(same) == {"alpha"}
    assert toy.converted == []
    changed = await _write(kube, WIDGETS_V2, "a", {"spec": {"dimension": 2}}, "beta")
    assert _size_owners(changed) == {"beta"}
    assert toy.converted  # the v1 entry's objects, converted to see what it loses


# --- our DynamoGraphDeployment: a typed schema, converted by the operator's webhook ---------

GRAPHS_ALPHA = Resource("nvidia.com", "v1alpha1", "dynamographdeployments",
                        "DynamoGraphDeployment")
GRAPHS_BETA = Resource("nvidia.com", "v1beta1", "dynamographdeployments",
                       "DynamoGraphDeployment")
REPLICAS = (("spec", "services", "decode", "replicas"),
            ("spec", "components", {"name": "decode"}, "replicas"))


@pytest.fixture
async def graphs(kubeconfig: Path, cluster: LocalCluster) -> AsyncIterator[KubeClient]:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    try:
        await install_our_crds(client, names=["dynamographdeployments.nvidia.com"])
        await cluster.settle()
        yield client
    finally:
        await client.close()


def _graph(labels: Json | None = None, **decode: Any) -> Json:
    meta: Json = {"name": "g", **({"labels": labels} if labels else {})}
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": meta, "spec": {"backendFramework": "vllm", "services": {
                "decode": {"componentType": "worker", **decode}}}}


async def _adapter_write(kube: KubeClient, replicas: int) -> Json:
    result: Json = await kube.patch(GRAPHS_BETA, "default", "g", [
        {"op": "test", "path": "/spec/components/0/name", "value": "decode"},
        {"op": "replace", "path": "/spec/components/0/replicas", "value": replicas}],
        patch_type="json", field_manager="adapter")
    return result


async def test_a_dgd_edit_in_v1alpha1_takes_the_replicas_the_adapter_wrote(
        graphs: KubeClient) -> None:
    await _write(graphs, GRAPHS_ALPHA, "g", _graph(replicas=1), "user", APPLY)
    written = await _adapter_write(graphs, 3)
    assert owners_of(written, *REPLICAS) == {"adapter"}
    assert _entries(written)[("adapter", "Update", "nvidia.com/v1beta1")] == {"f:spec": {
        "f:components": {'k:{"name":"decode"}': {"f:replicas": {}}}}}
    edited = await _write(graphs, GRAPHS_ALPHA, "g", {"spec": {"services": {"decode": {
        "replicas": 7}}}}, "hand-edit")
    assert owners_of(edited, *REPLICAS) == {"hand-edit"}
    assert ("adapter", "Update", "nvidia.com/v1beta1") not in _entries(edited)


async def test_a_dgd_apply_in_v1alpha1_conflicts_with_the_adapter_at_its_path(
        graphs: KubeClient) -> None:
    await _write(graphs, GRAPHS_ALPHA, "g", _graph(replicas=1), "user", APPLY)
    await _adapter_write(graphs, 3)
    with pytest.raises(ApiError) as refused:
        await _write(graphs, GRAPHS_ALPHA, "g", _graph(replicas=5), "user", APPLY)
    assert refused.value.message == (
        'Apply failed with 1 conflict: conflict with "adapter" using nvidia.com/v1beta1: '
        '.spec.components[name="decode"].replicas')


async def test_a_dgd_label_dropped_in_one_version_is_pruned_across_versions(
        graphs: KubeClient) -> None:
    """The applier's last set holds a label; pruning converts objects that lost their
    metadata (a named field owned whole) through the webhook, which needs their name."""
    await _write(graphs, GRAPHS_ALPHA, "g", _graph({"team": "a"}, replicas=1), "user", APPLY)
    await _adapter_write(graphs, 3)
    pruned = await _write(graphs, GRAPHS_ALPHA, "g", _graph(), "user", APPLY)
    assert "labels" not in pruned["metadata"] or "team" not in pruned["metadata"]["labels"]
    # The replicas the user applied before are gone from its set, the adapter's stay.
    assert pruned["spec"]["services"]["decode"]["replicas"] == 3
    assert owners_of(pruned, *REPLICAS) == {"adapter"}
