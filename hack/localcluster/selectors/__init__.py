"""Label and field selectors as kube-apiserver parses, validates and applies them.

`LabelSelector.parse` follows the apimachinery `labels` lexer and parser token for token, so a
malformed `labelSelector` query parameter is rejected with the same message. `FieldSelector.parse`
splits and unescapes like apimachinery's `fields` package and then checks each field against the
conversion function the real server registers for the kind: the set of supported fields, and the
wording of the rejection, differ per kind. Matching reads the same derived field values the
registries' `GetAttrs` functions compute (`status.podIP` is the first of `status.podIPs`, booleans
print as `true`/`false`, a missing value is the empty string).

Modules: `label_requirement` (one requirement, its validation), `label_parser` (the lexer and
parser), `label_selector` (parsed selectors and metav1.LabelSelector conversion), `field_labels`
(the labels each kind accepts), `field_values` (GetAttrs), `field_selector` (parsed field
selectors). `go_quote` and `go_format_float` are re-exported from `go_format` for old callers.
"""

from __future__ import annotations

from ..go_format import go_float as go_format_float
from ..go_format import go_quote
from .field_selector import FieldRequirement, FieldSelector
from .field_values import object_fields
from .label_requirement import LabelRequirement, label_key_errors, label_value_errors
from .label_selector import LabelSelector, label_selector_string

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelRequirement",
    "LabelSelector",
    "go_format_float",
    "go_quote",
    "label_key_errors",
    "label_selector_string",
    "label_value_errors",
    "object_fields",
]
