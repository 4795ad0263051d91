"""The local API server calls admission webhooks as kube-apiserver does, seen through kubectl."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from webhook_support import TestWebhook, allow, configuration, patch_of, webhook

from controller.client import KubeClient
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl
from hack.localcluster.users import service_account

Json = dict[str, Any]
VALIDATING = "ValidatingWebhookConfiguration"
MUTATING = "MutatingWebhookConfiguration"


def _cm(name: str, labels: dict[str, str] | None = None, **data: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "labels": labels or {}}, "data": data})


def _deny(message: str, code: int = 403) -> Any:
    return lambda _: {"allowed": False, "status": {"code": code, "message": message,
                                                   "reason": "Forbidden"}}


@pytest.fixture
async def hook(tmp_path: Path) -> AsyncIterator[TestWebhook]:
    server = await TestWebhook(tmp_path).start()
    try:
        yield server
    finally:
        await server.stop()


async def _install(kubectl: Kubectl, kind: str, name: str, *webhooks: Json) -> None:
    await kubectl("apply", "-f", "-", stdin=configuration(kind, name, list(webhooks)))


def _url(hook: TestWebhook, path: str = "/admit") -> Json:
    return {"url": hook.url(path), "caBundle": hook.ca_bundle}


async def test_a_denial_reads_as_kube_apiservers_and_the_request_carries_the_review(
        kubectl: Kubectl, hook: TestWebhook) -> None:
    hook.answer = _deny("spec.x: is immutable")
    await _install(kubectl, VALIDATING, "v", webhook("deny.example.com", _url(hook),
                                                     resources=["configmaps"]))
    result = await kubectl.run("apply", "-f", "-", stdin=_cm("a", k="1"))
    assert result.code == 1
    assert ('Error from server (Forbidden): error when creating "STDIN": admission webhook '
            '"deny.example.com" denied the request: spec.x: is immutable') in result.stderr
    (request,) = hook.requests
    assert request["operation"] == "CREATE"
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request["namespace"] == "default" and request["name"] == "a"
    assert request["userInfo"]["username"] == "kubernetes-admin"
    assert request["object"]["data"] == {"k": "1"} and request["oldObject"] is None
    assert request["dryRun"] is False
    assert request["options"]["kind"] == "CreateOptions"
    assert request["query"] == {"timeout": "2s"}
    assert "a" not in await kubectl("get", "configmaps", "-o", "name")


async def test_rules_match_operations_resources_and_subresources(
        kubectl: Kubectl, hook: TestWebhook) -> None:
    await kubectl("create", "deployment", "d", "--image=nginx")
    hook.answer = _deny("no scaling")
    await _install(kubectl, VALIDATING, "v", webhook(
        "scale.example.com", _url(hook), groups=["apps"], resources=["deployments/scale"],
        operations=["UPDATE"]))
    await kubectl("label", "deployment", "d", "x=1")  # the resource itself: not matched
    assert hook.requests == []
    result = await kubectl.run("scale", "deployment", "d", "--replicas=3")
    assert 'admission webhook "scale.example.com" denied the request: no scaling' in \
        result.stderr
    (request,) = hook.requests
    assert request["subResource"] == "scale"
    assert request["kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert request["object"]["spec"]["replicas"] == 3
    assert request["oldObject"]["spec"]["replicas"] == 1

    hook.requests.clear()
    hook.answer = allow
    await _install(kubectl, VALIDATING, "v", webhook(
        "all.example.com", _url(hook), groups=["*"], resources=["*"], operations=["*"]))
    await kubectl("scale", "deployment", "d", "--replicas=2")  # "*" leaves out subresources
    await kubectl("label", "deployment", "d", "y=1")
    await kubectl("delete", "deployment", "d")
    assert [(r["operation"], r.get("subResource")) for r in hook.requests] == [
        ("UPDATE", None), ("DELETE", None)]
    assert hook.requests[1]["object"] is None
    assert hook.requests[1]["oldObject"]["metadata"]["name"] == "d"
    assert hook.requests[1]["options"]["kind"] == "DeleteOptions"


async def test_namespace_and_object_selectors(kubectl: Kubectl, hook: TestWebhook) -> None:
    await kubectl("create", "namespace", "team-a")
    await kubectl("label", "namespace", "team-a", "checked=yes")
    await kubectl("create", "namespace", "team-b")
    hook.answer = _deny("checked")
    await _install(kubectl, VALIDATING, "v", webhook(
        "ns.example.com", _url(hook), resources=["configmaps"],
        namespaceSelector={"matchLabels": {"checked": "yes"}},
        objectSelector={"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}))
    assert (await kubectl.run("-n", "team-a", "apply", "-f", "-", stdin=_cm("c"))).code == 1
    await kubectl("-n", "team-b", "apply", "-f", "-", stdin=_cm("c"))
    await kubectl("-n", "team-a", "apply", "-f", "-", stdin=_cm("d", {"skip": "1"}))
    assert len(hook.requests) == 1
    # kubernetes.io/metadata.name is always there to select a namespace by name.
    await _install(kubectl, VALIDATING, "v", webhook(
        "ns.example.com", _url(hook), resources=["configmaps"],
        namespaceSelector={"matchExpressions": [{
            "key": "kubernetes.io/metadata.name", "operator": "NotIn",
            "values": ["team-b"]}]}))
    await kubectl("-n", "team-b", "apply", "-f", "-", stdin=_cm("e"))
    assert (await kubectl.run("-n", "team-a", "apply", "-f", "-", stdin=_cm("e"))).code == 1


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_a_dead_webhook_fails_closed_or_open(kubectl: Kubectl, hook: TestWebhook,
                                                    policy: str) -> None:
    url = hook.url()
    await hook.stop()
    await _install(kubectl, VALIDATING, "v", webhook(
        "dead.example.com", {"url": url, "caBundle": hook.ca_bundle},
        resources=["configmaps"], failurePolicy=policy))
    result = await kubectl.run("apply", "-f", "-", stdin=_cm("a"))
    if policy == "Ignore":
        assert result.code == 0
        return
    assert result.code == 1
    assert ('Error from server (InternalError): error when creating "STDIN": Internal error '
            'occurred: failed calling webhook "dead.example.com": failed to call webhook: '
            f'Post "{url}?timeout=2s": dial tcp 127.0.0.1:{hook.port}: connect: connection '
            'refused') in result.stderr


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_a_slow_webhook_times_out(kubectl: Kubectl, hook: TestWebhook,
                                        policy: str) -> None:
    hook.delay = 3
    await _install(kubectl, VALIDATING, "v", webhook(
        "slow.example.com", _url(hook), resources=["configmaps"], failurePolicy=policy,
        timeoutSeconds=1))
    result = await kubectl.run("apply", "-f", "-", stdin=_cm("a"))
    if policy == "Ignore":
        assert result.code == 0
        return
    assert (f'failed calling webhook "slow.example.com": failed to call webhook: Post '
            f'"{hook.url()}?timeout=1s": context deadline exceeded') in result.stderr


async def test_warnings_reach_kubectl(kubectl: Kubectl, hook: TestWebhook) -> None:
    hook.answer = lambda _: {"allowed": True, "warnings": ["spec.old is deprecated"]}
    await _install(kubectl, VALIDATING, "v", webhook("warn.example.com", _url(hook),
                                                     resources=["configmaps"]))
    result = await kubectl.run("apply", "-f", "-", stdin=_cm("a"))
    assert result.code == 0
    assert "Warning: spec.old is deprecated" in result.stderr
    hook.answer = lambda _: {"allowed": False, "warnings": ["also this"],
                             "status": {"message": "no"}}
    result = await kubectl.run("apply", "-f", "-", stdin=_cm("a", k="2"))
    assert "Warning: also this" in result.stderr
    assert 'Error from server: error when applying patch' in result.stderr or \
        'denied the request: no' in result.stderr


async def test_a_mutating_patch_is_applied_before_validation(
        kubectl: Kubectl, tmp_path: Path, hook: TestWebhook) -> None:
    (tmp_path / "v").mkdir()
    validator = await TestWebhook(tmp_path / "v").start()
    try:
        hook.answer = lambda _: patch_of([{"op": "add", "path": "/metadata/labels/team",
                                           "value": "a"}])
        validator.answer = lambda r: {"allowed": (r["object"]["metadata"].get("labels") or {})
                                      .get("team") == "a", "status": {"message": "no team"}}
        await _install(kubectl, MUTATING, "m", webhook("label.example.com", _url(hook),
                                                       resources=["configmaps"]))
        await _install(kubectl, VALIDATING, "v", webhook("team.example.com", _url(validator),
                                                         resources=["configmaps"]))
        await kubectl("apply", "-f", "-", stdin=_cm("a"))
        stored = json.loads(await kubectl("get", "configmap", "a", "-o", "json"))
        assert stored["metadata"]["labels"] == {"team": "a"}
        assert len(hook.requests) == 1 and len(validator.requests) == 1
    finally:
        await validator.stop()


async def test_dry_run_needs_side_effect_free_webhooks(kubectl: Kubectl,
                                                       hook: TestWebhook) -> None:
    # admissionregistration/v1 refuses a webhook with side effects (objects from v1beta1
    # could keep one, and dry runs skip past them; a v1-only server cannot hold one).
    result = await kubectl.run("apply", "-f", "-", stdin=configuration(VALIDATING, "v", [
        webhook("effects.example.com", _url(hook), resources=["configmaps"],
                sideEffects="Some")]))
    assert ('webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
            '"NoneOnDryRun"') in result.stderr
    await _install(kubectl, VALIDATING, "v", webhook("effects.example.com", _url(hook),
                                                     resources=["configmaps"],
                                                     sideEffects="NoneOnDryRun"))
    await kubectl("apply", "--dry-run=server", "-f", "-", stdin=_cm("a"))
    assert hook.requests[0]["dryRun"] is True
    assert hook.requests[0]["options"]["dryRun"] == ["All"]
    assert "a" not in await kubectl("get", "configmaps", "-o", "name")


async def test_a_certificate_from_another_ca_is_refused(kubectl: Kubectl, tmp_path: Path,
                                                        hook: TestWebhook) -> None:
    other = TestWebhook(tmp_path)
    await _install(kubectl, VALIDATING, "v", webhook(
        "tls.example.com", {"url": hook.url(), "caBundle": other.ca_bundle},
        resources=["configmaps"]))
    result = await kubectl.run("apply", "-f", "-", stdin=_cm("a"))
    assert ("tls: failed to verify certificate: x509: certificate signed by unknown "
            "authority") in result.stderr
    assert hook.requests == []


async def test_a_service_resolves_to_its_endpoint_slices(
        cluster: LocalCluster, kubectl: Kubectl, hook: TestWebhook, tmp_path: Path) -> None:
    served = await TestWebhook(tmp_path, dns_names=("hooks.ops.svc",)).start()
    try:
        await kubectl("create", "namespace", "ops")
        await kubectl("apply", "--validate=false", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "List",
            "items": [
                {"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": "hooks", "namespace": "ops"},
                 "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]}},
                {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": "hooks-1", "namespace": "ops",
                              "labels": {"kubernetes.io/service-name": "hooks"}},
                 "addressType": "IPv4",
                 "ports": [{"name": "https", "port": served.port, "protocol": "TCP"}],
                 "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}]},
            ]}))
        await _install(kubectl, VALIDATING, "v", webhook(
            "svc.example.com", {"service": {"namespace": "ops", "name": "hooks",
                                            "path": "/validate"},
                                "caBundle": served.ca_bundle}, resources=["configmaps"]))
        # As any user: the review carries who asked.
        token = cluster.add_user(service_account("ops", "robot"))
        robot = Kubectl(cluster.write_kubeconfig(tmp_path / "robot", token=token),
                        tmp_path / "robot-cache")
        await robot("apply", "-f", "-", stdin=_cm("a"))
        (request,) = served.requests
        assert request["path"] == "/validate"
        assert request["userInfo"]["username"] == "system:serviceaccount:ops:robot"
        assert "system:serviceaccounts:ops" in request["userInfo"]["groups"]
    finally:
        await served.stop()


async def test_webhook_configurations_are_never_sent_to_webhooks(
        kubectl: Kubectl, hook: TestWebhook) -> None:
    await hook.stop()
    await _install(kubectl, VALIDATING, "v", webhook(
        "everything.example.com", _url(hook), groups=["*"], resources=["*"],
        operations=["*"]))
    # Even with a dead fail-closed webhook matching everything, it can be removed.
    await kubectl("delete", "validatingwebhookconfiguration", "v")


async def test_a_self_subject_review_says_who_a_token_is(cluster: LocalCluster,
                                                         tmp_path: Path) -> None:
    token = cluster.add_user(service_account("ops", "robot"))
    client = await KubeClient.connect(cluster.write_kubeconfig(tmp_path / "robot", token=token))
    try:
        review = await client.request(
            "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    finally:
        await client.close()
    assert review["status"]["userInfo"]["username"] == "system:serviceaccount:ops:robot"


@pytest.mark.parametrize("policy", ["Equivalent", "Exact"])
async def test_match_policy_reaches_other_versions_of_a_resource(
        kubectl: Kubectl, hook: TestWebhook, policy: str) -> None:
    rule = webhook("hpa.example.com", _url(hook), groups=["autoscaling"],
                   resources=["horizontalpodautoscalers"], matchPolicy=policy)
    rule["rules"][0]["apiVersions"] = ["v1"]
    await _install(kubectl, VALIDATING, "v", rule)
    await kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "d"}, "maxReplicas": 3}}))
    if policy == "Exact":
        assert hook.requests == []
        return
    (request,) = hook.requests
    assert request["resource"]["version"] == "v1"
    assert request["kind"]["version"] == "v1"
    assert request["requestResource"]["version"] == "v2"
    assert request["object"]["apiVersion"] == "autoscaling/v1"


async def test_an_answer_for_another_request_is_a_call_failure(kubectl: Kubectl,
                                                               hook: TestWebhook) -> None:
    hook.answer = lambda _: {"allowed": True, "uid": "someone-else"}
    await _install(kubectl, VALIDATING, "v", webhook("uid.example.com", _url(hook),
                                                     resources=["configmaps"]))
    result = await kubectl.run("apply", "-f", "-", stdin=_cm("a"))
    assert ('failed calling webhook "uid.example.com": received invalid webhook response: '
            'expected response.uid="') in result.stderr


async def test_a_write_whose_object_changed_meanwhile_is_admitted_again(
        kubectl: Kubectl, hook: TestWebhook) -> None:
    await kubectl("apply", "-f", "-", stdin=_cm("a", base="0"))
    hook.delay = 0.5
    await _install(kubectl, VALIDATING, "v", webhook("slow.example.com", _url(hook),
                                                     resources=["configmaps"],
                                                     operations=["UPDATE"]))
    first = asyncio.create_task(kubectl("patch", "configmap", "a", "-p",
                                        '{"data":{"x":"1"}}'))
    await asyncio.sleep(0.2)
    await kubectl("patch", "configmap", "a", "-p", '{"data":{"y":"2"}}')
    await first
    stored = json.loads(await kubectl("get", "configmap", "a", "-o", "json"))
    assert stored["data"] == {"base": "0", "x": "1", "y": "2"}
    # The second patch was admitted for an object that then changed under it: asked again.
    assert len(hook.requests) == 3
    assert hook.requests[2]["oldObject"]["data"] == {"base": "0", "x": "1"}
    assert hook.requests[2]["object"]["data"] == {"base": "0", "x": "1", "y": "2"}


async def test_scope_picks_cluster_or_namespaced_resources(kubectl: Kubectl,
                                                           hook: TestWebhook) -> None:
    rule = webhook("scope.example.com", _url(hook), groups=["*"], resources=["*"],
                   operations=["CREATE"])
    rule["rules"][0]["scope"] = "Cluster"
    await _install(kubectl, VALIDATING, "v", rule)
    await kubectl("apply", "-f", "-", stdin=_cm("a"))
    await kubectl("create", "namespace", "n1")
    assert [r["resource"]["resource"] for r in hook.requests] == ["namespaces"]
    assert "namespace" not in hook.requests[0]


async def test_a_validating_webhook_sees_a_custom_objects_next_generation(
        kubectl: Kubectl, hook: TestWebhook) -> None:
    """customResourceStrategy.PrepareForUpdate bumps the generation before the validating
    webhooks run: a spec change reaches them at generation 2, a label change at 1."""
    await kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {
                                   "type": "object", "properties": {"spec": {
                                       "type": "object",
                                       "properties": {"size": {"type": "integer"}}}}}}}]}}))
    await kubectl("wait", "--for=condition=Established", "crd/widgets.example.com")
    await _install(kubectl, VALIDATING, "v", webhook(
        "gen.example.com", _url(hook), groups=["example.com"], resources=["widgets"],
        operations=["CREATE", "UPDATE"]))
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
              "spec": {"size": 1}}
    await kubectl("apply", "-f", "-", stdin=json.dumps(widget))
    await kubectl("patch", "widget", "w", "--type=merge", "-p", '{"spec":{"size":2}}')
    await kubectl("label", "widget", "w", "x=1")
    assert [r["object"]["metadata"]["generation"] for r in hook.requests] == [1, 2, 2]
    assert [r["oldObject"]["metadata"]["generation"] for r in hook.requests[1:]] == [1, 2]
