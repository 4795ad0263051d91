"""Server-side apply (ownership, conflicts, force, dry-run, managedFields) and patches of every
content type with their errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import APPLY, JSON_PATCH, MERGE, STRATEGIC, Case, Step, case, fields, get, patch, put
from .paths import CM, DEPLOY, GADGETS, cm, deployment, gadget

ONE = f"{CM}/a"
OWNERS = fields("data", "metadata.managedFields.0.manager", "metadata.managedFields.0.operation",
                "metadata.managedFields.1.manager", "metadata.managedFields.1.operation",
                "metadata.managedFields.0.fieldsV1", "metadata.managedFields.1.fieldsV1")


def _apply(body: Any, manager: str | None = "alice", force: bool = False, path: str = ONE,
           params: Mapping[str, str] | None = None, **kw: Any) -> Step:
    sent = {**({"fieldManager": manager} if manager else {}),
            **({"force": "true"} if force else {}), **(params or {})}
    return patch(path, body, APPLY, params=sent, **kw)


def _apply_cases() -> list[Case]:
    a = cm("a", {"x": "1"})
    return [
        case("apply-create", _apply(a, record=OWNERS)),
        case("apply-no-manager", _apply(a, manager=None)),
        case("apply-conflict", _apply(a), _apply(cm("a", {"x": "2"}), manager="bob")),
        case("apply-conflict-two-fields", _apply(cm("a", {"x": "1", "y": "1"})),
             _apply(cm("a", {"x": "2", "y": "2"}), manager="bob")),
        case("apply-force", _apply(a), _apply(cm("a", {"x": "2"}), manager="bob", force=True,
                                             record=OWNERS)),
        case("apply-shared-owner", _apply(a), _apply(a, manager="bob", record=OWNERS)),
        case("apply-drop-field", _apply(cm("a", {"x": "1", "y": "2"})),
             _apply(cm("a", {"x": "1"}), record=OWNERS)),
        case("apply-drop-shared-field", _apply(a), _apply(a, manager="bob"),
             _apply(cm("a", {"z": "1"}), record=OWNERS)),
        case("apply-vs-update-conflict", _apply(a),
             patch(ONE, {"data": {"x": "9"}}, params={"fieldManager": "editor"}),
             _apply(cm("a", {"x": "3"}), record=OWNERS)),
        case("apply-vs-update-conflict-message", _apply(a),
             put(ONE, cm("a", {"x": "9"}), params={"fieldManager": "kubectl-edit"}),
             _apply(cm("a", {"x": "3"}))),
        case("apply-dry-run", _apply(a, params={"dryRun": "All"}, record=OWNERS), get(ONE)),
        case("apply-force-without-apply", patch(ONE, {"data": {}}, MERGE,
                                                params={"force": "true"})),
        case("apply-missing-kind", _apply({"apiVersion": "v1", "metadata": {"name": "a"}})),
        case("apply-wrong-name", _apply(cm("b"))),
        case("apply-yaml-body", _apply("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
                                       "data:\n  y: two\n", record=OWNERS)),
        case("apply-bad-yaml", _apply("a: [b\n")),
        case("apply-managed-fields-set", _apply({**a, "metadata": {
            "name": "a", "managedFields": [{"manager": "x", "operation": "Apply"}]}})),
        case("apply-deployment-conflict", _apply(deployment("d"), path=f"{DEPLOY}/d"),
             _apply(deployment("d", replicas=3), manager="hpa", path=f"{DEPLOY}/d")),
        case("apply-deployment-containers-merge",
             _apply(deployment("d"), path=f"{DEPLOY}/d"),
             _apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                     "spec": {"selector": {"matchLabels": {"app": "d"}},
                              "template": {"metadata": {"labels": {"app": "d"}}, "spec": {
                                  "containers": [{"name": "side", "image": "s"}]}}}},
                    manager="bob", path=f"{DEPLOY}/d",
                    record=fields("spec.template.spec.containers"))),
        case("apply-gadget-conflict", _apply(gadget("g", size=1), path=f"{GADGETS}/g"),
             _apply(gadget("g", size=2), manager="bob", path=f"{GADGETS}/g")),
        case("apply-gadget-invalid", _apply(gadget("g", size=99), path=f"{GADGETS}/g")),
        case("apply-update-then-apply-labels", _apply(cm("a", labels={"l": "1"})),
             patch(ONE, {"metadata": {"labels": {"m": "2"}}},
                   params={"fieldManager": "labeler"}),
             _apply(cm("a"), record=fields("metadata.labels"))),
    ]


def _patches() -> list[Case]:
    seed = _apply(cm("a", {"x": "1"}), record=None)
    jp = JSON_PATCH
    return [
        case(f"patch-{i}", seed, patch(ONE, body, kind, record=fields("data")))
        for i, (body, kind) in {
            "json-add": ([{"op": "add", "path": "/data/y", "value": "2"}], jp),
            "json-test-fails": ([{"op": "test", "path": "/data/x", "value": "9"}], jp),
            "json-remove-missing": ([{"op": "remove", "path": "/data/nope"}], jp),
            "json-bad-op": ([{"op": "frobnicate", "path": "/data/x"}], jp),
            "json-not-list": ({"op": "add"}, jp),
            "json-bad-pointer": ([{"op": "add", "path": "data/y", "value": "2"}], jp),
            "json-replace-missing": ([{"op": "replace", "path": "/data/q", "value": "2"}], jp),
            "json-move": ([{"op": "move", "from": "/data/x", "path": "/data/z"}], jp),
            "json-copy": ([{"op": "copy", "from": "/data/x", "path": "/data/w"}], jp),
            "json-malformed": ("[{", jp),
            "json-index-out": ([{"op": "add", "path": "/metadata/finalizers/5",
                                 "value": "a.b/c"}], jp),
            "json-change-name": ([{"op": "replace", "path": "/metadata/name",
                                   "value": "b"}], jp),
            "merge-null-removes": ({"data": {"x": None, "y": "2"}}, MERGE),
            "merge-list": ([1, 2], MERGE),
            "merge-malformed": ("{", MERGE),
            "merge-change-kind": ({"kind": "Secret"}, MERGE),
            "merge-change-namespace": ({"metadata": {"namespace": "other"}}, MERGE),
            "merge-stale-rv": ({"metadata": {"resourceVersion": "1"}}, MERGE),
            "merge-data-int": ({"data": {"x": 5}}, MERGE),
            "strategic-cm": ({"data": {"y": "2"}}, STRATEGIC),
            "strategic-delete-directive": ({"data": {"$patch": "delete"}}, STRATEGIC),
            "strategic-replace-directive": ({"data": {"$patch": "replace", "q": "1"}},
                                            STRATEGIC),
            "strategic-bad-directive": ({"data": {"$patch": "explode"}}, STRATEGIC),
            "strategic-malformed": ("{", STRATEGIC),
            "content-type-bad": ({"data": {}}, "application/x-whatever"),
            "empty-merge": ({}, MERGE),
        }.items()
    ] + [
        case("patch-missing-object", patch(f"{CM}/nope", {"data": {}})),
        case("patch-gadget-strategic", _apply(gadget("g", size=1), path=f"{GADGETS}/g",
                                              record=None),
             patch(f"{GADGETS}/g", {"spec": {"size": 2}}, STRATEGIC)),
        case("patch-gadget-invalid", _apply(gadget("g", size=1), path=f"{GADGETS}/g",
                                            record=None),
             patch(f"{GADGETS}/g", {"spec": {"size": "big"}})),
        case("patch-deployment-strategic-containers",
             _apply(deployment("d"), path=f"{DEPLOY}/d", record=None),
             patch(f"{DEPLOY}/d", {"spec": {"template": {"spec": {"containers": [
                 {"name": "side", "image": "s"}]}}}}, STRATEGIC,
                 record=fields("spec.template.spec.containers"))),
        case("patch-deployment-strategic-delete-container",
             _apply(deployment("d"), path=f"{DEPLOY}/d", record=None),
             patch(f"{DEPLOY}/d", {"spec": {"template": {"spec": {"containers": [
                 {"name": "c", "$patch": "delete"}]}}}}, STRATEGIC,
                 record=fields("spec.template.spec.containers"))),
        case("patch-deployment-merge-replaces-list",
             _apply(deployment("d"), path=f"{DEPLOY}/d", record=None),
             patch(f"{DEPLOY}/d", {"spec": {"template": {"spec": {"containers": [
                 {"name": "side", "image": "s"}]}}}}, MERGE,
                 record=fields("spec.template.spec.containers"))),
        case("patch-dry-run", seed, patch(ONE, {"data": {"x": "2"}},
                                          params={"dryRun": "All"}, record=fields("data")),
             get(ONE, record=fields("data"))),
    ]


CASES = [*_apply_cases(), *_patches()]
