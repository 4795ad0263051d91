"""kubectl wait (condition, jsonpath, create, delete) and delete with each cascade policy."""

from __future__ import annotations

import json

import pytest
from kubectl_support import Background, configmap, deployment, manifest, widget

from hack.localcluster.testing import Kubectl

pytestmark = pytest.mark.kubectl


async def _status(kubectl: Kubectl, name: str, status: dict[str, object]) -> None:
    await kubectl("patch", "widget", name, "--subresource=status", "--type=merge",
                  "-p", json.dumps({"status": status}))


async def test_wait_for_conditions_and_jsonpath(widgets: Kubectl) -> None:
    # The CRD's Established condition was waited for by the fixture; waiting again is
    # immediate.
    kubectl = widgets
    out = await kubectl("wait", "--for=condition=Established", "crd", "--all")
    assert out == "customresourcedefinition.apiextensions.k8s.io/widgets.example.com" \
        " condition met\n"
    assert await kubectl("wait", "--for=condition=NamesAccepted=True",
                         "crd/widgets.example.com") == \
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com condition met\n"

    await kubectl("apply", "-f", "-", stdin=manifest(widget("w1", size="small")))
    async with Background(kubectl, "wait", "--for=jsonpath={.status.phase}=Ready",
                          "--timeout=20s", "widget/w1", logged=True) as wait:
        await wait.logged()
        await _status(kubectl, "w1", {"phase": "Starting"})
        await _status(kubectl, "w1", {"phase": "Ready"})
        assert await wait.finish() == (0, "widget.example.com/w1 condition met\n", "")

    async with Background(kubectl, "wait", "--for=condition=Available", "--timeout=20s",
                          "wg/w1", logged=True) as wait:
        await wait.logged()
        await _status(kubectl, "w1", {"conditions": [
            {"type": "Available", "status": "False", "reason": "Starting",
             "lastTransitionTime": "2025-01-01T00:00:00Z"}]})
        await _status(kubectl, "w1", {"conditions": [
            {"type": "Available", "status": "True", "reason": "Up",
             "lastTransitionTime": "2025-01-01T00:00:01Z"}]})
        assert await wait.finish() == (0, "widget.example.com/w1 condition met\n", "")

    result = await kubectl.run("wait", "--for=jsonpath={.status.phase}=Gone", "--timeout=1s",
                               "widget/w1")
    assert result.code == 1
    assert result.stderr == "error: timed out waiting for the condition on widgets/w1\n"
    result = await kubectl.run("wait", "--for=condition=Available", "--timeout=1s",
                               "widget/nope")
    assert result.code == 1
    assert result.stderr == 'Error from server (NotFound): widgets.example.com "nope" not found\n'


async def test_wait_for_create_and_delete(widgets: Kubectl) -> None:
    kubectl = widgets
    async with Background(kubectl, "wait", "--for=create", "--timeout=20s", "widget/w2",
                          logged=True) as wait:
        await wait.logged("404 Not Found")  # it polls until the object exists
        await kubectl("apply", "-f", "-", stdin=manifest(widget("w2", size="small")))
        assert await wait.finish() == (0, "widget.example.com/w2 condition met\n", "")

    # A finalizer holds the object: wait --for=delete returns once it is really gone.
    await kubectl("patch", "widget", "w2", "--type=merge",
                  "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    out = await kubectl("delete", "widget", "w2", "--wait=false")
    async with Background(kubectl, "wait", "--for=delete", "--timeout=20s", "widget/w2",
                          logged=True) as wait:
        await wait.logged()
        assert out == 'widget.example.com "w2" deleted from default namespace\n'
        live = json.loads(await kubectl("get", "wg", "w2", "-o", "json"))
        assert live["metadata"]["deletionTimestamp"]
        assert live["metadata"]["finalizers"] == ["example.com/hold"]
        await kubectl("patch", "widget", "w2", "--type=json",
                      "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
        assert await wait.finish() == (0, "widget.example.com/w2 condition met\n", "")
    # Waiting for something already gone succeeds at once.
    assert await kubectl("wait", "--for=delete", "widget/w2", "--timeout=1s") == ""


async def _owner_with_dependents(kubectl: Kubectl, owner: str) -> str:
    await kubectl("apply", "-f", "-", stdin=manifest(widget(owner, size="small")))
    uid = await kubectl("get", "widget", owner, "-o", "jsonpath={.metadata.uid}")
    ref = {"apiVersion": "example.com/v1", "kind": "Widget", "name": owner, "uid": uid,
           "blockOwnerDeletion": True, "controller": True}
    await kubectl("apply", "-f", "-", stdin=manifest(
        *(configmap(f"{owner}-{i}", {"i": str(i)}, ownerReferences=[ref]) for i in (1, 2))))
    return uid


async def _names(kubectl: Kubectl, kind: str) -> list[str]:
    return (await kubectl("get", kind, "-o", "name")).split()


async def test_delete_cascade_background(widgets: Kubectl) -> None:
    kubectl = widgets
    await _owner_with_dependents(kubectl, "bg")
    out = await kubectl("delete", "widget", "bg", "--cascade=background")
    assert out == 'widget.example.com "bg" deleted from default namespace\n'
    assert await _names(kubectl, "widgets") == []
    # The garbage collector removes the dependents afterwards.
    out = await kubectl("wait", "--for=delete", "configmap/bg-1", "configmap/bg-2",
                        "--timeout=10s")
    assert await _names(kubectl, "configmaps") == []


async def test_delete_cascade_foreground(widgets: Kubectl) -> None:
    kubectl = widgets
    await _owner_with_dependents(kubectl, "fg")
    # With the default --wait, kubectl returns once the owner is gone, i.e. after its
    # dependents.
    out = await kubectl("delete", "widget", "fg", "--cascade=foreground")
    assert out == 'widget.example.com "fg" deleted from default namespace\n'
    assert await _names(kubectl, "widgets") == []
    assert await _names(kubectl, "configmaps") == []

    # A dependent held by a finalizer keeps the owner in foreground deletion.
    await _owner_with_dependents(kubectl, "held")
    await kubectl("patch", "configmap", "held-1", "--type=merge",
                  "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    await kubectl("delete", "widget", "held", "--cascade=foreground", "--wait=false")
    owner = json.loads(await kubectl("get", "widget", "held", "-o", "json"))
    assert owner["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert owner["metadata"]["deletionTimestamp"]
    await kubectl("wait", "--for=delete", "configmap/held-2", "--timeout=10s")
    assert json.loads(await kubectl("get", "cm", "held-1", "-o", "json"))["metadata"][
        "deletionTimestamp"]
    async with Background(kubectl, "wait", "--for=delete", "--timeout=20s",
                          "widget/held", logged=True) as wait:
        await wait.logged()
        await kubectl("patch", "configmap", "held-1", "--type=json",
                      "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
        assert await wait.finish() == (0, "widget.example.com/held condition met\n", "")
    assert await _names(kubectl, "configmaps") == []


async def test_delete_cascade_orphan(widgets: Kubectl) -> None:
    kubectl = widgets
    await _owner_with_dependents(kubectl, "or")
    out = await kubectl("delete", "widget", "or", "--cascade=orphan")
    assert out == 'widget.example.com "or" deleted from default namespace\n'
    assert await _names(kubectl, "widgets") == []
    # The dependents stay, without the reference to their deleted owner.
    assert await _names(kubectl, "configmaps") == ["configmap/or-1", "configmap/or-2"]
    for name in ("or-1", "or-2"):
        live = json.loads(await kubectl("get", "cm", name, "-o", "json"))
        assert "ownerReferences" not in live["metadata"]


async def test_delete_by_file_and_missing(kubectl: Kubectl) -> None:
    docs = manifest(deployment("web"), configmap("cfg"))
    await kubectl("apply", "-f", "-", stdin=docs)
    out = await kubectl("delete", "-f", "-", stdin=docs)
    assert out == ('deployment.apps "web" deleted from default namespace\n'
                   'configmap "cfg" deleted from default namespace\n')
    result = await kubectl.run("delete", "-f", "-", stdin=docs)
    assert result.code == 1
    assert result.stderr.splitlines() == [
        'Error from server (NotFound): error when deleting "STDIN": deployments.apps "web"'
        " not found",
        'Error from server (NotFound): error when deleting "STDIN": configmaps "cfg"'
        " not found"]
    assert await kubectl("delete", "-f", "-", "--ignore-not-found", stdin=docs) == ""
    result = await kubectl.run("delete", "configmap", "nope")
    assert (result.code, result.stderr) == (
        1, 'Error from server (NotFound): configmaps "nope" not found\n')
