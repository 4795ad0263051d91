"""Hypothesis strategies for objects of both API versions, drawn from the model types.

Unlike `test_properties.strategy`, these draw objects the API server would store: every
object has a name, component names are unique and present, user annotations never use the
private conversion names, and pod templates are often shaped like pods (a main container
with env, probes, resources, PVC mounts...) so that the pod projection is exercised, besides
arbitrary JSON.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any, Union, get_args, get_origin

import attrs
from hypothesis import strategies as st

import api.v1alpha1 as alpha
import api.v1beta1 as beta
from api.kube import embedded_tag
from api.markers import field_info, json_name

NAME = st.text(alphabet="abcdefgAB-", min_size=1, max_size=5)
SHORT = st.text(max_size=5)
SCALARS = (
    st.booleans() | st.integers(-5, 5) | SHORT | st.floats(allow_nan=False, allow_infinity=False)
)
JSON_VALUE = st.recursive(
    st.none() | SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(SHORT, inner, max_size=3),
    max_leaves=6,
)
JSON_OBJECT = st.dictionaries(SHORT, JSON_VALUE, max_size=3)
STRING_MAP = st.dictionaries(NAME, SHORT, max_size=2)
QUANTITY = st.integers(0, 10**6) | st.sampled_from(["0", "1", "500m", "16Gi", "8Gi"])
TIME = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
NUMBER = st.integers(0, 5000) | st.floats(0, 1, allow_nan=False)
ENV = st.lists(st.fixed_dictionaries({"name": NAME, "value": SHORT}), max_size=2)
PROBE = st.fixed_dictionaries({"httpGet": st.fixed_dictionaries({"path": SHORT, "port": NAME})})
AMOUNTS = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "example.com/fpga"]),
    st.sampled_from(["1", "2", "500m", "8Gi"]) | st.integers(1, 4),
    max_size=3,
)
CONTAINER_RESOURCES = st.fixed_dictionaries(
    {}, optional={"requests": AMOUNTS, "limits": AMOUNTS, "claims": st.just([{"name": "gpus"}])}
)


def _container(name: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"name": name},
        optional={
            "image": SHORT,
            "args": st.lists(SHORT, max_size=2),
            "env": ENV,
            "envFrom": st.lists(
                st.fixed_dictionaries({"secretRef": st.fixed_dictionaries({"name": NAME})}),
                max_size=2,
            ),
            "livenessProbe": PROBE,
            "readinessProbe": PROBE,
            "resources": CONTAINER_RESOURCES,
            "volumeMounts": st.lists(
                st.fixed_dictionaries({"name": NAME}, optional={"mountPath": SHORT}), max_size=2
            ),
            "command": st.lists(SHORT, max_size=2),
        },
    )


def _pvc_volume(name: str) -> dict[str, Any]:
    return {"name": name, "persistentVolumeClaim": {"claimName": name}}


POD_SPEC = st.fixed_dictionaries(
    {
        "containers": st.lists(
            _container(st.sampled_from(["main", "sidecar-frontend", "helper", "proxy"])),
            max_size=3,
            unique_by=lambda c: c["name"],
        )
    },
    optional={
        "volumes": st.lists(NAME.map(_pvc_volume), max_size=2),
        "nodeSelector": STRING_MAP,
        "initContainers": st.lists(_container(st.just("runtime")), max_size=1),
    },
)
POD_TEMPLATE = (
    st.fixed_dictionaries(
        {"spec": POD_SPEC},
        optional={
            "metadata": st.fixed_dictionaries(
                {}, optional={"labels": STRING_MAP, "annotations": STRING_MAP}
            )
        },
    )
    | JSON_OBJECT
)
USER_ANNOTATIONS = st.dictionaries(
    st.sampled_from(["a.example.com/x", "nvidia.com/grove-update-strategy", "note"]),
    SHORT,
    min_size=1,
    max_size=2,
)
METADATA = st.fixed_dictionaries(
    {"name": NAME},
    optional={"namespace": NAME, "labels": STRING_MAP, "annotations": USER_ANNOTATIONS},
)


def _embedded(name: str) -> st.SearchStrategy[Any]:
    return {
        "Quantity": QUANTITY,
        "Time": TIME,
        "Number": NUMBER,
        "ObjectMeta": METADATA,
        "PodTemplateSpec": POD_TEMPLATE,
        "EnvVar": st.fixed_dictionaries({"name": NAME}, optional={"value": SHORT}),
        "Probe": PROBE | JSON_OBJECT,
        "Container": _container(NAME) | JSON_OBJECT,
    }.get(name, JSON_OBJECT)


#: Fields that need more than their type says: (class, attribute name) -> strategy.
OVERRIDES: dict[tuple[type, str], st.SearchStrategy[Any]] = {}


@cache
def strategy(tp: Any) -> st.SearchStrategy[Any]:
    """Values of a type used in the models (None stands for an absent optional field)."""
    if get_origin(tp) in (Union, types.UnionType):
        args = get_args(tp)
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2:
            return st.none() | strategy(inner[0])
    tag = embedded_tag(tp)
    if tag is not None:
        return _embedded(tag.name)
    if attrs.has(tp):
        return instances(tp)
    origin = get_origin(tp)
    if origin is list:
        return st.lists(strategy(get_args(tp)[0]), max_size=2)
    if origin is dict:
        return st.dictionaries(NAME, strategy(get_args(tp)[1]), max_size=2)
    scalars: dict[Any, st.SearchStrategy[Any]] = {
        str: SHORT,
        int: st.integers(0, 2**31 - 1),
        bool: st.booleans(),
    }
    return scalars[tp]


@cache
def instances(cls: type) -> st.SearchStrategy[Any]:
    """Model objects of `cls`."""
    hints = typing.get_type_hints(cls, include_extras=True)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for attribute in attrs.fields(cls):
        if (cls, attribute.name) in OVERRIDES:
            fields[attribute.name] = OVERRIDES[(cls, attribute.name)]
        elif field_info(attribute).inline:
            named = frozenset(json_name(a) for a in attrs.fields(cls) if a is not attribute)
            keys = SHORT.filter(lambda key: key not in named)  # noqa: B023
            fields[attribute.name] = st.dictionaries(keys, JSON_VALUE, max_size=2)
        else:
            fields[attribute.name] = strategy(hints[attribute.name])
    return st.builds(cls, **fields)


OVERRIDES.update(
    {
        (beta.DynamoComponentDeploymentSharedSpec, "name"): NAME,
        (beta.DynamoComponentDeploymentSharedSpec, "pod_template"): st.none() | POD_TEMPLATE,
        (beta.DynamoComponentDeploymentSpec, "pod_template"): st.none() | POD_TEMPLATE,
        (beta.DynamoComponentDeploymentSpec, "frontend_sidecar"): st.none()
        | st.sampled_from(["sidecar-frontend", "helper"]),
        (beta.DynamoComponentDeploymentSharedSpec, "frontend_sidecar"): st.none()
        | st.sampled_from(["sidecar-frontend", "helper"]),
        (beta.DynamoGraphDeploymentSpec, "components"): st.none()
        | st.lists(
            st.deferred(lambda: instances(beta.DynamoComponentDeploymentSharedSpec)),
            min_size=1,
            max_size=4,
            unique_by=lambda c: c.name,
        )
        | st.lists(
            st.deferred(lambda: instances(beta.DynamoComponentDeploymentSharedSpec)),
            max_size=4,
            unique_by=lambda c: c.name,
        ),
        (alpha.DynamoGraphDeploymentSpec, "services"): st.none()
        | st.dictionaries(
            NAME,
            st.deferred(lambda: instances(alpha.DynamoComponentDeploymentSharedSpec)),
            min_size=1,
            max_size=4,
        )
        | st.dictionaries(
            NAME,
            st.deferred(lambda: instances(alpha.DynamoComponentDeploymentSharedSpec)),
            max_size=4,
        ),
        (alpha.DynamoComponentDeploymentSharedSpec, "component_type"): st.none()
        | st.sampled_from(["frontend", "worker", "main", "planner", "custom"]),
        (alpha.DynamoComponentDeploymentSpec, "component_type"): st.none()
        | st.sampled_from(["frontend", "worker", "prefill", "epp"]),
        (alpha.DynamoComponentDeploymentSharedSpec, "sub_component_type"): st.none()
        | st.sampled_from(["prefill", "decode", "other"]),
        (beta.DynamoComponentDeploymentSharedSpec, "type"): st.none()
        | st.sampled_from(beta.COMPONENT_TYPES),
        (beta.DynamoGraphDeploymentRequestSpec, "backend"): st.none()
        | st.sampled_from(beta.DGDR_BACKENDS),
        (beta.DynamoGraphDeploymentRequestStatus, "phase"): st.none()
        | st.sampled_from(beta.DGDR_PHASES),
        (alpha.DynamoGraphDeploymentRequestStatus, "state"): st.none()
        | st.sampled_from(alpha.DGDR_STATES),
    }
)

#: The model class of each (version, kind).
MODELS: dict[str, dict[str, type]] = {"v1alpha1": alpha.KINDS, "v1beta1": beta.KINDS}


def objects(version: str, kind: str) -> st.SearchStrategy[Any]:
    """Model objects of one kind in one version, with their apiVersion and kind."""
    return instances(MODELS[version][kind]).map(
        lambda o: attrs.evolve(o, api_version=f"nvidia.com/{version}", kind=kind)
    )
