"""Deletion: finalizers, preconditions, grace, dry-run, delete-collection, and garbage
collection by the real kube-controller-manager against the local one: background, orphan and
foreground propagation, in the order a watch sees it."""

from __future__ import annotations

from typing import Any

from ..model import Case, case, delete, events, fields, get, names, patch, post, watch
from .paths import CM, DEPLOY, cm, deployment

_GONE = {"until": lambda a: a.code == 404, "within": 30.0}
FIN = "example.com/hold"


def _owned(name: str, owner: str = "owner", **ref: Any) -> dict[str, Any]:
    return cm(name, ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": owner,
                                      "uid": "${uid}", **ref}])


def _owner_and_children(*children: dict[str, Any]) -> tuple[Any, ...]:
    return (post(CM, cm("owner"), save={"uid": "metadata.uid"}),
            *[post(CM, c) for c in children])


def _finalizers() -> list[Case]:
    one = f"{CM}/f"
    meta = fields("metadata.finalizers", "metadata.deletionTimestamp",
                  "metadata.deletionGracePeriodSeconds")
    return [
        case("fin-delete-marks", post(CM, cm("f", finalizers=[FIN])), delete(one, record=meta),
             get(one, record=meta)),
        case("fin-remove-then-gone", post(CM, cm("f", finalizers=[FIN])), delete(one),
             patch(one, {"metadata": {"finalizers": []}}, record=meta), get(one)),
        case("fin-add-while-deleting", post(CM, cm("f", finalizers=[FIN])), delete(one),
             patch(one, {"metadata": {"finalizers": [FIN, "example.com/more"]}}, record=meta)),
        case("fin-delete-twice", post(CM, cm("f", finalizers=[FIN])), delete(one),
             delete(one, record=meta)),
        case("fin-update-data-while-deleting", post(CM, cm("f", finalizers=[FIN])),
             delete(one), patch(one, {"data": {"k": "changed"}}, record=fields("data"))),
        case("fin-clear-deletion-timestamp", post(CM, cm("f", finalizers=[FIN])),
             delete(one), patch(one, {"metadata": {"deletionTimestamp": None}},
                                record=meta)),
        case("fin-orphan-on-object", post(CM, cm("f", finalizers=["orphan"])),
             get(one, record=meta)),
        case("fin-foreground-on-create",
             post(CM, cm("f", finalizers=["foregroundDeletion"]), record=meta)),
    ]


def _preconditions() -> list[Case]:
    one = f"{CM}/p"
    return [
        case("delete-precondition-uid", post(CM, cm("p")),
             delete(one, {"preconditions": {"uid": "00000000-0000-0000-0000-000000000001"}})),
        case("delete-precondition-rv", post(CM, cm("p")),
             delete(one, {"preconditions": {"resourceVersion": "1"}}),
             scrub=((r"in record \(\d+\)", "in record (N)"),)),
        case("delete-precondition-ok", post(CM, cm("p"), save={"u": "metadata.uid"}),
             delete(one, {"preconditions": {"uid": "${u}"}}, record=fields("kind"))),
        case("delete-policy-bad", post(CM, cm("p")),
             delete(one, {"propagationPolicy": "Sideways"})),
        case("delete-orphan-and-policy", post(CM, cm("p")),
             delete(one, {"propagationPolicy": "Background", "orphanDependents": True})),
        case("delete-grace-negative", post(CM, cm("p")),
             delete(one, {"gracePeriodSeconds": -5}, record=fields("kind"))),
        case("delete-dry-run", post(CM, cm("p")),
             delete(one, params={"dryRun": "All"}, record=fields("kind", "metadata.name")),
             get(one, record=fields("metadata.name"))),
        case("delete-body-wrong-kind", post(CM, cm("p")),
             delete(one, {"kind": "ConfigMap", "apiVersion": "v1"})),
        case("delete-returns-status", post(CM, cm("p")),
             delete(one, record=fields("kind", "status", "details.name"))),
        case("delete-collection", *[post(CM, cm(f"x{i}", labels={"g": str(i % 2)}))
                                    for i in range(4)],
             delete(CM, params={"labelSelector": "g=1"}, record=names()),
             get(CM, record=names())),
        case("delete-collection-dry-run", post(CM, cm("a")),
             delete(CM, params={"dryRun": "All"}, record=names()),
             get(CM, record=names())),
    ]


def _gc() -> list[Case]:
    child = f"{CM}/child"
    owner = f"{CM}/owner"
    refs = fields("metadata.ownerReferences")
    rv_start = get(CM, save={"rv": "metadata.resourceVersion"}, record=None)

    def order(count: int) -> Any:
        return watch(CM, {"resourceVersion": "${rv}"}, events=count, within=30,
                     record=events("metadata.finalizers"))
    return [
        case("gc-background", *_owner_and_children(_owned("child")), delete(owner),
             get(child, **_GONE)),
        case("gc-orphan", *_owner_and_children(_owned("child")),
             delete(owner, {"propagationPolicy": "Orphan"}),
             get(child, record=refs, until=lambda a: not (a.json or {}).get(
                 "metadata", {}).get("ownerReferences"), within=30),
             get(owner, **_GONE)),
        case("gc-foreground-order", *_owner_and_children(_owned("child",
                                                                blockOwnerDeletion=True)),
             rv_start, delete(owner, {"propagationPolicy": "Foreground"},
                              record=fields("metadata.finalizers")),
             get(owner, **_GONE), order(4)),
        case("gc-foreground-held-by-child-finalizer",
             *_owner_and_children({**_owned("child", blockOwnerDeletion=True)}),
             patch(child, {"metadata": {"finalizers": [FIN]}}, record=None),
             delete(owner, {"propagationPolicy": "Foreground"}, record=None),
             get(child, record=fields("metadata.finalizers"),
                 until=lambda a: bool((a.json or {}).get("metadata", {}).get(
                     "deletionTimestamp")), within=30),
             get(owner, record=fields("metadata.finalizers")),
             patch(child, {"metadata": {"finalizers": None}}, record=None),
             get(owner, **_GONE)),
        case("gc-missing-owner", post(CM, cm("child", ownerReferences=[
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost",
             "uid": "00000000-0000-0000-0000-00000000dead"}])),
             get(child, **_GONE)),
        case("gc-two-owners-one-left", post(CM, cm("a"), save={"ua": "metadata.uid"}),
             post(CM, cm("b"), save={"ub": "metadata.uid"}),
             post(CM, cm("child", ownerReferences=[
                 {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "${ua}"},
                 {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "${ub}"}])),
             delete(f"{CM}/a"),
             get(child, record=fields("metadata.ownerReferences"),
                 until=lambda a: len((a.json or {}).get("metadata", {}).get(
                     "ownerReferences") or []) == 1, within=30)),
        case("gc-chain-background", *_owner_and_children(_owned("mid")),
             get(f"{CM}/mid", save={"mu": "metadata.uid"}, record=None),
             post(CM, cm("leaf", ownerReferences=[
                 {"apiVersion": "v1", "kind": "ConfigMap", "name": "mid", "uid": "${mu}"}])),
             delete(owner), get(f"{CM}/leaf", **_GONE), get(f"{CM}/mid")),
        case("gc-deployment-orphan-rs", post(DEPLOY, deployment("d"), record=None),
             delete(f"{DEPLOY}/d", {"propagationPolicy": "Orphan"},
                    record=fields("metadata.finalizers")),
             get(f"{DEPLOY}/d", **_GONE)),
        case("gc-cluster-owner-of-namespaced",
             post("/api/v1/namespaces", {"metadata": {"name": "${ns}-o"}},
                  save={"nu": "metadata.uid"}),
             post(CM, cm("child", ownerReferences=[
                 {"apiVersion": "v1", "kind": "Namespace", "name": "${ns}-o",
                  "uid": "${nu}"}])),
             delete("/api/v1/namespaces/${ns}-o"), get(child, **_GONE)),
    ]


CASES = [*_finalizers(), *_preconditions(), *_gc()]
