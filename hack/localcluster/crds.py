"""CustomResourceDefinitions: validation of a CRD object and the resource types it serves."""

from __future__ import annotations

import re
from typing import Any

from . import deprecation, schema
from .conversion.crd_rules import apply_conversion_defaults, conversion_errors
from .errors import Cause, forbidden, invalid, required, unsupported
from .metadata_rules import name_errors
from .registry import PrinterColumn, ResourceType, ScaleSubresource
from .schema import fielderr

Json = dict[str, Any]

_PLURAL_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_KIND_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_SPEC_PATH_RE = re.compile(r"\.spec(\.[A-Za-z0-9_]+)+")
_STATUS_PATH_RE = re.compile(r"\.status(\.[A-Za-z0-9_]+)+")


def validation_errors(crd: Json, old: Json | None = None) -> list[Cause]:
    """The checks apiextensions-apiserver runs on a CRD create or update."""
    errors: list[Cause] = []
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    group = spec.get("group") or ""
    names = spec.get("names") or {}
    plural = names.get("plural") or ""
    name = (crd.get("metadata") or {}).get("name", "")
    if not group:
        errors.append(required("spec.group"))
    elif "." not in group:
        errors.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    else:
        errors.extend(name_errors("CustomResourceDefinition", group, "spec.group"))
    if not plural:
        errors.append(required("spec.names.plural"))
    elif not _PLURAL_RE.fullmatch(plural):
        errors.append(invalid("spec.names.plural", plural,
                              "a lowercase RFC 1123 label must consist of lower case"
                              " alphanumeric characters or '-', and must start and end with an"
                              " alphanumeric character"))
    if plural and group and name != f"{plural}.{group}":
        errors.append(invalid("metadata.name", name,
                              "must be spec.names.plural+\".\"+spec.group"))
    if not names.get("kind"):
        errors.append(required("spec.names.kind"))
    elif not _KIND_RE.fullmatch(names["kind"]):
        errors.append(invalid("spec.names.kind", names["kind"],
                              "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]"
                              "*[a-z0-9])?"))
    if not names.get("listKind") and names.get("kind"):
        pass  # defaulted by the controller
    for i, short in enumerate(names.get("shortNames") or []):
        if not _PLURAL_RE.fullmatch(str(short)):
            errors.append(invalid(f"spec.names.shortNames[{i}]", short,
                                  "a lowercase RFC 1123 label must consist of lower case"
                                  " alphanumeric characters or '-'"))
    scope = spec.get("scope")
    if scope not in ("Namespaced", "Cluster"):
        errors.append(unsupported("spec.scope", scope, ["Cluster", "Namespaced"]) if scope
                      else required("spec.scope"))
    versions = spec.get("versions") or []
    if not versions:
        errors.append(Cause("FieldValueInvalid", "Invalid value: \"null\": must have exactly one"
                            " version marked as storage version", "spec.versions"))
    storage = [v for v in versions if isinstance(v, dict) and v.get("storage")]
    if versions and len(storage) != 1:
        errors.append(invalid("spec.versions", versions,
                              "must have exactly one version marked as storage version"))
    seen: set[str] = set()
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(version, dict):
            errors.append(invalid(path, version, "must be an object"))
            continue
        vname = version.get("name") or ""
        if not vname:
            errors.append(required(f"{path}.name"))
        elif vname in seen:
            errors.append(Cause("FieldValueDuplicate", f'Duplicate value: "{vname}"',
                                f"{path}.name"))
        seen.add(vname)
        if "served" not in version:
            errors.append(required(f"{path}.served"))
        if "storage" not in version:
            errors.append(required(f"{path}.storage"))
        errors.extend(fielderr.invalid(f"{path}.deprecationWarning",
                                       version["deprecationWarning"], message)
                      for message in deprecation.warning_errors(version))
        v_schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if v_schema is None:
            errors.append(required(f"{path}.schema.openAPIV3Schema"))
        else:
            errors.extend(schema.structural_errors(v_schema, f"{path}.schema.openAPIV3Schema"))
        errors.extend(_subresource_errors(version.get("subresources") or {},
                                          f"{path}.subresources"))
        for j, col in enumerate(version.get("additionalPrinterColumns") or []):
            cpath = f"{path}.additionalPrinterColumns[{j}]"
            if not col.get("name"):
                errors.append(required(f"{cpath}.name"))
            if col.get("type") not in ("integer", "number", "string", "boolean", "date"):
                errors.append(unsupported(f"{cpath}.type", col.get("type"),
                                          ["boolean", "date", "integer", "number", "string"]))
            if not col.get("jsonPath"):
                errors.append(required(f"{cpath}.jsonPath"))
    errors.extend(conversion_errors(spec))
    if old is not None:
        old_spec = old.get("spec") or {}
        if old_spec.get("group") != group:
            errors.append(invalid("spec.group", group, "field is immutable"))
        if old_spec.get("scope") != scope:
            errors.append(invalid("spec.scope", scope, "field is immutable"))
        if (old_spec.get("names") or {}).get("plural") != plural:
            errors.append(forbidden("spec.names.plural", "field is immutable"))
    return errors


def _subresource_errors(subresources: Json, path: str) -> list[Cause]:
    errors: list[Cause] = []
    scale = subresources.get("scale")
    if isinstance(scale, dict):
        spec_path = scale.get("specReplicasPath") or ""
        status_path = scale.get("statusReplicasPath") or ""
        if not spec_path:
            errors.append(required(f"{path}.scale.specReplicasPath"))
        elif not _SPEC_PATH_RE.fullmatch(spec_path):
            errors.append(invalid(f"{path}.scale.specReplicasPath", spec_path,
                                  "should be a json path under .spec"))
        if not status_path:
            errors.append(required(f"{path}.scale.statusReplicasPath"))
        elif not _STATUS_PATH_RE.fullmatch(status_path):
            errors.append(invalid(f"{path}.scale.statusReplicasPath", status_path,
                                  "should be a json path under .status"))
        selector = scale.get("labelSelectorPath")
        if selector and not (_SPEC_PATH_RE.fullmatch(selector)
                             or _STATUS_PATH_RE.fullmatch(selector)):
            errors.append(invalid(f"{path}.scale.labelSelectorPath", selector,
                                  "should be a json path under either .spec or .status"))
    return errors


def served_types(crd: Json) -> list[ResourceType]:
    """The resource types a (valid) CRD serves: one per served version."""
    spec = crd["spec"]
    names = spec["names"]
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    out = []
    for version in spec["versions"]:
        if not version.get("served"):
            continue
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        out.append(ResourceType(
            group=spec["group"],
            version=version["name"],
            kind=names["kind"],
            plural=names["plural"],
            singular=names.get("singular") or names["kind"].lower(),
            namespaced=spec["scope"] == "Namespaced",
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            has_status="status" in subresources,
            scale=ScaleSubresource(
                spec_replicas_path=scale["specReplicasPath"],
                status_replicas_path=scale["statusReplicasPath"],
                label_selector_path=scale.get("labelSelectorPath"),
            ) if isinstance(scale, dict) else None,
            schema=(version.get("schema") or {}).get("openAPIV3Schema"),
            printer_columns=tuple(
                PrinterColumn(
                    name=c["name"], type=c["type"], json_path=c["jsonPath"],
                    description=c.get("description", ""), format=c.get("format", ""),
                    priority=int(c.get("priority", 0)),
                )
                for c in version.get("additionalPrinterColumns") or ()
            ),
            custom=True,
            storage_version=storage,
            deprecation_warning=deprecation.warning_of(spec, version),
        ))
    return out


def apply_crd_defaults(crd: Json) -> None:
    """Defaults the CRD API itself sets (singular, listKind, conversion strategy)."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    spec.setdefault("conversion", {"strategy": "None"})
    apply_conversion_defaults(spec)
