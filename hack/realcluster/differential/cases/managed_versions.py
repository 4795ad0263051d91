"""managedFields across the versions of a kind with a conversion webhook: a write in one
version takes from an entry written in another what changed at that entry's version (the
field manager converts the old and new objects there), and server-side apply's conflicts and
prunes across versions. Two kinds: the toy Doohickey of `conversion` (v1 `spec.size` is v2
`spec.dimension`), and our DynamoGraphDeployment (v1alpha1 `spec.services.X.replicas` is
v1beta1 `spec.components[name=X].replicas`, stored as v1beta1) converting through the
operator's own webhook served in-process (`hack.our_crds`), the scaling adapter's case: its
v1beta1 write of the replicas, then a hand edit in v1alpha1.

Entries are recorded as a mapping of manager, operation and apiVersion to fieldsV1, not as a
list: entries sort by their time first, and two writes may fall in different seconds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from hack.our_crds import with_conversion

from ..model import APPLY, JSON_PATCH, MERGE, Case, Record, Step, case, get, patch, post, put
from ..model import status as status_of
from ..target import Answer, Json, Target

DGD_CRD_FILE = Path(__file__).parents[4] / "deploy" / "crds" / \
    "nvidia.com_dynamographdeployments.yaml"
DGD_CRD_NAME = "dynamographdeployments.nvidia.com"
ALPHA = "/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamographdeployments"
BETA = "/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments"


def dgd_crd() -> Json:
    """Our DGD CRD converting through the in-process webhook (1.20 drops its CEL rules)."""
    crd: Json = with_conversion(yaml.safe_load(DGD_CRD_FILE.read_text()))
    return crd


async def remove(target: Target) -> None:
    await target.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                    f"{DGD_CRD_NAME}")


def owners(*paths: str) -> Record:
    """The code, a Status summary on failure, else each entry's fieldsV1 by manager,
    operation and apiVersion, and the values at `paths`."""
    def record(answer: Answer) -> Any:
        if answer.code >= 400:
            return status_of(answer)
        body = answer.json if isinstance(answer.json, dict) else {}
        meta = body.get("metadata") or {}
        entries = {f"{e.get('manager')}/{e.get('operation')}/{e.get('apiVersion')}":
                   e.get("fieldsV1") for e in meta.get("managedFields") or ()}
        values = {p: _dig(body, p) for p in paths}
        return [answer.code, entries, values]
    return record


def _dig(body: Any, path: str) -> Any:
    for part in path.split("."):
        body = body.get(part) if isinstance(body, dict) else None
    return body


def _as(manager: str, **more: str) -> dict[str, str]:
    return {"fieldManager": manager, **more}


def _merge(path: str, body: Any, manager: str, record: Record | None = None) -> Step:
    return patch(path, body, MERGE, params=_as(manager), record=record or owners("spec"))


def _apply(path: str, body: Any, manager: str, force: bool = False) -> Step:
    params = _as(manager, **({"force": "true"} if force else {}))
    return patch(path, body, APPLY, params=params, record=owners("spec"))


# --- the toy Doohickey ---------------------------------------------------------------------

TOY_V1 = "/apis/example.com/v1/namespaces/${ns}/doohickeys"
TOY_V2 = "/apis/example.com/v2/namespaces/${ns}/doohickeys"


def _d(name: str, version: str = "v1", **spec: Any) -> Json:
    return {"apiVersion": f"example.com/{version}", "kind": "Doohickey",
            "metadata": {"name": name}, "spec": spec}


def _toy_cases() -> list[Case]:
    one, two = f"{TOY_V1}/a", f"{TOY_V2}/a"
    return [
        case("mfv-toy-update-v1-takes-v2",
             post(TOY_V2, _d("a", "v2", dimension=1), params=_as("beta"), record=owners()),
             _merge(one, {"spec": {"size": 2}}, "alpha"), get(two, record=owners())),
        case("mfv-toy-update-v2-takes-v1",
             post(TOY_V1, _d("a", size=1, color="red"), params=_as("alpha"), record=None),
             _merge(two, {"spec": {"dimension": 5}}, "beta")),
        case("mfv-toy-update-other-field",
             post(TOY_V2, _d("a", "v2", dimension=1), params=_as("beta"), record=None),
             _merge(one, {"spec": {"color": "blue"}}, "alpha")),
        case("mfv-toy-put-v1",
             post(TOY_V2, _d("a", "v2", dimension=1, color="red"), params=_as("beta"),
                  record=None),
             get(one, save={"rv": "metadata.resourceVersion"}, record=None),
             put(one, {**_d("a", size=4), "metadata": {"name": "a", "resourceVersion": "${rv}"}},
                 params=_as("kubectl-edit"), record=owners("spec"))),
        case("mfv-toy-remove-in-v1",
             post(TOY_V2, _d("a", "v2", dimension=1, color="red"), params=_as("beta"),
                  record=None),
             patch(one, [{"op": "remove", "path": "/spec/size"}], JSON_PATCH,
                   params=_as("alpha"), record=owners("spec"))),
        case("mfv-toy-apply-conflict",
             post(TOY_V2, _d("a", "v2", dimension=1), params=_as("beta"), record=None),
             _apply(one, _d("a", size=3), "applier"),
             _apply(one, _d("a", size=3), "applier", force=True)),
        case("mfv-toy-apply-conflict-two",
             post(TOY_V2, _d("a", "v2", dimension=1, color="red"), params=_as("beta"),
                  record=None),
             _apply(one, _d("a", size=3, color="blue"), "applier")),
        case("mfv-toy-apply-shared",
             _apply(two, _d("a", "v2", dimension=2), "beta"),
             _apply(one, _d("a", size=2), "alpha")),
        case("mfv-toy-apply-moves-version",
             _apply(two, _d("a", "v2", dimension=2, color="red"), "app"),
             _apply(one, _d("a", size=2), "app")),
        case("mfv-toy-apply-prune-kept-by-other-version",
             _apply(one, _d("a", size=2, color="red"), "app"),
             _apply(two, _d("a", "v2", color="red"), "beta"),
             _apply(one, _d("a", size=2), "app")),
        case("mfv-toy-apply-prune-other-version",
             _apply(one, _d("a", size=2, color="red"), "app"),
             _merge(two, {"spec": {"shade": "dark"}}, "beta"),
             _apply(one, _d("a", size=2), "app")),
        case("mfv-toy-apply-prune-label-other-version",
             _apply(one, {**_d("a", size=2), "metadata": {"name": "a", "labels": {"x": "1"}}},
                    "app"),
             _merge(two, {"spec": {"shade": "dark"}}, "beta"),
             patch(one, _d("a", size=2), APPLY, params=_as("app"),
                   record=owners("spec", "metadata.labels"))),
        case("mfv-toy-apply-then-update-other-version",
             _apply(one, _d("a", size=2), "app"),
             _merge(two, {"spec": {"dimension": 6}}, "beta"),
             _apply(one, _d("a", size=2), "app")),
    ]


# --- our DynamoGraphDeployment -------------------------------------------------------------

#: Where each version keeps the decode service's replicas.
REPLICAS = (("f:spec", "f:services", "f:decode", "f:replicas"),
            ("f:spec", "f:components", 'k:{"name":"decode"}', "f:replicas"))


def _owns(fields: Any, path: tuple[str, ...]) -> bool:
    """Whether a fieldsV1 tree holds `path`, or above it a list owned whole (an atomic list,
    as a kind without a typed schema records every list)."""
    for depth, key in enumerate(path):
        if not isinstance(fields, dict) or key not in fields:
            return False
        fields = fields[key]
        below = path[depth + 1:]
        if fields == {} and below and below[0].startswith("k:"):
            return True
    return True


def replica_owners(answer: Answer) -> Any:
    """The entries (manager, operation, apiVersion), the managers owning the replicas in
    either version's shape, and the spec; a conflict's code, reason and clashing managers.

    Not the whole fieldsV1: Kubernetes 1.20 builds no typed schema for our DGD CRD (its
    int-or-string fields, kubernetes#90902, fixed in 1.21 by #97172) and records it as a kind
    without one (lists atomic, every map with its own `.`), which `mfv-dgd-typed-fields`
    shows; what is compared here is who owns what across versions."""
    body = answer.json if isinstance(answer.json, dict) else {}
    if answer.code >= 400:
        causes = (body.get("details") or {}).get("causes") or ()
        return [answer.code, body.get("reason"), sorted({c.get("message") for c in causes})]
    entries = (body.get("metadata") or {}).get("managedFields") or ()
    return [answer.code,
            sorted(f"{e.get('manager')}/{e.get('operation')}/{e.get('apiVersion')}"
                   for e in entries),
            sorted({e.get("manager") for e in entries
                    if any(_owns(e.get("fieldsV1"), p) for p in REPLICAS)}),
            body.get("spec")]


def _graph(replicas: int = 1) -> Json:
    decode: Json = {"componentType": "worker", "replicas": replicas}
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g"},
            "spec": {"backendFramework": "vllm", "services": {"decode": decode}}}


def _adapter(replicas: int) -> Step:
    """The scaling adapter's own write: a JSON patch at the component's index, guarded."""
    return patch(f"{BETA}/g", [
        {"op": "test", "path": "/spec/components/0/name", "value": "decode"},
        {"op": "replace", "path": "/spec/components/0/replicas", "value": replicas}],
        JSON_PATCH, params=_as("dynamo-operator"), record=replica_owners)


def _dgd(step: Step) -> Step:
    return replace(step, record=replica_owners)


def _dgd_cases() -> list[Case]:
    g = f"{ALPHA}/g"
    create = post(ALPHA, _graph(), params=_as("kubectl-create"), record=replica_owners)
    alpha_edit = {"spec": {"services": {"decode": {"replicas": 7}}}}
    beta_apply = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
                  "metadata": {"name": "g"},
                  "spec": {"components": [{"name": "decode", "type": "worker",
                                           "replicas": 4}]}}
    labels_only = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
                   "metadata": {"name": "g", "labels": {"team": "a"}},
                   "spec": {"services": {"decode": {"componentType": "worker"}}}}
    return [
        case("mfv-dgd-adapter-then-alpha-edit", create, _adapter(3),
             _dgd(_merge(g, alpha_edit, "kubectl-edit")),
             get(f"{BETA}/g", record=replica_owners)),
        case("mfv-dgd-alpha-edit-then-adapter", create,
             _dgd(_merge(g, alpha_edit, "kubectl-edit")), _adapter(2)),
        case("mfv-dgd-alpha-put-after-adapter", create, _adapter(3),
             get(g, save={"rv": "metadata.resourceVersion"}, record=None),
             put(g, {**_graph(6), "metadata": {"name": "g", "resourceVersion": "${rv}"}},
                 params=_as("kubectl-replace"), record=replica_owners)),
        case("mfv-dgd-alpha-apply-conflicts-with-adapter", create, _adapter(3),
             _dgd(_apply(g, _graph(5), "kubectl")),
             _dgd(_apply(g, _graph(5), "kubectl", force=True))),
        case("mfv-dgd-beta-apply-conflicts-with-alpha-apply",
             _dgd(_apply(g, _graph(2), "kubectl")), _dgd(_apply(f"{BETA}/g", beta_apply, "hpa")),
             _dgd(_apply(f"{BETA}/g", beta_apply, "hpa", force=True))),
        case("mfv-dgd-alpha-apply-of-other-field-keeps-adapter", create, _adapter(3),
             _dgd(_apply(g, labels_only, "kubectl"))),
        case("mfv-dgd-typed-fields", replace(create, record=owners()),
             replace(_adapter(3), record=owners())),
    ]


CASES: list[Case] = [*_toy_cases(), *_dgd_cases()]
