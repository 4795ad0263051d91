"""The DynamoWorkerMetadata CRD: generated from its model as the original ships it (one version,
namespaced, `dwm`, `spec.data` a required free-form object, no status, no conversion), written
with the others, and served by the local API server once installed as the tests install ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from api.crd import build_crds, worker_metadata_crd
from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.metrics import Metrics
from controller.resource import Resource
from hack import gen_crds
from hack.localcluster.server import LocalCluster
from hack.our_crds import install_our_crds

Json = dict[str, Any]
UPSTREAM = Path("/work/shared/upstream/crd__nvidia.com_dynamoworkermetadatas.yaml")
DWM = Resource("nvidia.com", "v1alpha1", "dynamoworkermetadatas", "DynamoWorkerMetadata")
FILE = "nvidia.com_dynamoworkermetadatas.yaml"


def _shape(schema: Json) -> Json:
    """A schema without its descriptions (ours are reworded), for comparison."""
    out: Json = {}
    for key, value in schema.items():
        if key == "description":
            continue
        if key == "properties":
            out[key] = {name: _shape(sub) for name, sub in value.items()}
        else:
            out[key] = value
    return out


def test_names_scope_and_single_version() -> None:
    crd = worker_metadata_crd()
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "dynamoworkermetadatas.nvidia.com"
    assert spec["group"] == "nvidia.com" and spec["scope"] == "Namespaced"
    assert spec["names"] == {"kind": "DynamoWorkerMetadata",
                             "listKind": "DynamoWorkerMetadataList",
                             "plural": "dynamoworkermetadatas", "shortNames": ["dwm"],
                             "singular": "dynamoworkermetadata"}
    [version] = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert "subresources" not in version and "conversion" not in spec
    assert version["additionalPrinterColumns"] == [
        {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"}]


@pytest.mark.skipif(not UPSTREAM.is_file(), reason="the original's CRD is not at hand")
def test_schema_and_names_are_the_originals() -> None:
    [theirs] = [d for d in yaml.safe_load_all(UPSTREAM.read_text()) if d]
    ours = worker_metadata_crd()
    assert ours["spec"]["names"] == theirs["spec"]["names"]
    assert ours["spec"]["scope"] == theirs["spec"]["scope"]
    [their_version] = theirs["spec"]["versions"]
    [our_version] = ours["spec"]["versions"]
    for key in ("name", "served", "storage", "additionalPrinterColumns"):
        assert our_version[key] == their_version[key], key
    assert _shape(our_version["schema"]["openAPIV3Schema"]) == _shape(
        their_version["schema"]["openAPIV3Schema"])


def test_written_beside_the_five_and_not_among_the_converted() -> None:
    assert yaml.safe_load(gen_crds.render()[FILE]) == worker_metadata_crd()
    assert "dynamoworkermetadatas.nvidia.com" not in {
        c["metadata"]["name"] for c in build_crds()}
    assert (gen_crds.OUTPUT_DIR / FILE).read_text() == gen_crds.render()[FILE]
    assert (gen_crds.CHART_FILES_DIR / FILE).read_text() == gen_crds.render()[FILE]


async def test_served_once_installed_as_the_tests_install_ours(
        cluster: LocalCluster, kubeconfig: Path) -> None:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    try:
        await install_our_crds(client)
        body: Json = {
            "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoWorkerMetadata",
            "metadata": {"name": "worker-0", "namespace": "default"},
            "spec": {"data": {"endpoints": {"ns/backend/generate": {"instance_id": 7}},
                              "model_cards": {}}}}
        created = await client.create(DWM, body)
        # Free-form data is kept whole.
        assert created["spec"]["data"] == body["spec"]["data"]
        listed = await client.list(DWM, "default")
        assert [o["metadata"]["name"] for o in listed["items"]] == ["worker-0"]
        with pytest.raises(ApiError) as refused:
            await client.create(DWM, {**body, "spec": {},
                                      "metadata": {"name": "no-data", "namespace": "default"}})
        assert refused.value.code == 422
    finally:
        await client.close()
