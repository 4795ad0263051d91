"""The generated CRDs: up to date on disk, both versions served (v1alpha1 stored) and converted
by the operator's webhook, structural, faithful to the API reference, and accepting every
manifest of the corpus."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

import api.v1alpha1 as v1alpha1
import api.v1beta1 as v1beta1
from api.crd import CRDS, build_crds, object_schema
from api.markers import field_info
from hack import gen_crds

Json = dict[str, Any]
MANIFESTS = Path(__file__).parent / "manifests"
SEEDS = Path(os.environ.get("DYNAMO_API_SEEDS", "/work/shared/seeds"))

# The only places the reference calls free-form (JSON path, "*" = any map key).
FREE_FORM = {
    "DynamoGraphDeployment": {
        "spec.services.*.extraPodSpec",
        "spec.services.*.extraPodSpec.mainContainer",
        "spec.services.*.eppConfig.config",
        # Pod templates of the preview features added after v0.8 (schemaless upstream).
        "spec.services.*.checkpoint.job.podTemplate",
        "spec.services.*.gpuMemoryService.extraClientPods[].podTemplate",
    },
    "DynamoComponentDeployment": {
        "spec.extraPodSpec",
        "spec.extraPodSpec.mainContainer",
        "spec.eppConfig.config",
        "spec.checkpoint.job.podTemplate",
        "spec.gpuMemoryService.extraClientPods[].podTemplate",
    },
    "DynamoGraphDeploymentRequest": {
        "spec.profilingConfig.config",
        "status.generatedDeployment",
    },
    "DynamoGraphDeploymentScalingAdapter": set(),
    "DynamoModel": set(),
}
# v1beta1: pod templates (schemaless, as the preview ones above), provider overrides' values,
# and the request's overrides and profiling results.
FREE_FORM_V1BETA1 = {
    "DynamoGraphDeployment": {
        "spec.providerOverride.value",
        "spec.components[].eppConfig.config",
        "spec.components[].experimental.checkpoint.job.podTemplate",
        "spec.components[].experimental.gpuMemoryService.extraClientPods[].podTemplate",
        "spec.components[].podTemplate",
        "spec.components[].providerOverride.value",
        "spec.components[].roles[].podTemplate",
        "spec.components[].roles[].providerOverride.value",
    },
    "DynamoComponentDeployment": {
        "spec.eppConfig.config",
        "spec.experimental.checkpoint.job.podTemplate",
        "spec.experimental.gpuMemoryService.extraClientPods[].podTemplate",
        "spec.podTemplate",
        "spec.providerOverride.value",
        "spec.roles[].podTemplate",
        "spec.roles[].providerOverride.value",
    },
    "DynamoGraphDeploymentRequest": {
        "spec.features.planner",
        "spec.overrides.dgd",
        "spec.overrides.profilingJob",
        "status.profilingResults.pareto[].config",
        "status.profilingResults.selectedConfig",
    },
    "DynamoGraphDeploymentScalingAdapter": set(),
    "DynamoModel": set(),
}
FREE_FORM_BY_VERSION = {"v1alpha1": FREE_FORM, "v1beta1": FREE_FORM_V1BETA1}


def _crd(kind: str) -> Json:
    return next(c for c in build_crds() if c["spec"]["names"]["kind"] == kind)


def _version(kind: str, version: str = "v1alpha1") -> Json:
    found: Json = next(v for v in _crd(kind)["spec"]["versions"] if v["name"] == version)
    return found


def _schema(kind: str, version: str = "v1alpha1") -> Json:
    schema: Json = _version(kind, version)["schema"]["openAPIV3Schema"]
    return schema


def _nodes(schema: Json, path: str = "") -> Iterator[tuple[str, Json]]:
    yield path, schema
    for name, sub in schema.get("properties", {}).items():
        yield from _nodes(sub, f"{path}.{name}" if path else name)
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _nodes(schema["additionalProperties"], f"{path}.*")
    if "items" in schema:
        yield from _nodes(schema["items"], f"{path}[]")


def _at(schema: Json, path: str) -> Json:
    node = schema
    for part in path.split("."):
        if part == "*":
            node = node["additionalProperties"]
        elif part.endswith("[]"):
            node = node["properties"][part[:-2]]["items"]
        else:
            node = node["properties"][part]
    return node


# --- the files on disk ------------------------------------------------------------------------


def test_committed_crds_are_up_to_date() -> None:
    stale = gen_crds.stale_files()
    assert not stale, f"regenerate with `python -m hack.gen_crds`: {stale}"


def test_check_mode_reports_stale_files(tmp_path: Path) -> None:
    assert gen_crds.main(["--check", "--output-dir", str(tmp_path)]) == 1
    assert gen_crds.main(["--output-dir", str(tmp_path)]) == 0
    assert gen_crds.main(["--check", "--output-dir", str(tmp_path)]) == 0
    (tmp_path / "nvidia.com_dynamomodels.yaml").write_text("edited\n")
    assert gen_crds.main(["--check", "--output-dir", str(tmp_path)]) == 1


def test_files_are_named_after_group_and_plural() -> None:
    assert sorted(gen_crds.render()) == [
        "nvidia.com_dynamocomponentdeployments.yaml",
        "nvidia.com_dynamographdeploymentrequests.yaml",
        "nvidia.com_dynamographdeployments.yaml",
        "nvidia.com_dynamographdeploymentscalingadapters.yaml",
        "nvidia.com_dynamomodels.yaml",
        "nvidia.com_dynamoworkermetadatas.yaml",
    ]
    for text in gen_crds.render().values():
        assert yaml.safe_load(text)["kind"] == "CustomResourceDefinition"


# --- names, versions, subresources, columns ----------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "short_names"),
    [
        ("DynamoGraphDeployment", ["dgd"]),
        ("DynamoComponentDeployment", ["dcd"]),
        ("DynamoGraphDeploymentRequest", ["dgdr"]),
        ("DynamoGraphDeploymentScalingAdapter", ["dgdsa"]),
        ("DynamoModel", ["dmodel", "dm"]),
    ],
)
def test_names_scope_and_version(kind: str, short_names: list[str]) -> None:
    crd = _crd(kind)
    spec = crd["spec"]
    assert crd["metadata"]["name"] == f"{spec['names']['plural']}.nvidia.com"
    assert spec["group"] == "nvidia.com"
    assert spec["scope"] == "Namespaced"
    assert spec["names"]["shortNames"] == short_names
    assert spec["names"]["categories"] == ["dynamo"]
    assert spec["names"]["listKind"] == f"{kind}List"
    # Both versions served; v1beta1 stores the DGD, DCD and DGDR, as the original's, and
    # v1alpha1 the scaling adapter and the DynamoModel, as the original's.
    versions = [(v["name"], v["served"], v["storage"]) for v in spec["versions"]]
    stores_hub = kind not in ("DynamoGraphDeploymentScalingAdapter", "DynamoModel")
    assert versions == [("v1alpha1", True, not stores_hub), ("v1beta1", True, stores_hub)]
    for version in spec["versions"]:
        assert version["subresources"]["status"] == {}
    alpha, beta = spec["versions"]
    assert "deprecated" not in beta and "deprecationWarning" not in beta
    # v1alpha1 is deprecated, with the original's text, where the original deprecates it.
    if kind in ("DynamoGraphDeploymentScalingAdapter", "DynamoModel"):
        assert "deprecated" not in alpha and "deprecationWarning" not in alpha
    else:
        assert alpha["deprecated"] is True
        assert alpha["deprecationWarning"] == (
            f"nvidia.com/v1alpha1 {kind} is deprecated; use nvidia.com/v1beta1 {kind}")
    schemas = [v["schema"]["openAPIV3Schema"] for v in spec["versions"]]
    assert schemas[0] != schemas[1]


def test_every_crd_converts_through_the_operator_webhook() -> None:
    for crd in build_crds():
        assert crd["spec"]["conversion"] == {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {
                        "name": "dynamo-operator-webhook-service",
                        "namespace": "dynamo-system",
                        "path": "/convert",
                    }
                },
            },
        }


def test_v1beta1_components_are_a_list_map_keyed_by_name() -> None:
    components = _at(_schema("DynamoGraphDeployment", "v1beta1"), "spec.components")
    assert components["type"] == "array"
    assert components["maxItems"] == 25
    assert components["x-kubernetes-list-type"] == "map"
    assert components["x-kubernetes-list-map-keys"] == ["name"]
    assert "name" in components["items"]["required"]  # a map key must be required


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
def test_only_the_scaling_adapter_has_a_scale_subresource(version: str) -> None:
    for crd in build_crds():
        kind = crd["spec"]["names"]["kind"]
        scale = _version(kind, version)["subresources"].get("scale")
        if kind == "DynamoGraphDeploymentScalingAdapter":
            assert scale == {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".status.selector",
            }
        else:
            assert scale is None


@pytest.mark.parametrize(
    ("kind", "columns"),
    [
        (
            "DynamoGraphDeployment",
            [
                ("Ready", '.status.conditions[?(@.type=="Ready")].status', "string", 0),
                ("Backend", ".spec.backendFramework", "string", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("State", ".status.state", "string", 1),
                ("Reason", '.status.conditions[?(@.type=="Ready")].reason', "string", 1),
                ("Restart", ".status.restart.phase", "string", 1),
                ("GPUs", ".status.gpus.requested", "integer", 1),
            ],
        ),
        (
            "DynamoComponentDeployment",
            [
                ("Component", ".spec.componentType", "string", 0),
                ("Available", '.status.conditions[?(@.type=="Available")].status', "string", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("Backend", ".spec.backendFramework", "string", 1),
                ("Service", ".spec.serviceName", "string", 1),
                ("Replicas", ".spec.replicas", "integer", 1),
                ("Ready-Replicas", ".status.service.readyReplicas", "integer", 1),
            ],
        ),
        (
            "DynamoGraphDeploymentRequest",
            [
                ("Model", ".spec.model", "string", 0),
                ("Backend", ".status.backend", "string", 0),
                ("State", ".status.state", "string", 0),
                ("DGD-State", ".status.deployment.state", "string", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("DGD", ".status.deployment.name", "string", 1),
            ],
        ),
        (
            "DynamoGraphDeploymentScalingAdapter",
            [
                ("DGD", ".spec.dgdRef.name", "string", 0),
                ("Service", ".spec.dgdRef.serviceName", "string", 0),
                ("Replicas", ".status.replicas", "integer", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("Desired", ".spec.replicas", "integer", 1),
                ("Last-Scaled", ".status.lastScaleTime", "date", 1),
                ("Ready", '.status.conditions[?(@.type=="Ready")].status', "string", 1),
            ],
        ),
        (
            "DynamoModel",
            [
                ("BaseModel", ".spec.baseModelName", "string", 0),
                ("Type", ".spec.modelType", "string", 0),
                ("Ready", ".status.readyEndpoints", "integer", 0),
                ("Total", ".status.totalEndpoints", "integer", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("Model", ".spec.modelName", "string", 1),
            ],
        ),
    ],
)
def test_printer_columns(kind: str, columns: list[tuple[str, str, str, int]]) -> None:
    got = _version(kind)["additionalPrinterColumns"]
    assert [(c["name"], c["jsonPath"], c["type"], c.get("priority", 0)) for c in got] == columns


_READY = '.status.conditions[?(@.type=="Ready")]'


@pytest.mark.parametrize(
    ("kind", "columns"),
    [
        (
            "DynamoGraphDeployment",
            [
                ("Ready", _READY + ".status", "string", 0),
                ("Backend", ".spec.backendFramework", "string", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("State", ".status.state", "string", 1),
                ("Reason", _READY + ".reason", "string", 1),
                ("Restart", ".status.restart.phase", "string", 1),
                ("GPUs", ".status.gpus.requested", "integer", 1),
            ],
        ),
        (
            "DynamoComponentDeployment",
            [
                ("Type", ".spec.type", "string", 0),
                ("Available", '.status.conditions[?(@.type=="Available")].status', "string", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("Backend", ".spec.backendFramework", "string", 1),
                ("Component", ".spec.name", "string", 1),
                ("Replicas", ".spec.replicas", "integer", 1),
                ("Ready-Replicas", ".status.component.readyReplicas", "integer", 1),
            ],
        ),
        (
            "DynamoGraphDeploymentRequest",
            [
                ("Model", ".spec.model", "string", 0),
                ("Backend", ".spec.backend", "string", 0),
                ("Phase", ".status.phase", "string", 0),
                ("Profiling", ".status.profilingPhase", "string", 0),
                ("Reason", '.status.conditions[?(@.type=="Succeeded")].reason', "string", 0),
                ("Message", '.status.conditions[?(@.type=="Succeeded")].message', "string", 0),
                ("DGD", ".status.dgdName", "string", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("Job", ".status.profilingJobName", "string", 1),
            ],
        ),
        (
            "DynamoGraphDeploymentScalingAdapter",
            [
                ("DGD", ".spec.dgdRef.name", "string", 0),
                ("Component", ".spec.dgdRef.componentName", "string", 0),
                ("Replicas", ".status.replicas", "integer", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("Desired", ".spec.replicas", "integer", 1),
                ("Last-Scaled", ".status.lastScaleTime", "date", 1),
                ("Ready", _READY + ".status", "string", 1),
            ],
        ),
        (
            "DynamoModel",
            [
                ("BaseModel", ".spec.baseModelName", "string", 0),
                ("Type", ".spec.modelType", "string", 0),
                ("Ready", ".status.readyEndpoints", "integer", 0),
                ("Total", ".status.totalEndpoints", "integer", 0),
                ("Age", ".metadata.creationTimestamp", "date", 0),
                ("Model", ".spec.modelName", "string", 1),
            ],
        ),
    ],
)
def test_v1beta1_printer_columns(kind: str, columns: list[tuple[str, str, str, int]]) -> None:
    got = _version(kind, "v1beta1")["additionalPrinterColumns"]
    assert [(c["name"], c["jsonPath"], c["type"], c.get("priority", 0)) for c in got] == columns


def test_column_paths_exist_in_the_schema() -> None:
    for definition in CRDS:
        for _, model, columns in definition.versions():
            schema = object_schema(model)
            for column in columns:
                path = column.json_path.split("[")[0].lstrip(".")
                if path.startswith("metadata."):
                    continue
                _at(schema, path)  # raises KeyError when the column points nowhere


# --- structure ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
@pytest.mark.parametrize("kind", list(FREE_FORM))
def test_schema_is_structural(kind: str, version: str) -> None:
    types = {"object", "array", "string", "integer", "boolean", "number"}
    for path, node in _nodes(_schema(kind, version)):
        if node.get("x-kubernetes-int-or-string"):
            assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}], path
            continue
        assert "anyOf" not in node and "oneOf" not in node and "allOf" not in node, path
        assert node.get("type") in types, path
        if node["type"] == "object":
            assert not ("properties" in node and "additionalProperties" in node), path
        if node["type"] == "array":
            assert "items" in node, path
    assert _schema(kind, version)["properties"]["metadata"] == {"type": "object"}


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
@pytest.mark.parametrize("kind", list(FREE_FORM))
def test_unknown_fields_are_kept_only_where_the_reference_says_free_form(
    kind: str, version: str
) -> None:
    schema = _schema(kind, version)
    preserving = {
        path for path, node in _nodes(schema) if node.get("x-kubernetes-preserve-unknown-fields")
    }
    assert preserving == FREE_FORM_BY_VERSION[version][kind]
    for path in preserving:
        assert _at(schema, path)["type"] == "object"


def test_generated_deployment_is_an_embedded_resource() -> None:
    embedded = [
        path
        for path, node in _nodes(_schema("DynamoGraphDeploymentRequest"))
        if node.get("x-kubernetes-embedded-resource")
    ]
    assert embedded == ["status.generatedDeployment"]


def test_every_model_field_is_described() -> None:
    for cls in _model_classes() + _model_classes(v1beta1):
        for attribute in attrs.fields(cls):
            if attribute.name != "metadata":
                assert field_info(attribute).description, f"{cls.__name__}.{attribute.name}"
        assert cls.__doc__, cls.__name__


def test_kubectl_explain_has_text_for_services() -> None:
    services = _at(_schema("DynamoGraphDeployment"), "spec.services")
    assert "components of the graph" in services["description"]
    replicas = services["additionalProperties"]["properties"]["replicas"]
    assert replicas["minimum"] == 0 and "scaling adapter" in replicas["description"]


@pytest.mark.parametrize(
    ("kind", "path", "markers"),
    [
        ("DynamoGraphDeployment", "spec.pvcs", {"maxItems": 100}),
        ("DynamoGraphDeployment", "spec.services", {"maxProperties": 25}),
        (
            "DynamoGraphDeployment",
            "spec.services.*.multinode.nodeCount",
            {"minimum": 2, "default": 2},
        ),
        ("DynamoGraphDeployment", "spec.services.*.replicas", {"minimum": 0}),
        (
            "DynamoGraphDeployment",
            "spec.restart.strategy.type",
            {"default": "Sequential", "enum": ["Sequential", "Parallel"]},
        ),
        ("DynamoGraphDeployment", "spec.restart.id", {"minLength": 1}),
        ("DynamoGraphDeployment", "spec.backendFramework", {"enum": ["sglang", "vllm", "trtllm"]}),
        (
            "DynamoComponentDeployment",
            "spec.backendFramework",
            {"enum": ["sglang", "vllm", "trtllm"]},
        ),
        ("DynamoGraphDeploymentRequest", "spec.useMocker", {"default": False}),
        ("DynamoGraphDeploymentRequest", "spec.backend", {"enum": ["vllm", "sglang", "trtllm"]}),
        (
            "DynamoGraphDeploymentRequest",
            "spec.profilingConfig.configMapRef.key",
            {"default": "disagg.yaml"},
        ),
        ("DynamoModel", "spec.modelType", {"default": "base", "enum": ["base", "lora", "adapter"]}),
        ("DynamoGraphDeploymentScalingAdapter", "spec.replicas", {"minimum": 0}),
        ("DynamoGraphDeploymentScalingAdapter", "spec.dgdRef.serviceName", {"minLength": 1}),
    ],
)
def test_validation_markers(kind: str, path: str, markers: Json) -> None:
    node = _at(_schema(kind), path)
    assert {k: node.get(k) for k in markers} == markers


@pytest.mark.parametrize(
    ("kind", "path", "required"),
    [
        ("DynamoGraphDeploymentRequest", "", ["spec"]),
        ("DynamoGraphDeploymentRequest", "spec", ["backend", "model", "profilingConfig"]),
        ("DynamoGraphDeploymentRequest", "spec.profilingConfig", ["profilerImage"]),
        ("DynamoGraphDeploymentScalingAdapter", "spec", ["dgdRef", "replicas"]),
        ("DynamoModel", "spec", ["baseModelName", "modelName"]),
        ("DynamoModel", "spec.source", ["uri"]),
        ("DynamoGraphDeployment", "spec.pvcs", None),
        ("DynamoGraphDeployment", "spec.restart", ["id"]),
    ],
)
def test_required_fields(kind: str, path: str, required: list[str] | None) -> None:
    node = _at(_schema(kind), path) if path else _schema(kind)
    if node.get("type") == "array":
        node = node["items"]
        required = ["name"]
    assert node.get("required") == required


def test_pvc_create_rule_and_legacy_request_rules_are_cel() -> None:
    pvc = _at(_schema("DynamoGraphDeployment"), "spec.pvcs")["items"]
    assert "has(self.storageClass)" in pvc["x-kubernetes-validations"][0]["rule"]
    rules = _at(_schema("DynamoGraphDeploymentRequest"), "spec")["x-kubernetes-validations"]
    assert {r["rule"] for r in rules} == {
        "!has(self.modelName)",
        "!has(self.sla)",
        "!has(self.gpu)",
        "!has(self.online)",
    }


# --- the corpus against the schema (what the API server would check) -------------------------


def _schema_errors(value: Any, schema: Json, path: str = "") -> list[str]:
    """The subset of OpenAPI checks our schemas use, applied as the API server would."""
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, int | str):
            return [f"{path}: must be an integer or a string"]
        if (
            isinstance(value, str)
            and "pattern" in schema
            and not re.search(schema["pattern"], value)
        ):
            return [f"{path}: does not match {schema['pattern']}"]
        return []
    kind = schema.get("type")
    checks: dict[Any, Any] = {
        "object": dict,
        "array": list,
        "string": str,
        "integer": int,
        "boolean": bool,
        "number": int | float,
    }
    if not isinstance(value, checks[kind]) or (kind == "integer" and isinstance(value, bool)):
        return [f"{path}: must be of type {kind}"]
    node: Any = value  # checked above; `Any` keeps mypy from narrowing to object
    errors: list[str] = []
    if "enum" in schema and node not in schema["enum"]:
        errors.append(f"{path}: unsupported value {node!r}")
    if "minimum" in schema and node < schema["minimum"]:
        errors.append(f"{path}: below minimum")
    if "minLength" in schema and len(node) < schema["minLength"]:
        errors.append(f"{path}: too short")
    if "pattern" in schema and not re.search(schema["pattern"], node):
        errors.append(f"{path}: does not match {schema['pattern']}")
    if kind == "array":
        if len(node) > schema.get("maxItems", len(node)):
            errors.append(f"{path}: too many items")
        for i, item in enumerate(node):
            errors += _schema_errors(item, schema["items"], f"{path}[{i}]")
    if kind == "object":
        if len(node) > schema.get("maxProperties", len(node)):
            errors.append(f"{path}: too many properties")
        errors += [f"{path}.{r}: required" for r in schema.get("required", []) if r not in node]
        properties = schema.get("properties", {})
        for key, item in node.items():
            sub = f"{path}.{key}" if path else key
            if key in properties:
                errors += _schema_errors(item, properties[key], sub)
            elif "additionalProperties" in schema:
                errors += _schema_errors(item, schema["additionalProperties"], sub)
            elif not schema.get("x-kubernetes-preserve-unknown-fields") and path != "metadata":
                # (The API server validates object metadata itself.)
                errors.append(f"{sub}: unknown field")
    return errors


def _corpus(pattern: str) -> list[Any]:
    return [
        pytest.param(doc, id=f"{p.stem}-{i}")
        for p in sorted(MANIFESTS.glob(pattern))
        for i, doc in enumerate(yaml.safe_load_all(p.read_text()))
    ]


@pytest.mark.parametrize("doc", _corpus("*.yaml"))
def test_corpus_passes_the_crd_schema(doc: Json) -> None:
    assert _schema_errors(doc, _schema(doc["kind"])) == []


V1BETA1_EXAMPLES = Path(__file__).parents[2] / "deploy" / "examples" / "v1beta1"


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(doc, id=f"{p.stem}-{i}")
        for p in sorted(V1BETA1_EXAMPLES.rglob("*.yaml"))
        for i, doc in enumerate(yaml.safe_load_all(p.read_text()))
        if doc and str(doc.get("apiVersion")) == "nvidia.com/v1beta1"
    ],
)
def test_v1beta1_examples_pass_the_v1beta1_schema(doc: Json) -> None:
    assert _schema_errors(doc, _schema(doc["kind"], "v1beta1")) == []


def test_schema_catches_what_the_api_server_would() -> None:
    doc = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "x"},
        "spec": {
            "backendFramework": "onnx",
            "services": {"w": {"replicas": -1, "multinode": {"nodeCount": 1}, "typo": 1}},
            "pvcs": [{"size": "ten"}],
        },
    }
    assert sorted(_schema_errors(doc, _schema("DynamoGraphDeployment"))) == [
        "spec.backendFramework: unsupported value 'onnx'",
        "spec.pvcs[0].name: required",
        "spec.pvcs[0].size: does not match "
        + _at(_schema("DynamoGraphDeployment"), "spec.pvcs")["items"]["properties"]["size"][
            "pattern"
        ],
        "spec.services.w.multinode.nodeCount: below minimum",
        "spec.services.w.replicas: below minimum",
        "spec.services.w.typo: unknown field",
    ]


# --- the published API reference (the contract) -----------------------------------------------

_ROW = re.compile(r"^\| `(?P<name>\w+)` _")


def _reference_tables(text: str) -> dict[str, dict[str, tuple[str, str]]]:
    """Type name -> field -> (default, validation) from the reference markdown."""
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("#### "):
            current = tables.setdefault(line[5:].strip(), {})
        elif current is not None and (match := _ROW.match(line)):
            cells = line.strip().strip("|").rsplit("|", 2)
            if len(cells) == 3:
                current[match["name"]] = (cells[1].strip(), cells[2].strip())
    return {name: rows for name, rows in tables.items() if rows}


def _model_classes(module: Any = v1alpha1) -> list[type]:
    return [c for c in vars(module).values() if isinstance(c, type) and attrs.has(c)]


def _class_schema(cls: type) -> Json:
    return object_schema(cls)


@pytest.mark.skipif(not (SEEDS / "api-reference-v1alpha1.md").is_file(), reason="no seeds")
def test_every_reference_field_and_marker_is_in_the_schema() -> None:
    tables = _reference_tables((SEEDS / "api-reference-v1alpha1.md").read_text())
    checked = 0
    for type_name, rows in tables.items():
        cls = getattr(v1alpha1, type_name, None)
        if cls is None:
            # Only enum-like string types and the core ConfigMapKeySelector lack a class.
            assert all(validation == "" for _, validation in rows.values()) or type_name in {
                "ComponentKind",
                "RestartPhase",
                "RestartStrategyType",
            }, type_name
            continue
        schema = _class_schema(cls)
        for field, (default, validation) in rows.items():
            assert field in schema["properties"], f"{type_name}.{field} missing"
            node = schema["properties"][field]
            markers = [m.strip() for m in validation.split("<br />") if m.strip()]
            for marker in markers:
                key, _, value = marker.partition(":")
                value = value.strip()
                where = f"{type_name}.{field} {marker}"
                if key == "Required":
                    assert field in schema.get("required", []), where
                elif key == "Enum":
                    assert node["enum"] == value.strip("[]").split(), where
                elif key in ("Minimum", "MinLength", "MaxItems", "MaxProperties"):
                    json_key = key[0].lower() + key[1:]
                    assert node[json_key] == int(value), where
                elif key == "Type":
                    assert node["type"] == value, where
                elif key == "EmbeddedResource":
                    assert node["x-kubernetes-embedded-resource"] is True, where
            if default:
                expected: Any = {"false": False, "true": True}.get(default, default)
                if isinstance(expected, str) and expected.isdigit():
                    expected = int(expected)
                assert node.get("default") == expected, f"{type_name}.{field} default"
            checked += 1
    assert checked > 150


@pytest.mark.skipif(not (SEEDS / "api-reference-v1alpha1-older.md").is_file(), reason="no seeds")
def test_older_request_shape_is_declared() -> None:
    tables = _reference_tables((SEEDS / "api-reference-v1alpha1-older.md").read_text())
    spec = _class_schema(v1alpha1.DynamoGraphDeploymentRequestSpec)
    assert set(tables["DynamoGraphDeploymentRequestSpec"]) <= set(spec["properties"])
    sla = spec["properties"]["sla"]
    assert set(tables["SLASpec"]) == set(sla["properties"])
    assert set(tables["GPUSpec"]) == set(spec["properties"]["gpu"]["properties"])
