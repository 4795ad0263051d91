"""A custom resource's schema as kube-apiserver publishes it in /openapi/v2 (Swagger 2.0).

apiextensions-apiserver builds the v2 definition of a CRD version with
`builder.BuildOpenAPIV2(crd, version, Options{V2: true})` (controller/openapi/builder):

* a schema that preserves unknown fields at its root becomes `{type: object}` plus the GVK
  extension and nothing else, since kubectl would reject any field a v2 schema does not list;
* otherwise `v2.ToStructuralOpenAPIV2` (controller/openapi/v2/conversion.go) rewrites every
  node: `allOf`, `oneOf`, `anyOf` and `not` dropped (Swagger 2.0 and kubectl's
  `proto.Models` have none; an int-or-string keeps only its extension); a `nullable` node
  loses `nullable`, its type, items and properties; a node preserving unknown fields loses its
  items and properties; an array left without items loses its type; a nullable property leaves
  its parent's `required`, and a nullable `additionalProperties` empties it;
* then, as for the built-in definitions, `handler.PruneDefaults` removes every `default`
  (the CRD controller: "Defaults must be pruned here for CRDs to cleanly merge with the static
  spec that already has defaults pruned").

gnostic's `ParseDocument` would refuse the v3-only keywords (`has invalid property`), failing
the whole protobuf document, so this is also what keeps /openapi/v2 encodable.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

_JUNCTORS = ("allOf", "oneOf", "anyOf", "not")
#: The standard fields the builder sets itself (`addTypeMetaProperties`, the metadata ref).
_STANDARD = ("apiVersion", "kind", "metadata")
_GVK = "x-kubernetes-group-version-kind"
_PRESERVE = "x-kubernetes-preserve-unknown-fields"


def custom_kind_v2(schema: Json) -> Json:
    """The v2 definition of a custom resource kind from its published v3 definition (in
    Swagger 2.0 form already: `#/definitions/` refs)."""
    if schema.get(_PRESERVE) is True:
        return {"type": "object", _GVK: schema.get(_GVK, [])}
    pruned: Json = prune_defaults(_visit(schema, top=True))
    return pruned


def _visit(node: Json, top: bool = False) -> Json:
    """ToStructuralOpenAPIV2's visitor: a node first (it reads its children's `nullable`
    before they are rewritten), then its items, properties and additionalProperties."""
    out = {k: v for k, v in node.items() if k not in _JUNCTORS}
    if out.pop("nullable", False) is True:
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if out.get(_PRESERVE) is True:
        out.pop("items", None)
        out.pop("properties", None)
    if "items" not in out and out.get("type") == "array":
        del out["type"]
    properties = out.get("properties")
    required = out.get("required")
    if isinstance(properties, dict) and isinstance(required, list):
        nullable = {name for name, sub in properties.items()
                    if isinstance(sub, dict) and sub.get("nullable") is True}
        required = [name for name in required if name not in nullable]
    extra = out.get("additionalProperties")
    if isinstance(extra, dict) and extra.get("nullable") is True:
        required = None
    if "required" in out:
        if required:
            out["required"] = required
        else:  # filterOut's nil: omitted from the JSON
            del out["required"]
    if isinstance(out.get("items"), dict):
        out["items"] = _visit(out["items"])
    if isinstance(properties, dict) and "properties" in out:
        out["properties"] = {
            name: sub if (top and name in _STANDARD) or not isinstance(sub, dict)
            else _visit(sub)
            for name, sub in properties.items()}
    if isinstance(extra, dict):
        out["additionalProperties"] = _visit(extra)
    return out


def prune_defaults(schema: Any) -> Any:
    """kube-openapi's handler.PruneDefaults on one schema: no `default` anywhere."""
    if isinstance(schema, list):
        return [prune_defaults(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: Json = {}
    for key, value in schema.items():
        if key == "default":
            continue
        if key in ("properties", "patternProperties", "definitions") and isinstance(value, dict):
            out[key] = {k: prune_defaults(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
            out[key] = prune_defaults(value)
        else:
            out[key] = value
    return out
