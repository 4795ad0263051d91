"""The generated CRDs installed in the local API server, driven with the real kubectl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client

from api.convert import dump, load_resource
from api.validation import validate
from hack.localcluster.testing import Kubectl
from hack.our_crds import our_crds_yaml

pytestmark = pytest.mark.kubectl

ROOT = Path(__file__).resolve().parents[2]
CRDS = ROOT / "deploy" / "crds"
MANIFESTS = Path(__file__).parent / "manifests"
#: kubectl's names of our kinds in v1alpha1, the version the corpus is written in: a short
#: name reads v1beta1 (discovery's preferred version), which needs the operator's conversion
#: webhook, not running here.
ALPHA = {
    "dgd": "dynamographdeployments.v1alpha1.nvidia.com",
    "dcd": "dynamocomponentdeployments.v1alpha1.nvidia.com",
    "dgdr": "dynamographdeploymentrequests.v1alpha1.nvidia.com",
    "dgdsa": "dynamographdeploymentscalingadapters.v1alpha1.nvidia.com",
    "dm": "dynamomodels.v1alpha1.nvidia.com",
}


def _corpus() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted(MANIFESTS.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
    ]


async def _install(kubectl: Kubectl, api: client.ApiClient, *, as_generated: bool = False
                   ) -> None:
    """Our CRDs, converting through the in-process webhook (as generated: through the
    operator's webhook Service, absent here)."""
    if as_generated:
        await kubectl("apply", "-f", str(CRDS))
    else:
        await kubectl("apply", "-f", "-", stdin=our_crds_yaml())
    await kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=30s")
    core = client.CoreV1Api(api)
    for namespace in sorted({d["metadata"]["namespace"] for d in _corpus()}):
        await core.create_namespace(
            client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace))
        )


async def test_corpus_is_accepted_and_reads_back_losslessly(
    kubectl: Kubectl, api: client.ApiClient
) -> None:
    await _install(kubectl, api)
    await kubectl("apply", "--server-side", "-f", str(MANIFESTS))
    listed = json.loads(await kubectl("get", ",".join(ALPHA.values()), "-A", "-o", "json"))
    assert len(listed["items"]) == len(_corpus())
    for item in listed["items"]:
        # Objects as the server returns them (defaults applied, metadata filled in) load, dump
        # back unchanged and are still valid.
        obj = load_resource(item)
        assert dump(obj) == item
        assert validate(obj) == []


async def test_schema_defaults_are_applied_by_the_server(
    kubectl: Kubectl, api: client.ApiClient
) -> None:
    await _install(kubectl, api)
    await kubectl("apply", "-f", str(MANIFESTS / "dm-base.yaml"))
    await kubectl("apply", "-f", str(MANIFESTS / "dgd-sglang-multinode.yaml"))
    model = json.loads(await kubectl("get", ALPHA["dm"], "qwen3", "-n", "dynamo", "-o", "json"))
    assert model["spec"]["modelType"] == "base"


async def test_printer_columns(kubectl: Kubectl, api: client.ApiClient) -> None:
    await _install(kubectl, api)
    await kubectl("apply", "-f", str(MANIFESTS))
    wide = {
        "dgd": "NAME READY BACKEND AGE STATE REASON RESTART GPUS",
        "dcd": "NAME COMPONENT AVAILABLE AGE BACKEND SERVICE REPLICAS READY-REPLICAS",
        "dgdr": "NAME MODEL BACKEND STATE DGD-STATE AGE DGD",
        "dgdsa": "NAME DGD SERVICE REPLICAS AGE DESIRED LAST-SCALED READY",
        "dm": "NAME BASEMODEL TYPE READY TOTAL AGE MODEL",
    }
    for short, header in wide.items():
        out = await kubectl("get", ALPHA[short], "-n", "dynamo", "-o", "wide")
        assert out.splitlines()[0].split() == header.split(), short
        narrow = await kubectl("get", ALPHA[short], "-n", "dynamo")
        wide_only = len(header.split()) - len(narrow.splitlines()[0].split())
        assert wide_only > 0, short
    # Status is not taken on create; write it the way the adapter controller does.
    name = f"{ALPHA['dgdsa']}/vllm-disagg-planner-vllmdecodeworker"
    status = json.dumps({"status": {"replicas": 3}})
    await kubectl(
        "patch", name, "-n", "dynamo", "--subresource=status", "--type=merge", "-p", status
    )
    row = (await kubectl("get", name, "-n", "dynamo", "--no-headers")).split()
    assert row[:4] == [
        "vllm-disagg-planner-vllmdecodeworker",
        "vllm-disagg-planner",
        "VllmDecodeWorker",
        "3",
    ]


async def test_invalid_objects_are_rejected_with_field_paths(
    kubectl: Kubectl, api: client.ApiClient
) -> None:
    await _install(kubectl, api)
    bad = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "bad", "namespace": "dynamo"},
        "spec": {
            "backendFramework": "onnx",
            "services": {"w": {"replicas": -1, "multinode": {"nodeCount": 1}}},
        },
    }
    result = await kubectl.run("create", "-f", "-", stdin=json.dumps(bad))
    assert result.code != 0
    for path in (
        "spec.backendFramework",
        "spec.services.w.replicas",
        "spec.services.w.multinode.nodeCount",
    ):
        assert path in result.stderr
    too_many = {**bad, "spec": {"services": {f"s{i}": {} for i in range(26)}}}
    result = await kubectl.run("create", "-f", "-", stdin=json.dumps(too_many))
    assert result.code != 0 and "spec.services" in result.stderr


async def test_older_request_shape_is_refused(kubectl: Kubectl, api: client.ApiClient) -> None:
    await _install(kubectl, api)
    result = await kubectl.run("create", "-f", str(MANIFESTS / "legacy"))
    assert result.code != 0
    assert "spec.model" in result.stderr


async def test_scale_subresource_drives_the_adapter(
    kubectl: Kubectl, api: client.ApiClient
) -> None:
    await _install(kubectl, api)
    await kubectl("apply", "-f", str(MANIFESTS / "dgdsa.yaml"))
    name = f"{ALPHA['dgdsa']}/vllm-disagg-planner-vllmdecodeworker"
    await kubectl("scale", name, "-n", "dynamo", "--replicas=5")
    adapter = json.loads(await kubectl("get", name, "-n", "dynamo", "-o", "json"))
    assert adapter["spec"]["replicas"] == 5


async def test_explain_prints_our_descriptions(kubectl: Kubectl, api: client.ApiClient) -> None:
    await _install(kubectl, api)
    # explain trusts kubectl's discovery cache, filled before the CRDs existed; refresh it.
    await kubectl("api-resources", "--api-group=nvidia.com")
    out = await kubectl("explain", "dgd.spec.services", "--api-version=nvidia.com/v1alpha1")
    assert "The components of the graph, by service name." in out
    assert "scalingAdapter" in out


async def test_both_versions_are_served_and_the_hub_is_stored(
    kubectl: Kubectl, api: client.ApiClient
) -> None:
    await _install(kubectl, api, as_generated=True)
    versions = (await kubectl("api-versions")).split()
    assert {"nvidia.com/v1alpha1", "nvidia.com/v1beta1"} <= set(versions)
    crds = json.loads(await kubectl("get", "crd", "-o", "json"))["items"]
    assert len(crds) == 6
    # The DynamoWorkerMetadata has one version, and no conversion.
    [worker_metadata] = [c for c in crds if c["spec"]["names"]["kind"] == "DynamoWorkerMetadata"]
    assert worker_metadata["spec"]["conversion"] == {"strategy": "None"}
    assert worker_metadata["status"]["storedVersions"] == ["v1alpha1"]
    stored = {}
    for crd in crds:
        if crd is worker_metadata:
            continue
        # The server accepted the stanza and defaulted the Service's port.
        service = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
        assert service == {
            "name": "dynamo-operator-webhook-service",
            "namespace": "dynamo-system",
            "path": "/convert",
            "port": 443,
        }
        stored[crd["spec"]["names"]["kind"]] = crd["status"]["storedVersions"]
    assert stored == {
        "DynamoGraphDeployment": ["v1beta1"],
        "DynamoComponentDeployment": ["v1beta1"],
        "DynamoGraphDeploymentRequest": ["v1beta1"],
        "DynamoGraphDeploymentScalingAdapter": ["v1alpha1"],
        "DynamoModel": ["v1alpha1"],
    }
    # A DynamoModel is stored as v1alpha1 and needs no webhook in v1alpha1; v1beta1 needs
    # the operator's, absent here.
    await kubectl("apply", "-f", str(MANIFESTS / "dm-base.yaml"))
    await kubectl("get", "dynamomodels.v1alpha1.nvidia.com", "qwen3", "-n", "dynamo")
    result = await kubectl.run("get", "dynamomodels.v1beta1.nvidia.com", "qwen3", "-n", "dynamo")
    assert result.code != 0
    assert "conversion webhook for nvidia.com/v1alpha1, Kind=DynamoModel failed" in result.stderr


async def test_kubectl_warns_once_of_the_deprecated_v1alpha1(
    kubectl: Kubectl, api: client.ApiClient
) -> None:
    await _install(kubectl, api)
    applied = await kubectl.run("apply", "-f", str(MANIFESTS / "dgd-sglang-multinode.yaml"))
    assert applied.check().stderr.splitlines() == [
        "Warning: nvidia.com/v1alpha1 DynamoGraphDeployment is deprecated;"
        " use nvidia.com/v1beta1 DynamoGraphDeployment"
    ]
    listed = await kubectl.run("get", ALPHA["dgd"], "-A", "-o", "name")
    assert len(listed.check().stderr.splitlines()) == 1
    # The original does not deprecate the DynamoModel's v1alpha1.
    model = await kubectl.run("apply", "-f", str(MANIFESTS / "dm-base.yaml"))
    assert model.check().stderr == ""
