"""Scale and status subresources (the suite's Gadget CRD, Deployments, our DGDSA), Table output
for built-in kinds and custom resources, and our DynamoModel's schema defaults and refusals."""

from __future__ import annotations

from typing import Any

from ..model import PUBLISHED, TABLE, Case, Record, case, fields, get, patch, post, put
from ..target import Answer
from .paths import CM, DEPLOY, GADGETS, NAMESPACES, SA, SECRETS, cm, deployment, gadget, secret

DGDSA = "/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamographdeploymentscalingadapters"
MODELS = "/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamomodels"
_OLD_NAMES_LINK = "http://kubernetes.io/docs/user-guide/identifiers#names"
_NAMES_LINK = "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
SCALE = fields("apiVersion", "kind", "spec", "status", "metadata.name")
G = f"{GADGETS}/g"


def table(answer: Answer) -> Any:
    """A Table's columns and cells (Age/Created columns blanked: they tell time)."""
    if answer.code >= 400 or not isinstance(answer.json, dict):
        return [answer.code, answer.json if answer.code >= 400 else answer.text[:200]]
    body = answer.json
    # The one documentation change every table shows: ObjectMeta.name's link moved after 1.20.
    columns = [{**c, "description": str(c.get("description", "")).replace(
        _OLD_NAMES_LINK, _NAMES_LINK)} for c in body.get("columnDefinitions") or []]
    timed = {i for i, c in enumerate(columns) if c.get("name") in ("Age", "Created At")}
    rows = [row for row in body.get("rows") or []
            if (row.get("cells") or [None])[0] not in PUBLISHED]
    return [answer.code, body.get("kind"), body.get("apiVersion"), columns,
            [[None if i in timed else cell for i, cell in enumerate(row.get("cells", []))]
             for row in rows],
            [sorted((row.get("object") or {}).keys()) for row in rows]]


def _tables() -> list[Case]:
    def t(id: str, *setup: Any, path: str, accept: str = TABLE,
          params: dict[str, str] | None = None, record: Record = table) -> Case:
        return case(id, *setup, get(path, accept=accept, params=params or {}, record=record))
    return [
        t("table-configmaps", post(CM, cm("a", {"x": "1", "y": "2"})), path=CM),
        t("table-configmap-one", post(CM, cm("a")), path=f"{CM}/a"),
        # One Secret, not the list: 1.20's token controller adds the namespace's
        # default-token Secret whenever it gets to it.
        t("table-secrets", post(SECRETS, secret("s")), path=f"{SECRETS}/s"),
        t("table-serviceaccounts", post(SA, {"metadata": {"name": "robot"}}),
          path=f"{SA}/robot"),
        t("table-namespace", path="/api/v1/namespaces/${ns}"),
        t("table-deployments", post(DEPLOY, deployment("d", replicas=2)), path=DEPLOY),
        t("table-gadgets", post(GADGETS, gadget("g", size=3, mode="fast")), path=GADGETS),
        t("table-gadget-wide", post(GADGETS, gadget("g", size=3)), path=G),
        t("table-include-object", post(CM, cm("a")), path=CM,
          params={"includeObject": "Object"}),
        t("table-include-none", post(CM, cm("a")), path=CM, params={"includeObject": "None"}),
        t("table-include-bad", post(CM, cm("a")), path=CM, params={"includeObject": "All"}),
        t("table-v1beta1", post(CM, cm("a")), path=CM,
          accept="application/json;as=Table;v=v1beta1;g=meta.k8s.io"),
        t("table-bad-version", path=CM, accept="application/json;as=Table;v=v9;g=meta.k8s.io"),
        t("table-with-fallback", post(CM, cm("a")), path=CM,
          accept=f"{TABLE}, application/json"),
        t("table-empty-list", path=CM),
        t("table-missing-object", path=f"{CM}/nope"),
        t("table-dgdsa", post(DGDSA, _dgdsa("s", 2)), path=DGDSA),
        t("table-models", post(MODELS, _model("m")), path=MODELS),
        t("table-partial-metadata", post(CM, cm("a")), path=CM,
          accept="application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
          record=fields("kind", "apiVersion", "items.0.metadata.name", "items.0.data")),
        t("table-namespaces-label", path=NAMESPACES,
          params={"labelSelector": "differential.example.com/case=${ns}"}),
    ]


def _dgdsa(name: str, replicas: int) -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": {"name": name},
            "spec": {"replicas": replicas, "dgdRef": {"name": "g", "serviceName": "decode"}}}


def _model(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoModel",
            "metadata": {"name": name},
            "spec": {"modelName": "org/model", "baseModelName": "org/model", **spec}}


def _subresources() -> list[Case]:
    seed = post(GADGETS, gadget("g", size=1, replicas=1))
    gscale = f"{G}/scale"
    return [
        case("scale-gadget-get", seed, get(gscale, record=SCALE)),
        case("scale-gadget-put", seed, put(gscale, {
            "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "g"},
            "spec": {"replicas": 4}}, record=SCALE), get(G, record=fields("spec"))),
        case("scale-gadget-patch", seed, patch(gscale, {"spec": {"replicas": 3}},
                                               record=SCALE)),
        case("scale-gadget-negative", seed, patch(gscale, {"spec": {"replicas": -1}})),
        case("scale-gadget-wrong-name", seed, put(gscale, {
            "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "x"},
            "spec": {"replicas": 4}})),
        case("scale-gadget-stale-rv", seed, put(gscale, {
            "apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "g", "resourceVersion": "1"}, "spec": {"replicas": 4}})),
        case("scale-gadget-missing", get(f"{GADGETS}/nope/scale")),
        case("scale-gadget-selector", seed,
             patch(f"{G}/status", {"status": {"replicas": 2, "selector": "app=g"}},
                   record=None),
             get(gscale, record=SCALE)),
        case("status-gadget-ignores-spec", seed,
             patch(f"{G}/status", {"spec": {"size": 5}, "status": {"phase": "Up"}},
                   record=fields("spec", "status"))),
        case("status-main-ignores-status", seed,
             patch(G, {"spec": {"size": 2}, "status": {"phase": "Up"}},
                   record=fields("spec", "status"))),
        case("status-gadget-invalid", seed,
             patch(f"{G}/status", {"status": {"replicas": "many"}})),
        case("status-gadget-get", seed, get(f"{G}/status", record=fields("kind", "spec"))),
        case("status-post-refused", post(f"{G}/status", gadget("g"))),
        case("status-generation", seed, patch(G, {"spec": {"size": 2}}, record=None),
             patch(f"{G}/status", {"status": {"phase": "x"}}, record=None),
             get(G, record=fields("metadata.generation"))),
        case("scale-deployment-get", post(DEPLOY, deployment("d", replicas=2)),
             get(f"{DEPLOY}/d/scale", record=SCALE)),
        case("scale-deployment-patch", post(DEPLOY, deployment("d", replicas=2)),
             patch(f"{DEPLOY}/d/scale", {"spec": {"replicas": 5}},
                   record=fields("spec")),
             get(f"{DEPLOY}/d", record=fields("spec.replicas"))),
        case("scale-configmap-none", post(CM, cm("a")), get(f"{CM}/a/scale")),
        case("scale-dgdsa", post(DGDSA, _dgdsa("s", 2)), get(f"{DGDSA}/s/scale", record=SCALE),
             patch(f"{DGDSA}/s/scale", {"spec": {"replicas": 6}}, record=SCALE),
             get(f"{DGDSA}/s", record=fields("spec"))),
        case("dgdsa-missing-ref", post(DGDSA, {**_dgdsa("s", 1), "spec": {"replicas": 1}})),
        case("dgdsa-negative", post(DGDSA, _dgdsa("s", -1))),
        case("model-defaults", post(MODELS, _model("m"), record=fields("spec"))),
        case("model-bad-type", post(MODELS, _model("m", modelType="huge"))),
        case("gadget-size-too-big", post(GADGETS, gadget("g", size=11))),
        case("gadget-size-negative", post(GADGETS, gadget("g", size=-1))),
        case("gadget-mode-enum", post(GADGETS, gadget("g", mode="warp"))),
        case("gadget-name-too-long", post(GADGETS, gadget("g", name="abcdefghij"))),
        case("gadget-name-pattern", post(GADGETS, gadget("g", name="ABC"))),
        case("gadget-tags-too-many", post(GADGETS, gadget("g", tags=["a", "b", "c"]))),
        case("gadget-tags-wrong-item", post(GADGETS, gadget("g", tags=[1]))),
        case("gadget-spec-not-object", post(GADGETS, {**gadget("g"), "spec": "x"})),
        case("gadget-name-invalid", post(GADGETS, gadget("G_1"))),
        case("gadget-unknown-field-pruned", post(GADGETS, {**gadget("g", size=1),
                                                          "extra": 1},
                                                 record=fields("spec", "extra"))),
        case("gadget-wrong-type", post(GADGETS, gadget("g", size="one"))),
        case("gadget-get-missing", get(f"{GADGETS}/nope")),
        case("gadget-list-short-missing", get("/apis/differential.example.com/v1/gds")),
    ]


CASES = [*_tables(), *_subresources()]
