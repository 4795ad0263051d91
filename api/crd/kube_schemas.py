"""OpenAPI schemas of the Kubernetes types our CRDs embed (see `api.kube`).

Small types get a full structural schema, so the API server validates them as it would in a
built-in object. Types that are large and free-form by nature (Container, arbitrary JSON, whole
objects) keep unknown fields instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Json = dict[str, Any]

# Kubernetes quantity syntax: sign, number, then a binary, decimal or exponent suffix.
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


def _string(description: str = "", **extra: Any) -> Json:
    return _described({"type": "string", **extra}, description)


def _integer(description: str = "", fmt: str = "int32", **extra: Any) -> Json:
    return _described({"type": "integer", "format": fmt, **extra}, description)


def _boolean(description: str = "") -> Json:
    return _described({"type": "boolean"}, description)


def _object(properties: Json, required: tuple[str, ...] = (), description: str = "") -> Json:
    schema: Json = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return _described(schema, description)


def _array(items: Json, description: str = "") -> Json:
    return _described({"type": "array", "items": items}, description)


def _described(schema: Json, description: str) -> Json:
    if description:
        schema["description"] = description
    return schema


def quantity(description: str = "") -> Json:
    """int-or-string holding a quantity."""
    return _described(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        },
        description,
    )


def _int_or_string(description: str = "") -> Json:
    return _described(
        {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
        description,
    )


def free_form(description: str = "") -> Json:
    """An object whose content the API server keeps without checking it."""
    return _described({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, description)


def _key_ref(what: str) -> Json:
    # No `default: ''` on `name` (nor on grpc's `service`), although upstream's schemas carry
    # one: Kubernetes 1.20 reads an empty-string default back as null and refuses the CRD, and
    # a missing name means the same as '' to the API server and the kubelet; the operator only
    # passes these fields on.
    return _object(
        {
            "key": _string(f"Key to read from the {what}."),
            "name": _string(f"Name of the {what}."),
            "optional": _boolean(f"Whether the {what} or its key may be missing."),
        },
        required=("key",),
    )


def _env_var() -> Json:
    value_from = _object(
        {
            "configMapKeyRef": _key_ref("ConfigMap"),
            "fieldRef": _object(
                {
                    "apiVersion": _string("Schema version of fieldPath, v1 by default."),
                    "fieldPath": _string("Pod field to read, e.g. metadata.name."),
                },
                required=("fieldPath",),
            ),
            "resourceFieldRef": _object(
                {
                    "containerName": _string("Container whose resource is read."),
                    "divisor": quantity("Unit the value is expressed in."),
                    "resource": _string("Resource to read, e.g. limits.cpu."),
                },
                required=("resource",),
            ),
            "secretKeyRef": _key_ref("Secret"),
        },
        description="Where the value comes from when it is not literal.",
    )
    return _object(
        {
            "name": _string("Name of the variable."),
            "value": _string("Literal value; $(VAR) references are expanded."),
            "valueFrom": value_from,
        },
        required=("name",),
    )


def _probe() -> Json:
    port = _int_or_string("Port number or name.")
    return _object(
        {
            "exec": _object(
                {"command": _array(_string(), "Command run in the container.")},
                description="Run a command; exit status 0 means healthy.",
            ),
            "failureThreshold": _integer("Failures in a row that count as failed."),
            "grpc": _object(
                {
                    "port": _integer("Port of the gRPC health service."),
                    "service": _string("Service name sent in the health check."),
                },
                required=("port",),
                description="Call the gRPC health checking protocol.",
            ),
            "httpGet": _object(
                {
                    "host": _string("Host to connect to; the pod IP by default."),
                    "httpHeaders": _array(
                        _object(
                            {"name": _string("Header name."), "value": _string("Header value.")},
                            required=("name", "value"),
                        ),
                        "Extra request headers.",
                    ),
                    "path": _string("Path to request."),
                    "port": port,
                    "scheme": _string("HTTP or HTTPS."),
                },
                required=("port",),
                description="Send an HTTP GET; a 2xx or 3xx answer means healthy.",
            ),
            "initialDelaySeconds": _integer("Wait after container start before probing."),
            "periodSeconds": _integer("Seconds between probes."),
            "successThreshold": _integer("Successes in a row that count as success."),
            "tcpSocket": _object(
                {"host": _string("Host to connect to."), "port": port},
                required=("port",),
                description="Open a TCP connection.",
            ),
            "terminationGracePeriodSeconds": _integer(
                "Grace period for a pod stopped by a failing probe.", fmt="int64"
            ),
            "timeoutSeconds": _integer("Seconds before a probe times out."),
        },
    )


def _condition() -> Json:
    return _object(
        {
            "lastTransitionTime": _string("When the status last changed.", format="date-time"),
            "message": _string("Human-readable details.", maxLength=32768),
            "observedGeneration": _integer(
                "metadata.generation the condition was set for.", fmt="int64", minimum=0
            ),
            "reason": _string(
                "CamelCase or snake_case reason for the last transition.",
                maxLength=1024,
                minLength=1,
                pattern=CONDITION_REASON_PATTERN,
            ),
            "status": _string("True, False or Unknown.", enum=["True", "False", "Unknown"]),
            "type": _string("Condition type.", maxLength=316, pattern=CONDITION_TYPE_PATTERN),
        },
        required=("lastTransitionTime", "message", "reason", "status", "type"),
    )


def _resource_claim() -> Json:
    return _object(
        {
            "name": _string("Name of an entry of the pod's resourceClaims."),
            "request": _string("Request inside that claim, when only one is meant."),
        },
        required=("name",),
    )


def _resource_requirements() -> Json:
    amounts = {"type": "object", "additionalProperties": quantity()}
    return _object(
        {
            "claims": _described(
                {
                    **_array(_resource_claim()),
                    "x-kubernetes-list-map-keys": ["name"],
                    "x-kubernetes-list-type": "map",
                },
                "Dynamic resource allocation claims used by the container.",
            ),
            "limits": _described(dict(amounts), "Most of each resource that may be used."),
            "requests": _described(dict(amounts), "Least of each resource that is needed."),
        }
    )


def _toleration() -> Json:
    return _object(
        {
            "effect": _string("Taint effect to match; all effects when empty."),
            "key": _string("Taint key to match; all keys when empty with operator Exists."),
            "operator": _string("Exists or Equal (the default)."),
            "tolerationSeconds": _integer("How long a NoExecute taint is tolerated.", fmt="int64"),
            "value": _string("Taint value to match with operator Equal."),
        }
    )


def _label_selector() -> Json:
    return _object(
        {
            "matchExpressions": _array(
                _object(
                    {
                        "key": _string("Label key."),
                        "operator": _string("In, NotIn, Exists or DoesNotExist."),
                        "values": _array(_string(), "Values for In and NotIn."),
                    },
                    required=("key", "operator"),
                ),
                "Requirements that must all hold.",
            ),
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        description="Label query.",
    )


def _scaling_rules() -> Json:
    return _object(
        {
            "policies": _array(
                _object(
                    {
                        "periodSeconds": _integer("Window the policy applies to."),
                        "type": _string("Pods or Percent."),
                        "value": _integer("Amount of change allowed in the window."),
                    },
                    required=("periodSeconds", "type", "value"),
                ),
                "Allowed changes per time window.",
            ),
            "selectPolicy": _string("Max, Min or Disabled."),
            "stabilizationWindowSeconds": _integer("Past recommendations taken into account."),
            "tolerance": quantity("Relative change ignored as noise."),
        }
    )


def _metric_target() -> Json:
    return _object(
        {
            "averageUtilization": _integer("Target average utilization in percent."),
            "averageValue": quantity("Target average value."),
            "type": _string("Utilization, Value or AverageValue."),
            "value": quantity("Target value."),
        },
        required=("type",),
    )


def _metric_identifier() -> Json:
    return _object(
        {"name": _string("Metric name."), "selector": _label_selector()}, required=("name",)
    )


def _metric_spec() -> Json:
    target = _metric_target()
    metric = _metric_identifier()
    return _object(
        {
            "containerResource": _object(
                {"container": _string(), "name": _string(), "target": target},
                required=("container", "name", "target"),
            ),
            "external": _object({"metric": metric, "target": target}, ("metric", "target")),
            "object": _object(
                {
                    "describedObject": _object(
                        {"apiVersion": _string(), "kind": _string(), "name": _string()},
                        required=("kind", "name"),
                    ),
                    "metric": metric,
                    "target": target,
                },
                required=("describedObject", "metric", "target"),
            ),
            "pods": _object({"metric": metric, "target": target}, ("metric", "target")),
            "resource": _object({"name": _string(), "target": target}, ("name", "target")),
            "type": _string("ContainerResource, External, Object, Pods or Resource."),
        },
        required=("type",),
    )


def _raw_extension() -> Json:
    return {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }


_BUILDERS: dict[str, Callable[[], Json]] = {
    "ObjectMeta": lambda: {"type": "object"},
    "Probe": _probe,
    "EnvVar": _env_var,
    "Container": free_form,
    "Condition": _condition,
    "ResourceRequirements": _resource_requirements,
    "ResourceClaim": _resource_claim,
    "Toleration": _toleration,
    "HorizontalPodAutoscalerBehavior": lambda: _object(
        {"scaleDown": _scaling_rules(), "scaleUp": _scaling_rules()}
    ),
    "MetricSpec": _metric_spec,
    "ConfigMapKeySelector": lambda: _key_ref("ConfigMap"),
    "FreeForm": free_form,
    "RawExtension": _raw_extension,
    "Quantity": quantity,
    "Time": lambda: _string(format="date-time"),
    # v1beta1: a JSON number, and a whole pod template (schemaless, as the preview features').
    "Number": lambda: {"type": "number"},
    "PodTemplateSpec": free_form,
}


def embedded_schema(name: str) -> Json:
    """A fresh copy of the schema of embedded type `name`."""
    return _BUILDERS[name]()
