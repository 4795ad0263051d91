"""kubectl apply (client-side and server-side) and create, as a user runs them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubectl_support import configmap, deployment, manifest, widget

from hack.localcluster.testing import Kubectl

pytestmark = pytest.mark.kubectl

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
LAST_APPLIED_PATH = ("jsonpath={.metadata.annotations."
                     + LAST_APPLIED.replace(".", "\\.") + "}")


def _managers(obj: dict[str, Any]) -> dict[str, str]:
    return {e["manager"]: e["operation"] for e in obj["metadata"]["managedFields"]}


async def test_client_side_apply_keeps_what_others_set(kubectl: Kubectl) -> None:
    v1 = deployment("web", image="nginx:1.25")
    v1["metadata"]["labels"]["tier"] = "front"
    out = await kubectl("apply", "-f", "-", stdin=manifest(v1))
    assert out == "deployment.apps/web created\n"
    applied = json.loads(await kubectl("get", "deployment", "web", "-o", LAST_APPLIED_PATH))
    assert applied == {**v1, "metadata": {**v1["metadata"], "annotations": {},
                                          "namespace": "default"}}

    # Others change the live object: an env var, a label, an annotation.
    assert await kubectl("set", "env", "deployment/web", "FOO=bar") == \
        "deployment.apps/web env updated\n"
    assert await kubectl("label", "deployment", "web", "team=a") == \
        "deployment.apps/web labeled\n"
    assert await kubectl("annotate", "deployment", "web", "note=kept") == \
        "deployment.apps/web annotated\n"

    v2 = deployment("web", image="nginx:1.27")  # new image, label "tier" dropped
    out = await kubectl("apply", "-f", "-", stdin=manifest(v2))
    assert out == "deployment.apps/web configured\n"
    live = json.loads(await kubectl("get", "deployment", "web", "-o", "json",
                                    "--show-managed-fields"))
    container = live["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.27"
    assert container["env"] == [{"name": "FOO", "value": "bar"}]  # merged by name, kept
    assert live["metadata"]["labels"] == {"app": "web", "team": "a"}  # tier pruned
    assert live["metadata"]["annotations"]["note"] == "kept"
    assert json.loads(live["metadata"]["annotations"][LAST_APPLIED])["spec"]["template"][
        "spec"]["containers"][0]["image"] == "nginx:1.27"
    assert _managers(live) == {"kubectl-client-side-apply": "Update", "kubectl-set": "Update",
                               "kubectl-label": "Update", "kubectl-annotate": "Update"}

    out = await kubectl("apply", "-f", "-", stdin=manifest(v2))
    assert out == "deployment.apps/web unchanged\n"


async def test_client_side_apply_of_a_custom_resource(widgets: Kubectl) -> None:
    kubectl = widgets
    w = widget("w1", size="small", color="red", tags=["a", "b"])
    assert await kubectl("apply", "-f", "-", stdin=manifest(w)) == \
        "widget.example.com/w1 created\n"
    await kubectl("label", "widget", "w1", "team=a")
    w["spec"] = {"size": "small", "tags": ["c"]}  # color removed, tags replaced (no SMP keys)
    assert await kubectl("apply", "-f", "-", stdin=manifest(w)) == \
        "widget.example.com/w1 configured\n"
    live = json.loads(await kubectl("get", "wg", "w1", "-o", "json"))
    assert live["spec"] == {"size": "small", "tags": ["c"], "replicas": 1}
    assert live["metadata"]["labels"] == {"team": "a"}
    assert await kubectl("apply", "-f", "-", stdin=manifest(w)) == \
        "widget.example.com/w1 unchanged\n"


async def test_server_side_apply_conflicts_and_force(kubectl: Kubectl) -> None:
    cm = configmap("cfg", {"a": "1", "b": "1"})
    for _ in range(2):  # a repeated apply reports the same
        out = await kubectl("apply", "--server-side", "-f", "-", stdin=manifest(cm))
        assert out == "configmap/cfg serverside-applied\n"

    # Another manager applies a different value of a field kubectl owns: a conflict.
    other = configmap("cfg", {"a": "2"})
    result = await kubectl.run("apply", "--server-side", "--field-manager=other", "-f", "-",
                               stdin=manifest(other))
    assert result.code == 1
    assert result.stderr.startswith(
        'error: Apply failed with 1 conflict: conflict with "kubectl": .data.a\n'
        "Please review the fields above--they currently have other managers.")
    assert "--force-conflicts" in result.stderr
    assert json.loads(await kubectl("get", "cm", "cfg", "-o", "json"))["data"] == {
        "a": "1", "b": "1"}

    # The same value is no conflict: both managers own it.
    same = configmap("cfg", {"b": "1"})
    await kubectl("apply", "--server-side", "--field-manager=third", "-f", "-",
                  stdin=manifest(same))

    out = await kubectl("apply", "--server-side", "--field-manager=other",
                        "--force-conflicts", "-f", "-", stdin=manifest(other))
    assert out == "configmap/cfg serverside-applied\n"
    live = json.loads(await kubectl("get", "cm", "cfg", "-o", "json", "--show-managed-fields"))
    assert live["data"] == {"a": "2", "b": "1"}
    owned = {e["manager"]: e["fieldsV1"] for e in live["metadata"]["managedFields"]}
    assert owned == {"kubectl": {"f:data": {"f:b": {}}}, "other": {"f:data": {"f:a": {}}},
                     "third": {"f:data": {"f:b": {}}}}
    assert {e["operation"] for e in live["metadata"]["managedFields"]} == {"Apply"}


async def test_server_side_apply_of_a_custom_resource(widgets: Kubectl) -> None:
    kubectl = widgets
    w = widget("w1", size="small")
    out = await kubectl("apply", "--server-side", "-f", "-", stdin=manifest(w))
    assert out == "widget.example.com/w1 serverside-applied\n"
    result = await kubectl.run("apply", "--server-side", "--field-manager=ops", "-f", "-",
                               stdin=manifest(widget("w1", size="large")))
    assert result.code == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.size' in result.stderr
    await kubectl("apply", "--server-side", "--field-manager=ops", "--force-conflicts", "-f",
                  "-", stdin=manifest(widget("w1", size="large")))
    assert await kubectl("get", "wg", "w1", "-o", "jsonpath={.spec.size}") == "large"


async def test_apply_of_an_invalid_custom_resource_prints_the_422(widgets: Kubectl) -> None:
    kubectl = widgets
    bad = widget("bad", size="huge", replicas=-1)
    for args in (("apply",), ("apply", "--server-side"), ("create",)):
        result = await kubectl.run(*args, "-f", "-", stdin=manifest(bad))
        assert result.code == 1, args
        lines = result.stderr.splitlines()
        assert lines[0] == 'The Widget "bad" is invalid: ', args
        assert sorted(lines[1:]) == [
            # the scale subresource's own check, as a real API server adds it
            "* .spec.replicas: Invalid value: -1: should be a non-negative integer",
            "* spec.replicas: Invalid value: -1: spec.replicas in body should be greater"
            " than or equal to 0",
            '* spec.size: Unsupported value: "huge": supported values: "small", "medium",'
            ' "large"',
        ], args
    result = await kubectl.run("apply", "-f", "-", stdin=manifest(widget("bad", color="red")))
    assert result.code == 1
    assert result.stderr == 'The Widget "bad" is invalid: spec.size: Required value\n'
    assert (await kubectl.run("get", "wg", "bad")).code == 1


async def test_create(widgets: Kubectl) -> None:
    kubectl = widgets
    docs = manifest(widget("w1", size="small"), configmap("cm1", {"k": "v"}),
                    deployment("web"))
    out = await kubectl("create", "-f", "-", stdin=docs)
    assert out == ("widget.example.com/w1 created\nconfigmap/cm1 created\n"
                   "deployment.apps/web created\n")
    result = await kubectl.run("create", "-f", "-", stdin=manifest(widget("w1", size="small")))
    assert result.code == 1
    assert result.stderr == ('Error from server (AlreadyExists): error when creating "STDIN":'
                             ' widgets.example.com "w1" already exists\n')
    # The generators send protobuf bodies (client-go's typed clients).
    assert await kubectl("create", "configmap", "cm2", "--from-literal=a=b") == \
        "configmap/cm2 created\n"
    assert await kubectl("get", "cm", "cm2", "-o", "jsonpath={.data.a}") == "b"
    assert await kubectl("create", "deployment", "api", "--image=nginx:1.25",
                         "--replicas=2") == "deployment.apps/api created\n"
    assert await kubectl("get", "deploy", "api", "-o",
                         "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}"
                         ) == "2 nginx:1.25"
    # `create --dry-run=server` goes through validation and defaulting but stores nothing.
    out = await kubectl("create", "--dry-run=server", "-o", "jsonpath={.spec.replicas}",
                        "-f", "-", stdin=manifest(widget("w2", size="small")))
    assert out == "1"
    assert (await kubectl.run("get", "wg", "w2")).code == 1
