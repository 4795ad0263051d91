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

Modules: `validator` (the `validate` entry point), `validation` (OpenAPI value validation and
list-type uniqueness), `formats` (string formats and Go regular expressions), `meta` (embedded
resources' TypeMeta and ObjectMeta), `mutation` (pruning and defaulting), `structural` and
`structural_rules` (the checks of a CRD's schema), `fielderr` (field errors worded like
kube-apiserver's).
"""

from __future__ import annotations

from .mutation import apply_defaults, prune
from .structural import structural_errors
from .validator import validate

__all__ = ["apply_defaults", "prune", "structural_errors", "validate"]
