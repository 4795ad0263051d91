"""Server-side apply and managedFields tracking, as kube-apiserver's field manager does them.

Two entry points, both pure functions over JSON objects (`field_manager`):

- `server_side_apply` merges an applied configuration into the live object the way
  structured-merge-diff does (associative lists by key, sets by value, atomic lists and maps
  whole, structs and granular maps field by field), makes the configuration's field set exactly
  what the applier owns, removes what it stopped applying when nobody else owns it, and raises the
  apiserver's 409 when it would change a field another manager owns (unless forced).
- `track_update` records, for a create/update/non-apply patch, which fields the writer changed.

How lists and maps merge comes from `list_semantics` for built-in kinds (plus the few built-in
structs marked ``+structType=atomic`` / ``+mapType=atomic`` that this server serves) and from the
CRD schema's ``x-kubernetes-*`` extensions for custom kinds (`field_types`). Fields under
``x-kubernetes-preserve-unknown-fields`` merge like structured-merge-diff's deduced type: maps
granular, lists atomic. The other modules: `list_elements` (keys of list elements),
`field_sets` and `comparison` (what a value sets, what changed), `merge` (merge and prune),
`applied_config` (checks of the configuration), `conflicts` (the 409), `ownership` (managedFields
upkeep around a write), `request_checks` (field manager names, the object's name vs the URL).

Simplified against the real field manager (documented, not hidden):

- entries recorded at another version of a custom kind are compared at their version, the
  objects converted there by the CRD's conversion (`versions`, `version_prune`); entries at a
  version the kind does not serve, and those of built-in kinds, are compared as if written at
  the request's version (kube-apiserver drops entries of a version its scheme lacks, and
  fails on one it cannot convert to); a conversion the webhook refuses while the field
  manager converts fails the write with the webhook's 500 (kube-apiserver fails an apply, but
  an update goes through: 1.20 stores it without managedFields, kubernetes#136949 keeps the
  live object's); a write that cannot take anything from such an entry (it changes nothing,
  or a status write meets spec owners) converts nothing for it, where kube-apiserver converts
  anyway (only the webhook's call count shows it); the prune adds owned items back at the
  pruned version first (structured-merge-diff v4.2.3 on; 1.20's v4.0.2 went in map order);
- the kubectl last-applied-configuration upgrade path (``kubectl-client-side-apply`` fields
  handed over to a later ``kubectl`` apply) is not implemented;
- the status subresource keeps only status ownership (the apiserver resets only ``spec``, and
  per kind ``metadata.labels``); the scale subresource tracks only the replicas field;
- duplicate keys in a stored list keep their first element;
- type errors in an applied configuration other than list keys and undeclared CRD fields are left
  to validation (the apiserver fails typed conversion first).
"""

from __future__ import annotations

from .field_manager import server_side_apply, track_update
from .field_sets import field_set
from .field_types import MISSING
from .ownership import ANCIENT_CHANGES, MAX_UPDATE_MANAGERS
from .request_checks import (
    FIELD_MANAGER_MAX_LENGTH,
    check_name,
    default_manager,
    validate_field_manager,
)
from .versions import Versions

__all__ = [
    "ANCIENT_CHANGES",
    "FIELD_MANAGER_MAX_LENGTH",
    "MAX_UPDATE_MANAGERS",
    "MISSING",
    "Versions",
    "check_name",
    "default_manager",
    "field_set",
    "server_side_apply",
    "track_update",
    "validate_field_manager",
]
