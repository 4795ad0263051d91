"""Status codes, reasons, messages and causes (with field paths) of refused requests to built-in
kinds: names, validation, conflicts, bodies that do not decode, unknown paths and verbs."""

from __future__ import annotations

from ..model import Case, case, delete, fields, get, post, put
from .paths import CM, DEPLOY, NAMESPACES, SA, SECRETS, SERVICES, cm, deployment, secret

LONG = "a" * 254


def _bad_configmaps() -> list[Case]:
    bodies = {
        "cm-name-uppercase": cm("Upper"),
        "cm-name-too-long": cm(LONG),
        "cm-name-dots-ok": cm("a.b.c"),
        "cm-name-underscore": cm("a_b"),
        "cm-name-missing": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}},
        "cm-generate-name-bad": {"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"generateName": "Bad_"}},
        "cm-generate-name-ok": {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"generateName": "fine-"}},
        "cm-data-key-space": cm("x", {"a b": "v"}),
        "cm-data-key-slash": cm("x", {"a/b": "v"}),
        "cm-data-key-dotdot": cm("x", {"..": "v"}),
        "cm-data-binary-dup": {**cm("x", {"k": "v"}), "binaryData": {"k": "dg=="}},
        "cm-binary-not-base64": {**cm("x"), "binaryData": {"b": "not base64!"}},
        "cm-label-value-bad": cm("x", labels={"a": "-bad-"}),
        "cm-label-key-bad": cm("x", labels={"a/b/c": "v"}),
        "cm-label-value-long": cm("x", labels={"a": "v" * 64}),
        "cm-annotation-key-bad": cm("x", annotations={"-x": "v"}),
        "cm-annotations-too-large": cm("x", annotations={"a": "v" * 262145}),
        "cm-namespace-mismatch": cm("x", namespace="other"),
        "cm-kind-mismatch": {**cm("x"), "kind": "Secret"},
        "cm-apiversion-wrong": {**cm("x"), "apiVersion": "v2"},
        "cm-kind-missing": {"apiVersion": "v1", "metadata": {"name": "x"}},
        "cm-finalizer-bad": cm("x", finalizers=["bad finalizer"]),
        "cm-finalizer-unqualified": cm("x", finalizers=["plain"]),
        "cm-owner-missing-uid": cm("x", ownerReferences=[
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": ""}]),
        "cm-owner-two-controllers": cm("x", ownerReferences=[
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "controller": True,
             "uid": "00000000-0000-0000-0000-000000000001"},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "p", "controller": True,
             "uid": "00000000-0000-0000-0000-000000000002"}]),
        "cm-data-not-string": {**cm("x"), "data": {"k": 1}},
        "cm-metadata-not-object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": 3},
        "cm-unknown-field-ok": {**cm("x"), "extra": True},
        "cm-immutable-ok": {**cm("x"), "immutable": True},
    }
    # generateName's random suffix (five characters) is scrubbed.
    return [case(i, post(CM, b), scrub=((r"Bad_[a-z0-9]{5}\b", "Bad_XXXXX"),))
            for i, b in bodies.items()]


def _bad_secrets() -> list[Case]:
    bodies = {
        "secret-data-not-base64": secret("x", {"k": "!!!"}),
        "secret-tls-missing-keys": secret("x", {"k": "dg=="}, type="kubernetes.io/tls"),
        "secret-dockercfg-missing": secret("x", type="kubernetes.io/dockerconfigjson"),
        "secret-basic-auth-empty": secret("x", {"other": "dg=="},
                                          type="kubernetes.io/basic-auth"),
        "secret-ssh-missing": secret("x", type="kubernetes.io/ssh-auth"),
        "secret-sa-token-no-annotation": secret(
            "x", type="kubernetes.io/service-account-token"),
        "secret-string-data-ok": {**secret("x"), "stringData": {"s": "plain"}},
        "secret-key-bad": secret("x", {"bad key": "dg=="}),
        "secret-type-long": secret("x", type="t" * 300),
    }
    return [case(i, post(SECRETS, b)) for i, b in bodies.items()]


def _bad_deployments() -> list[Case]:
    c = {"name": "c", "image": "i"}
    bodies = {
        "deploy-no-selector": {**deployment("d"), "spec": {
            "template": deployment("d")["spec"]["template"]}},
        "deploy-selector-mismatch": {**deployment("d"), "spec": {
            **deployment("d")["spec"], "selector": {"matchLabels": {"app": "other"}}}},
        "deploy-replicas-negative": deployment("d", replicas=-1),
        "deploy-no-containers": deployment("d", containers=[]),
        "deploy-container-name-bad": deployment("d", containers=[{"name": "C_1",
                                                                   "image": "i"}]),
        "deploy-container-no-image": deployment("d", containers=[{"name": "c"}]),
        "deploy-container-dup-names": deployment("d", containers=[c, c]),
        "deploy-port-out-of-range": deployment("d", containers=[{**c, "ports": [
            {"containerPort": 70000}]}]),
        "deploy-restart-never": deployment("d", containers=[c])
        | {"spec": {**deployment("d")["spec"], "template": {
            "metadata": {"labels": {"app": "d"}},
            "spec": {"containers": [c], "restartPolicy": "Never"}}}},
        "deploy-strategy-bad": deployment("d", strategy={"type": "Sometimes"}),
        "deploy-max-unavailable-bad": deployment("d", strategy={
            "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "150%"}}),
        "deploy-env-name-bad": deployment("d", containers=[{**c, "env": [
            {"name": "", "value": "v"}]}]),
        "deploy-resources-limit-below": deployment("d", containers=[{**c, "resources": {
            "requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]),
        "deploy-quantity-bad": deployment("d", containers=[{**c, "resources": {
            "limits": {"cpu": "lots"}}}]),
        "deploy-replicas-string": {**deployment("d"), "spec": {
            **deployment("d")["spec"], "replicas": "two"}},
        "deploy-revision-history-negative": deployment("d", revisionHistoryLimit=-2),
    }
    return [case(i, post(DEPLOY, b)) for i, b in bodies.items()]


def _other_kinds() -> list[Case]:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    return [
        case("sa-name-bad", post(SA, {"metadata": {"name": "Bad"}})),
        case("sa-ok-then-dup", post(SA, {"metadata": {"name": "sa"}}),
             post(SA, {"metadata": {"name": "sa"}})),
        case("ns-name-bad", post(NAMESPACES, {"metadata": {"name": "Bad.Name"}})),
        case("ns-name-dotted", post(NAMESPACES, {"metadata": {"name": "a.b"}})),
        case("svc-no-ports", post(SERVICES, {**svc, "spec": {"ports": []}})),
        case("svc-port-zero", post(SERVICES, {**svc, "spec": {"ports": [{"port": 0}]}})),
        case("svc-type-bad", post(SERVICES, {**svc, "spec": {
            "type": "Weird", "ports": [{"port": 80}]}})),
        case("svc-dup-port-names", post(SERVICES, {**svc, "spec": {"ports": [
            {"name": "a", "port": 80}, {"name": "a", "port": 81}]}})),
        case("svc-port-too-big", post(SERVICES, {**svc, "spec": {"ports": [
            {"port": 80, "targetPort": 70000}]}})),
        case("svc-port-name-bad", post(SERVICES, {**svc, "spec": {"ports": [
            {"name": "Web_1", "port": 80}]}})),
        case("svc-two-ports-unnamed", post(SERVICES, {**svc, "spec": {"ports": [
            {"port": 80}, {"port": 81}]}})),
        case("svc-ok", post(SERVICES, {**svc, "spec": {"ports": [{"port": 80}]}},
                            record=fields("spec.ports", "spec.type",
                                          "spec.sessionAffinity"))),
    ]


def _requests() -> list[Case]:
    one = f"{CM}/one"
    return [
        case("get-missing", get(f"{CM}/nope")),
        case("get-missing-namespace", get("/api/v1/namespaces/no-such-ns-x/configmaps/a")),
        case("create-duplicate", post(CM, cm("one")), post(CM, cm("one"))),
        case("update-missing", put(one, cm("one"))),
        case("update-stale-rv", post(CM, cm("one")),
             put(one, cm("one", resourceVersion="1"))),
        case("update-no-rv-ok", post(CM, cm("one")), put(one, cm("one", {"k": "w"}))),
        case("update-name-mismatch", post(CM, cm("one")), put(one, cm("two"))),
        case("update-uid-change", post(CM, cm("one")),
             put(one, cm("one", uid="00000000-0000-0000-0000-000000000009"))),
        case("update-immutable-data", post(CM, {**cm("one"), "immutable": True}),
             put(one, {**cm("one", {"k": "changed"}), "immutable": True})),
        case("update-immutable-unset", post(CM, {**cm("one"), "immutable": True}),
             put(one, {**cm("one"), "immutable": False})),
        case("secret-type-immutable", post(SECRETS, secret("s")),
             put(f"{SECRETS}/s", secret("s", type="other"))),
        case("delete-missing", delete(f"{CM}/nope")),
        case("post-to-named", post(one, cm("one"))),
        case("put-to-collection", put(CM, cm("one"))),
        case("unknown-resource", get("/api/v1/namespaces/${ns}/gizmos")),
        case("unknown-group", get("/apis/nothing.example.com/v1/things")),
        case("unknown-version", get("/apis/apps/v7/deployments")),
        case("bad-json", post(CM, "{not json")),
        case("body-is-list", post(CM, "[1,2]")),
        case("body-empty", post(CM, "")),
        case("body-malformed-object", post(CM, '{"a": }')),
        case("body-trailing-data", post(CM, '{"a": 1} x')),
        case("body-number", post(CM, "42")),
        case("body-null", post(CM, "null")),
        case("put-body-not-object", post(CM, cm("one")), put(f"{CM}/one", '"text"')),
        case("body-yaml-ok", post(CM, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                      "  name: y\ndata:\n  a: b\n",
                                  content_type="application/yaml")),
        case("content-type-unsupported", post(CM, "x", content_type="text/plain")),
        case("accept-unsupported", get(CM, accept="text/html")),
        case("dry-run-bad-value", post(CM, cm("x"), params={"dryRun": "Some"})),
        case("dry-run-create", post(CM, cm("x"), params={"dryRun": "All"}),
             get(f"{CM}/x")),
        case("field-manager-too-long", post(CM, cm("x"), params={"fieldManager": "m" * 200})),
        case("namespace-in-cluster-path", get("/api/v1/configmaps/x")),
        case("cluster-scoped-namespaced-path", get("/api/v1/namespaces/${ns}/nodes")),
        case("namespace-delete-terminating-create",
             post(NAMESPACES, {"metadata": {"name": "${ns}-t"}}),
             post("/api/v1/namespaces/${ns}-t/configmaps",
                  cm("held", finalizers=["example.com/hold"])),
             delete("/api/v1/namespaces/${ns}-t"),
             post("/api/v1/namespaces/${ns}-t/configmaps", cm("late"))),
    ]


CASES = [*_bad_configmaps(), *_bad_secrets(), *_bad_deployments(), *_other_kinds(),
         *_requests()]
