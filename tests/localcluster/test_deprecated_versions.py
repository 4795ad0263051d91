"""A CRD version marked deprecated: every request to it earns its `Warning` header, whatever
the verb, subresource or answer, as kube-apiserver's CRD handler sends it; kubectl prints it
once on stderr. Requests to the other versions earn none."""

from __future__ import annotations

import json
import ssl
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from hack.localcluster.deprecation import (
    WARNING_KEY,
    add_warning,
    default_warning,
    warning_errors,
    warning_of,
)
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl

Json = dict[str, Any]
GROUP = "fruit.example.com"
TEXT = 'fruit.example.com/v1alpha1 Apple is "old"; use fruit.example.com/v1 Apple'
HEADER = '299 - "fruit.example.com/v1alpha1 Apple is \\"old\\"; use fruit.example.com/v1 Apple"'


def spec(*versions: Json) -> Json:
    return {"group": GROUP, "names": {"kind": "Apple", "plural": "apples"},
            "versions": list(versions)}


def test_the_text_of_a_deprecated_version() -> None:
    alpha = {"name": "v1alpha1", "served": True, "deprecated": True}
    beta = {"name": "v1beta1", "served": True}
    v1 = {"name": "v1", "served": False}
    assert warning_of(spec(alpha, beta, v1), beta) is None
    assert warning_of(spec(alpha, beta, v1), {**alpha, "deprecationWarning": "x"}) == "x"
    assert warning_of(spec(alpha, beta, v1), {**alpha, "deprecationWarning": ""}) == ""
    # The default names the highest served version above it that is not deprecated.
    assert warning_of(spec(alpha, beta, v1), alpha) == (
        "fruit.example.com/v1alpha1 Apple is deprecated; use fruit.example.com/v1beta1 Apple")
    assert default_warning(spec(alpha, {**beta, "deprecated": True}), "v1beta1") == (
        "fruit.example.com/v1beta1 Apple is deprecated")
    assert default_warning(spec(alpha, beta), "v1beta1") == (
        "fruit.example.com/v1beta1 Apple is deprecated")  # v1alpha1 is lower


def crd() -> Json:
    schema = {"openAPIV3Schema": {"type": "object",
                                  "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"apples.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": "apples", "singular": "apple", "kind": "Apple",
                           "listKind": "AppleList"},
                 "versions": [
                     {"name": "v1alpha1", "served": True, "storage": True, "schema": schema,
                      "deprecated": True, "deprecationWarning": TEXT,
                      "subresources": {"status": {}}},
                     {"name": "v1", "served": True, "storage": False, "schema": schema,
                      "subresources": {"status": {}}}]}}


def apple(name: str, version: str = "v1alpha1") -> Json:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Apple",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"color": "red"}}


@pytest.mark.kubectl
async def test_every_request_to_the_deprecated_version_is_warned(
        cluster: LocalCluster, kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=json.dumps(crd()))
    await kubectl("wait", "--for=condition=Established", f"crd/apples.{GROUP}")
    context = ssl.create_default_context(cadata=cluster.certs.ca_pem.decode())
    headers = {"Authorization": f"Bearer {cluster.config.token}"}
    alpha = f"{cluster.url}/apis/{GROUP}/v1alpha1/namespaces/default/apples"
    v1 = f"{cluster.url}/apis/{GROUP}/v1/namespaces/default/apples"
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:

        async def warnings(method: str, url: str, **kwargs: Any) -> tuple[int, list[str]]:
            async with session.request(method, url, ssl=context, **kwargs) as response:
                await response.read()
                return response.status, response.headers.getall("Warning", [])

        merge = {"Content-Type": "application/merge-patch+json"}
        for method, url, kwargs, status in [
            ("POST", alpha, {"json": apple("a")}, 201),
            ("GET", alpha, {}, 200),
            ("GET", f"{alpha}/a", {}, 200),
            ("PATCH", f"{alpha}/a", {"data": '{"spec":{"color":"green"}}', "headers": merge},
             200),
            ("GET", f"{alpha}/a/status", {}, 200),
            ("GET", f"{alpha}/missing", {}, 404),  # errors too
            ("GET", f"{alpha}/a/scale", {}, 404),  # a subresource not served
            ("POST", alpha, {"json": apple("a")}, 409),
            ("GET", alpha, {"params": {"watch": "true", "timeoutSeconds": "1"}}, 200),
            ("DELETE", f"{alpha}/a", {}, 200),
        ]:
            assert await warnings(method, url, **kwargs) == (status, [HEADER]), (method, url)
        for method, url, kwargs, status in [
            ("POST", v1, {"json": apple("b", "v1")}, 201),
            ("GET", v1, {}, 200),
            ("GET", v1, {"params": {"watch": "true", "timeoutSeconds": "1"}}, 200),
        ]:
            assert await warnings(method, url, **kwargs) == (status, []), (method, url)


@pytest.mark.kubectl
async def test_kubectl_prints_the_warning_once(kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=json.dumps(crd()))
    await kubectl("wait", "--for=condition=Established", f"crd/apples.{GROUP}")
    applied = await kubectl.run("apply", "-f", "-", stdin=json.dumps(apple("a")))
    assert applied.check().stderr.splitlines() == [f"Warning: {TEXT}"]
    listed = await kubectl.run("get", f"apples.v1alpha1.{GROUP}", "-o", "name")
    assert listed.check().stderr.splitlines() == [f"Warning: {TEXT}"]
    assert listed.stdout.split() == [f"apple.{GROUP}/a"]
    # The preferred version, v1, is not deprecated: no warning.
    plain = await kubectl.run("get", "apples", "-o", "name")
    assert plain.check().stderr == ""


async def test_the_deprecation_warning_goes_before_the_later_ones_once() -> None:
    request = make_mocked_request("GET", "/")
    request[WARNING_KEY] = TEXT
    response = web.Response(headers={"Warning": '299 - "from a webhook"'})
    response.headers.add("Warning", HEADER)  # the same text again: sent once
    await add_warning(request, response)
    assert response.headers.getall("Warning") == [HEADER, '299 - "from a webhook"']
    untouched = web.Response(headers={"Warning": '299 - "x"'})
    await add_warning(make_mocked_request("GET", "/"), untouched)
    assert untouched.headers.getall("Warning") == ['299 - "x"']


def test_what_the_crd_api_refuses_in_a_deprecation_warning() -> None:
    assert warning_errors({"deprecated": True}) == []
    assert warning_errors({"deprecated": True, "deprecationWarning": "fine"}) == []
    assert warning_errors({"deprecationWarning": "x"}) == [
        "can only be set for deprecated versions"]
    assert warning_errors({"deprecated": True, "deprecationWarning": ""}) == [
        "must not be an empty string"]
    assert warning_errors({"deprecated": True, "deprecationWarning": "é" * 129}) == [
        "must be <= 256 characters long"]  # bytes, as Go counts them
    assert warning_errors({"deprecated": True, "deprecationWarning": "éa\tb"}) == [
        "must only contain printable UTF-8 characters; non-printable character found at"
        " index 3"]


@pytest.mark.kubectl
async def test_a_refused_deprecation_warning(kubectl: Kubectl) -> None:
    bad = crd()
    bad["spec"]["versions"][1]["deprecationWarning"] = "v1 is \"fine\"\t"
    result = await kubectl.run("apply", "-f", "-", stdin=json.dumps(bad))
    assert result.code != 0
    assert ('spec.versions[1].deprecationWarning: Invalid value: "v1 is \\"fine\\"\\t": can only'
            " be set for deprecated versions") in result.stderr
