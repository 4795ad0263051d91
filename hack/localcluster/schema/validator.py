"""The custom resource validator: one object against its version's openAPIV3Schema.

Like `customResourceValidator.Validate` of apiextensions-apiserver (registry/customresource), it
runs the OpenAPI value validation (`validation`), the TypeMeta and ObjectMeta checks of embedded
resources (`meta`) and `x-kubernetes-list-type` uniqueness (`validation`), in that order.
"""

from __future__ import annotations

from typing import Any

from ..errors import Cause
from .meta import embedded_resource_errors
from .validation import list_type_errors, openapi_errors

__all__ = ["validate"]

Schema = dict[str, Any]


def validate(obj: dict[str, Any], schema: Schema) -> list[Cause]:
    """Validate a custom object against its version's openAPIV3Schema.

    Returns the causes in the order kube-apiserver reports them: schema validation first, then
    embedded resources, then list-type uniqueness. Root `metadata` is only checked against what
    the schema itself says about it (in practice name/generateName restrictions).
    """
    errs = openapi_errors(obj, schema)
    errs += embedded_resource_errors(obj, schema)
    errs += list_type_errors(obj, schema)
    return errs
