"""kubectl patch (merge, json, strategic) and scale, on a Deployment and on the Widget CR."""

from __future__ import annotations

import json

import pytest
from kubectl_support import deployment, manifest, table, widget

from hack.localcluster.testing import Kubectl

pytestmark = pytest.mark.kubectl

CR_PATCH_TYPES = ("application/json-patch+json, application/merge-patch+json,"
                  " application/apply-patch+yaml")


async def test_patch_a_deployment(kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=manifest(deployment("web")))
    # Strategic (the default): containers merge by name, so the port survives.
    out = await kubectl("patch", "deployment", "web", "-p",
                        '{"spec":{"template":{"spec":{"containers":'
                        '[{"name":"app","image":"nginx:1.27"}]}}}}')
    assert out == "deployment.apps/web patched\n"
    live = json.loads(await kubectl("get", "deploy", "web", "-o", "json"))
    container = live["spec"]["template"]["spec"]["containers"][0]
    assert (container["image"], container["ports"][0]["containerPort"]) == ("nginx:1.27", 80)
    assert live["metadata"]["generation"] == 2

    # A JSON merge patch replaces the list wholesale.
    await kubectl("patch", "deployment", "web", "--type=merge", "-p",
                  '{"spec":{"template":{"spec":{"containers":'
                  '[{"name":"app","image":"nginx:1.28"}]}}}}')
    container = json.loads(await kubectl("get", "deploy", "web", "-o", "json"))[
        "spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.28" and "ports" not in container

    out = await kubectl("patch", "deployment", "web", "--type=json", "-p",
                        '[{"op":"replace","path":"/spec/replicas","value":5}]')
    assert out == "deployment.apps/web patched\n"
    # The same patch again changes nothing, and kubectl says so.
    out = await kubectl("patch", "deployment", "web", "--type=json", "-p",
                        '[{"op":"replace","path":"/spec/replicas","value":5}]')
    assert out == "deployment.apps/web patched (no change)\n"

    result = await kubectl.run("patch", "deployment", "web", "--type=json", "-p",
                               '[{"op":"test","path":"/spec/replicas","value":1}]')
    # kube-apiserver drops the JSON patch library's message (a generic 422 with no causes).
    assert (result.code, result.stderr) == (1, "The request is invalid: the server rejected our"
                                            " request due to an error in our request\n")
    result = await kubectl.run("patch", "deployment", "web", "--type=merge", "-p",
                               '{"spec":{"replicas":-1}}')
    assert result.code == 1
    assert result.stderr.startswith('The Deployment "web" is invalid: spec.replicas: Invalid'
                                    " value: -1: must be greater than or equal to 0")


async def test_patch_a_custom_resource(widgets: Kubectl) -> None:
    kubectl = widgets
    await kubectl("apply", "-f", "-", stdin=manifest(widget("w1", size="small", tags=["a"])))
    out = await kubectl("patch", "widget", "w1", "--type=merge", "-p",
                        '{"spec":{"color":"green"}}')
    assert out == "widget.example.com/w1 patched\n"
    out = await kubectl("patch", "widget", "w1", "--type=json", "-p",
                        '[{"op":"add","path":"/spec/tags/-","value":"b"},'
                        '{"op":"replace","path":"/spec/size","value":"large"}]')
    assert out == "widget.example.com/w1 patched\n"
    spec = json.loads(await kubectl("get", "wg", "w1", "-o", "json"))["spec"]
    assert spec == {"size": "large", "color": "green", "tags": ["a", "b"], "replicas": 1}

    # Strategic merge patch does not exist for custom resources: the server answers 415.
    for args in (("-p",), ("--type=strategic", "-p")):
        result = await kubectl.run("patch", "widget", "w1", *args, '{"spec":{"color":"x"}}')
        assert result.code == 1
        assert result.stderr == (
            "error: application/strategic-merge-patch+json is not supported by"
            " example.com/v1, Kind=Widget: the body of the request was in an unknown format"
            f" - accepted media types include: {CR_PATCH_TYPES}\n")

    # The schema still applies to a patched object.
    result = await kubectl.run("patch", "widget", "w1", "--type=merge", "-p",
                               '{"spec":{"size":"tiny"}}')
    assert result.code == 1
    assert result.stderr == ('The Widget "w1" is invalid: spec.size: Unsupported value:'
                             ' "tiny": supported values: "small", "medium", "large"\n')

    # The status subresource takes status changes; the main resource ignores them.
    await kubectl("patch", "widget", "w1", "--type=merge", "-p", '{"status":{"phase":"A"}}')
    assert await kubectl("get", "wg", "w1", "-o", "jsonpath={.status}") == ""
    out = await kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
                        '{"status":{"phase":"B"}}')
    assert out == "widget.example.com/w1 patched\n"
    assert await kubectl("get", "wg", "w1", "-o", "jsonpath={.status.phase}") == "B"

    result = await kubectl.run("patch", "wg", "nope", "--type=merge", "-p", "{}")
    assert result.code == 1
    assert result.stderr == 'Error from server (NotFound): widgets.example.com "nope" not found\n'


async def test_scale(widgets: Kubectl) -> None:
    kubectl = widgets
    await kubectl("apply", "-f", "-", stdin=manifest(deployment("web"),
                                                     widget("w1", size="small")))
    assert await kubectl("scale", "deployment", "web", "--replicas=4") == \
        "deployment.apps/web scaled\n"
    assert await kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}") == "4"
    # --current-replicas is a precondition.
    result = await kubectl.run("scale", "deployment", "web", "--current-replicas=2",
                               "--replicas=1")
    assert (result.code, result.stderr) == (1, "error: Expected replicas to be 2, was 4\n")

    assert await kubectl("scale", "widget", "w1", "--replicas=3") == \
        "widget.example.com/w1 scaled\n"
    assert table(await kubectl("get", "wg", "w1"))[1][:3] == ["w1", "small", "3"]
    scale = json.loads(await kubectl(
        "get", "--raw", "/apis/example.com/v1/namespaces/default/widgets/w1/scale"))
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 3}
    assert scale["status"] == {"replicas": 0}
    # The scale subresource reads status from the paths the CRD names.
    await kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
                  '{"status":{"replicas":3,"selector":"app=w1"}}')
    scale = json.loads(await kubectl(
        "get", "--raw", "/apis/example.com/v1/namespaces/default/widgets/w1/scale"))
    assert scale["status"] == {"replicas": 3, "selector": "app=w1"}
    # Scaling through --subresource=scale with a patch works the same.
    out = await kubectl("patch", "widget", "w1", "--subresource=scale", "--type=merge", "-p",
                        '{"spec":{"replicas":5}}')
    assert out == "scale.autoscaling/w1 patched\n"  # kubectl names the Scale it got back
    assert await kubectl("get", "wg", "w1", "-o", "jsonpath={.spec.replicas}") == "5"
    out = await kubectl("scale", "widget", "--all", "--replicas=0")
    assert out == "widget.example.com/w1 scaled\n"
