"""Discovery's preferred version and deprecation warnings: the local API server answers as a
real Kubernetes 1.20 one does, for our five CRDs.

The CRDs are deploy/crds with each version's schema replaced by a schemaless one: 1.20 refuses
some of our schemas (test_realcluster_crds), and neither discovery nor the warnings depend on
them. The same scenario runs against both servers: `/apis` and `/apis/nvidia.com` (v1beta1,
the highest served version, preferred over v1alpha1), the resource lists
of both versions, the `Warning` headers of requests to each version (the deprecated v1alpha1
of DGD, DCD and DGDR on every verb, errors included; none for the others), a CRD whose
deprecated version has no `deprecationWarning` (the server's default text), what kubectl
prints on stderr, and the deprecationWarnings the CRD API refuses. What each answers is
compared.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

import controller.client
from controller.api_warnings import WarningLog, parse_warning_header
from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError, NotFound
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, eventually
from hack.our_crds import with_conversion

pytestmark = pytest.mark.timeout(180, func_only=True)

Json = dict[str, Any]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
DEPLOY_CRDS = sorted((Path(__file__).parents[2] / "deploy" / "crds").glob("*.yaml"))
SCHEMALESS = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _schemaless(crd: Json) -> Json:
    out = copy.deepcopy(crd)
    for version in out["spec"]["versions"]:
        version["schema"] = SCHEMALESS
    return out


def _our_crds() -> list[Json]:
    # The DGD, DCD and DGDR are stored as v1beta1: the scenario's v1alpha1 writes convert,
    # on both servers, through the operator's conversion webhook served in-process.
    return [with_conversion(_schemaless(yaml.safe_load(path.read_text())))
            for path in DEPLOY_CRDS]


def _default_warning_crd() -> Json:
    """A CRD with a deprecated version and no deprecationWarning: the server writes one."""
    versions = [{"name": name, "served": True, "storage": name == "v1", "schema": SCHEMALESS,
                 **({"deprecated": True} if name != "v1" else {})}
                for name in ("v1alpha1", "v1beta1", "v1")]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "pears.fruit.example.com"},
            "spec": {"group": "fruit.example.com", "scope": "Namespaced", "versions": versions,
                     "names": {"plural": "pears", "singular": "pear", "kind": "Pear",
                               "listKind": "PearList"}}}


#: deprecationWarnings the CRD API refuses: (deprecated, text).
REFUSED_WARNINGS = {
    "on a version not deprecated": (False, "old"),
    "empty": (True, ""),
    "too long": (True, "x" * 257),
    "with a tab": (True, "old\tversion"),
    "with a control character": (True, "old\u0085é"),
}


async def _refusal(client: KubeClient, deprecated: bool, text: str) -> Any:
    crd = _default_warning_crd()
    crd["spec"]["versions"][0].update(deprecated=deprecated, deprecationWarning=text)
    try:
        await client.create(CRDS, crd)
    except ApiError as err:
        return err.code, err.message
    await client.delete(CRDS, None, crd["metadata"]["name"])
    return "accepted"


class _Recorder(WarningLog):
    """Keeps every `Warning` header value, not only the first of each text."""

    def __init__(self) -> None:
        super().__init__()
        self.values: list[str] = []

    def observe(self, header_values: Any) -> None:
        self.values.extend(header_values)


def _resources(crd: Json) -> dict[str, Resource]:
    spec = crd["spec"]
    return {v["name"]: Resource(spec["group"], v["name"], spec["names"]["plural"],
                                spec["names"]["kind"]) for v in spec["versions"]}


def _group_entry(doc: Json, name: str) -> Json:
    return next({k: v for k, v in g.items() if k not in ("kind", "apiVersion")}
                for g in doc["groups"] if g["name"] == name)


async def _scenario(kubeconfig: Path, kubectl: Kubectl,
                    monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    recorder = _Recorder()
    monkeypatch.setattr(controller.client, "WARNINGS", recorder)
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    crds = [*_our_crds(), _default_warning_crd()]
    seen: dict[str, Any] = {}

    async def step(name: str, call: Any) -> None:
        recorder.values.clear()
        try:
            await call
            outcome: int | str = "ok"
        except ApiError as err:
            outcome = err.code
        seen[name] = (outcome, [t for v in recorder.values for t in parse_warning_header(v)])

    try:
        for case, (deprecated, text) in REFUSED_WARNINGS.items():
            seen[f"deprecationWarning {case}"] = await _refusal(client, deprecated, text)
        for crd in crds:
            # Other tests of the session's control plane leave our CRDs installed: start over.
            name = crd["metadata"]["name"]
            with contextlib.suppress(NotFound):
                await client.delete(CRDS, None, name)

            async def gone(crd_name: str = name) -> bool:
                try:
                    await client.get(CRDS, None, crd_name)
                except NotFound:
                    return True
                return False

            await eventually(gone, within=60, interval=0.2, what=f"{name} deleted")
            await client.create(CRDS, crd)

        async def served() -> bool:
            try:
                for crd in crds:
                    for resource in _resources(crd).values():
                        await client.list(resource, "default")  # empty: nothing to convert
            except ApiError:
                return False
            return True

        await eventually(served, within=30, interval=0.2, what="the CRDs served")
        seen["/apis"] = _group_entry(await client.request("GET", "/apis"), "nvidia.com")
        group = await client.request("GET", "/apis/nvidia.com")
        seen["/apis/nvidia.com"] = {k: v for k, v in group.items() if k != "apiVersion"}
        for version in ("v1alpha1", "v1beta1"):
            listing = await client.request("GET", f"/apis/nvidia.com/{version}")
            seen[f"/apis/nvidia.com/{version}"] = sorted(
                (r["name"], r.get("kind"), sorted(r.get("verbs", [])), r.get("shortNames"),
                 r.get("storageVersionHash")) for r in listing["resources"])
        seen["/apis/fruit.example.com"] = _group_entry(
            await client.request("GET", "/apis"), "fruit.example.com")
        result = await kubectl.run("get", "dgd", "-o", "name")
        seen["kubectl get dgd, none yet"] = (result.code, result.stdout, result.stderr)
        for crd in crds:
            kind = crd["spec"]["names"]["kind"]
            by_version = _resources(crd)
            oldest = "v1alpha1"
            resource = by_version[oldest]
            obj = {"apiVersion": f"{resource.group}/{oldest}", "kind": kind,
                   "metadata": {"name": "x", "namespace": "default"}, "spec": {}}
            for version, other in by_version.items():
                await step(f"{kind} list {version}, empty", client.list(other, "default"))
            await step(f"{kind} create {oldest}", client.create(resource, obj))
            await step(f"{kind} get {oldest}", client.get(resource, "default", "x"))
            await step(f"{kind} list {oldest}", client.list(resource, "default"))
            await step(f"{kind} get status {oldest}",
                       client.get(resource, "default", "x", subresource="status"))
            await step(f"{kind} patch {oldest}", client.patch(
                resource, "default", "x", {"metadata": {"labels": {"a": "b"}}}))
            await step(f"{kind} create again {oldest}", client.create(resource, obj))
            await step(f"{kind} get missing {oldest}", client.get(resource, "default", "y"))
            plural = f"{resource.plural}.{oldest}.{resource.group}"
            result = await kubectl.run("get", plural, "-o", "name")
            seen[f"kubectl get {plural}"] = (result.code, result.stdout, result.stderr)
            await step(f"{kind} delete {oldest}", client.delete(resource, "default", "x"))
    finally:
        for crd in crds:
            with contextlib.suppress(ApiError):
                await client.delete(CRDS, None, crd["metadata"]["name"])
        await client.close()
    return seen


async def test_versions_answer_as_kubernetes_1_20(
        real_kubeconfig: Path, kubectl: Kubectl, cluster: LocalCluster, kubeconfig: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = await _scenario(real_kubeconfig, kubectl, monkeypatch)
    local = await _scenario(kubeconfig, Kubectl(kubeconfig, tmp_path / "local-cache"),
                            monkeypatch)
    assert local == real
    # What the comparison stands on.
    assert real["/apis"]["preferredVersion"] == {"groupVersion": "nvidia.com/v1beta1",
                                                 "version": "v1beta1"}
    warning = ("nvidia.com/v1alpha1 DynamoGraphDeployment is deprecated; "
               "use nvidia.com/v1beta1 DynamoGraphDeployment")
    assert real["DynamoGraphDeployment get missing v1alpha1"] == (404, [warning])
    assert real["DynamoModel get v1alpha1"] == ("ok", [])
    assert real["Pear get v1alpha1"][1] == [
        "fruit.example.com/v1alpha1 Pear is deprecated; use fruit.example.com/v1 Pear"]
