"""Conversion webhooks: a two-version kind of the suite's own (doohickeys.example.com, v1 and
v2 stored, `spec.size` <-> `spec.dimension`) converted by the toy webhook of
`hack.localcluster.conversion.toy_webhook`, which both servers call. Reads and writes across
versions, lists, watches, patches, the scale subresource, and what a refused conversion and a
webhook at a wrong path answer. The CRD is removed after the run: a conversion webhook that is
gone would stop kube-controller-manager 1.20's garbage collector for later tests."""

from __future__ import annotations

import copy
from typing import Any

from hack.localcluster.conversion.toy_webhook import widget_crd

from ..model import Case, Step, case, delete, events, fields, get, names, patch, post, watch
from ..target import Json, Target

CRD_NAME = "doohickeys.example.com"
V1 = "/apis/example.com/v1/namespaces/${ns}/doohickeys"
V2 = "/apis/example.com/v2/namespaces/${ns}/doohickeys"


def crd(client_config: Json) -> Json:
    doc = copy.deepcopy(widget_crd(client_config))
    doc["metadata"]["name"] = CRD_NAME
    doc["spec"]["names"] = {"plural": "doohickeys", "singular": "doohickey",
                            "kind": "Doohickey", "listKind": "DoohickeyList"}
    return doc


async def remove(target: Target) -> None:
    await target.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                    f"{CRD_NAME}")


def _d(name: str, version: str = "v1", **spec: Any) -> Json:
    return {"apiVersion": f"example.com/{version}", "kind": "Doohickey",
            "metadata": {"name": name}, "spec": spec}


def _forget(name: str) -> Step:
    return delete(f"{V2}/{name}", record=None)


_SPEC = fields("apiVersion", "spec")
_PORT = ((r"127\.0\.0\.1:\d+", "127.0.0.1:PORT"),)

CASES: list[Case] = [
    case("conv-create-v1-read-v2", post(V1, _d("a", size=3), record=_SPEC),
         get(f"{V2}/a", record=_SPEC), get(f"{V1}/a", record=_SPEC)),
    case("conv-create-v2-list-v1", post(V2, _d("a", "v2", dimension=4), record=_SPEC),
         post(V1, _d("b", size=1)),
         get(V1, record=names("items.0.spec", "items.1.spec", "items.0.apiVersion"))),
    case("conv-patch-v1", post(V2, _d("a", "v2", dimension=4)),
         patch(f"{V1}/a", {"spec": {"size": 7}}, record=_SPEC), get(f"{V2}/a", record=_SPEC)),
    case("conv-apply-v1", patch(f"{V1}/a", _d("a", size=2), "application/apply-patch+yaml",
                                params={"fieldManager": "m"},
                                record=fields("spec", "metadata.managedFields.0.apiVersion")),
         get(f"{V2}/a", record=_SPEC)),
    case("conv-scale-v1", post(V1, _d("a", size=1, replicas=1)),
         patch(f"{V1}/a/scale", {"spec": {"replicas": 3}}, record=fields("spec", "kind")),
         get(f"{V2}/a", record=_SPEC)),
    case("conv-status-v1", post(V1, _d("a", size=1)),
         patch(f"{V1}/a/status", {"status": {"phase": "up"}},
               record=fields("apiVersion", "spec", "status"))),
    case("conv-watch-v1", get(V1, save={"rv": "metadata.resourceVersion"}, record=None),
         post(V2, _d("a", "v2", dimension=5)),
         watch(V1, {"resourceVersion": "${rv}"}, events=1, within=10,
               record=events("apiVersion", "spec"))),
    # Objects that cannot be converted run last, one at a time, and are deleted (in the stored
    # version, which needs no conversion) before the case ends: while one exists, a list in
    # the other version fails, and the garbage collector lists every served kind.
    case("conv-refused-get", post(V2, _d("w", "v2", broken=True)), get(f"{V1}/w"),
         _forget("w"), scrub=_PORT, serial=True),
    case("conv-refused-list", post(V2, _d("w", "v2", broken=True)), get(V1), _forget("w"),
         scrub=_PORT, serial=True),
    case("conv-refused-create", post(V1, _d("x", broken=True)), scrub=_PORT),
    case("conv-same-version-no-call", post(V2, _d("w", "v2", broken=True)),
         get(f"{V2}/w", record=_SPEC), _forget("w"), serial=True),
]
