"""kubectl apply of a `kind: List` (what `kubectl get -o yaml` prints for several objects): its
client-side validation reads the OpenAPI v2 protobuf (client-go's `OpenAPISchema()`) and
checks each item against its kind's definition, built-in or custom."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubectl_support import configmap, deployment, manifest, widget

from hack.localcluster.testing import Kubectl

pytestmark = pytest.mark.kubectl

Json = dict[str, Any]

#: kubectl's ending of a validation failure (cmd/util.checkErr of a schema error).
IGNORE_HINT = "; if you choose to ignore these errors, turn validation off with --validate=false\n"


def as_list(*items: Json) -> str:
    return manifest({"apiVersion": "v1", "kind": "List", "items": list(items)})


async def test_a_list_of_configmaps_applies(kubectl: Kubectl) -> None:
    out = await kubectl("apply", "-f", "-", stdin=as_list(configmap("a", {"k": "1"}),
                                                          configmap("b", {"k": "1"})))
    assert out == "configmap/a created\nconfigmap/b created\n"
    out = await kubectl("apply", "--validate=strict", "-f", "-",
                        stdin=as_list(configmap("a", {"k": "2"}), configmap("b", {"k": "1"})))
    assert out == "configmap/a configured\nconfigmap/b unchanged\n"
    live = json.loads(await kubectl("get", "configmap", "a", "-o", "json"))
    assert live["data"] == {"k": "2"}


async def test_an_unknown_field_in_a_list_item_is_refused(kubectl: Kubectl) -> None:
    bad = deployment("web")
    bad["spec"]["foo"] = 1
    bad["spec"]["template"]["spec"]["containers"][0]["bogus"] = True
    result = await kubectl.run("apply", "--validate=strict", "-f", "-",
                               stdin=as_list(configmap("c"), bad))
    assert result.code == 1
    assert result.stderr == (
        'error: error validating "STDIN": error validating data: ['
        'ValidationError(Deployment.spec): unknown field "foo" in'
        " io.k8s.api.apps.v1.DeploymentSpec, ValidationError(Deployment.spec.template.spec"
        '.containers[0]): unknown field "bogus" in io.k8s.api.core.v1.Container]'
        + IGNORE_HINT)
    assert result.stdout == ""  # nothing of the list was applied
    assert (await kubectl.run("get", "configmap", "c")).code == 1

    # A wrong type and a missing required field, as the v2 schema words them.
    bad = deployment("web")
    bad["spec"]["replicas"] = "two"
    del bad["spec"]["selector"]
    result = await kubectl.run("apply", "--validate=strict", "-f", "-", stdin=as_list(bad))
    assert result.stderr == (
        'error: error validating "STDIN": error validating data: ['
        'ValidationError(Deployment.spec.replicas): invalid type for'
        ' io.k8s.api.apps.v1.DeploymentSpec.replicas: got "string", expected "integer",'
        ' ValidationError(Deployment.spec): missing required field "selector" in'
        " io.k8s.api.apps.v1.DeploymentSpec]" + IGNORE_HINT)

    # --validate=false skips it all, and the server's own field validation speaks instead.
    bad = deployment("web")
    bad["spec"]["foo"] = 1
    out = await kubectl("apply", "--validate=false", "-f", "-", stdin=as_list(bad))
    assert out == "deployment.apps/web created\n"


async def test_a_list_item_of_a_custom_kind_follows_its_crd_schema(widgets: Kubectl) -> None:
    kubectl = widgets
    bad = widget("w1", size="small")
    bad["spec"]["colour"] = "red"
    result = await kubectl.run("apply", "--validate=strict", "-f", "-",
                               stdin=as_list(bad, configmap("d")))
    assert result.code == 1
    assert result.stderr == (
        'error: error validating "STDIN": error validating data: ValidationError(Widget.spec):'
        ' unknown field "colour" in com.example.v1.Widget.spec' + IGNORE_HINT)

    good = widget("w1", size="small", color="red", tags=["a"])
    out = await kubectl("apply", "--validate=strict", "-f", "-",
                        stdin=as_list(good, configmap("d")))
    assert out == "widget.example.com/w1 created\nconfigmap/d created\n"


async def test_explain_from_the_v2_document(widgets: Kubectl) -> None:
    kubectl = widgets
    out = await kubectl("explain", "deployment.spec.replicas",
                        "--output=plaintext-openapiv2")
    assert out.startswith("KIND:     Deployment\nVERSION:  apps/v1\n\n"
                          "FIELD:    replicas <integer>\n")
    out = await kubectl("explain", "widget.spec", "--output=plaintext-openapiv2")
    assert out.startswith("KIND:     Widget\nVERSION:  example.com/v1\n\n"
                          "RESOURCE: spec <Object>\n\nDESCRIPTION:\n"
                          "     The desired state of the widget.\n")
    assert "   size\t<string> -required-\n" in out


async def test_get_raw_is_still_json(kubectl: Kubectl) -> None:
    doc = json.loads(await kubectl("get", "--raw", "/openapi/v2"))
    assert doc["swagger"] == "2.0"
    assert "io.k8s.api.core.v1.ConfigMap" in doc["definitions"]
