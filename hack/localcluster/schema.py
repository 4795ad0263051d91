"""The openAPIV3Schema machinery of apiextensions-apiserver: validation, pruning, defaulting.

A custom object goes through the same steps as in kube-apiserver:

1. `prune` (on decode): drop fields the structural schema does not specify, except under
   `x-kubernetes-preserve-unknown-fields`; the root and embedded resources keep `apiVersion`,
   `kind` and `metadata`, and embedded `metadata` is coerced to ObjectMeta.
2. `apply_defaults` (on decode, and on read from storage): drop nulls of non-nullable fields
   without a default, then fill in `default`s top-down.
3. `validate` (in the strategy): the OpenAPI value validation, embedded resource TypeMeta and
   ObjectMeta, and `x-kubernetes-list-type` uniqueness.

`structural_errors` is the CRD side: the schema checks a CRD create or update gets (422).

CEL rules (`x-kubernetes-validations`) are not evaluated: objects are never rejected by them,
and a CRD's rules are only checked for being present and single-line where required.
Schemas are the JSON form (`dict`), as found in `spec.versions[*].schema.openAPIV3Schema`.
"""

from __future__ import annotations

from typing import Any

from hack.localcluster.errors import Cause
from hack.localcluster.schema_meta import embedded_resource_errors
from hack.localcluster.schema_mutation import apply_defaults, prune
from hack.localcluster.schema_structural import structural_errors
from hack.localcluster.schema_validation import list_type_errors, openapi_errors

__all__ = ["apply_defaults", "prune", "structural_errors", "validate"]

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
