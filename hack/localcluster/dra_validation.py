"""Dynamic Resource Allocation (resource.k8s.io/v1): the registry strategies of its four kinds.

DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice are defaulted and validated
as kube-apiserver 1.34 does it (`pkg/apis/resource/v1` defaults, `pkg/apis/resource/validation`
messages) for the fields a GPU workload uses: requests with `exactly` or `firstAvailable`,
allocation modes and counts, CEL selectors (present and not too long; the expression is not
compiled), the immutable claim and template specs, a claim's status invariants, and a slice's
driver, pool and node fields. A pod's `spec.resourceClaims` and its containers'
`resources.claims` are checked here too (`pkg/apis/core/validation`).

Left out: CEL compilation and cost, device taints and tolerations beyond their presence,
consumable capacity, counters, binding conditions, admin access (a namespace label gate).
"""

from __future__ import annotations

from typing import Any

from .errors import Cause, duplicate, forbidden, invalid, required, too_long, unsupported
from .name_validation import dns1123_label_errors, dns1123_subdomain_errors

Json = dict[str, Any]

GROUP = "resource.k8s.io"
KINDS = frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"})

_IMMUTABLE = "field is immutable"
_MODES = ("All", "ExactCount")
#: resource.CELSelectorExpressionMaxLength
_CEL_MAX_LENGTH = 10 * 1024
#: resource.PoolNameMaxLength
_POOL_MAX_LENGTH = 253
_ONE_OF_NODE = ("exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`"
                " is required")


# --- defaults (SetDefaults_ExactDeviceRequest, SetDefaults_DeviceSubRequest) ----------------


def apply_defaults(kind: str, obj: Json) -> None:
    """allocationMode defaults to ExactCount, and an ExactCount request's count to 1; a
    slice's pool generation, a Go int64 without omitempty, reads 0 when absent."""
    spec = obj.get("spec")
    if kind == "ResourceSlice" and isinstance(spec, dict) and isinstance(spec.get("pool"), dict):
        spec["pool"].setdefault("generation", 0)
    if kind == "ResourceClaimTemplate" and isinstance(spec, dict):
        spec = spec.get("spec")
    if kind not in ("ResourceClaim", "ResourceClaimTemplate") or not isinstance(spec, dict):
        return
    devices = spec.get("devices")
    for request in (devices.get("requests") or []) if isinstance(devices, dict) else []:
        if not isinstance(request, dict):
            continue
        if isinstance(request.get("exactly"), dict):
            _default_request(request["exactly"])
        for sub in request.get("firstAvailable") or []:
            if isinstance(sub, dict):
                _default_request(sub)


def _default_request(request: Json) -> None:
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1


def prepare_for_create(kind: str, obj: Json) -> None:
    """A new claim starts with an empty status (a create cannot allocate it)."""
    if kind == "ResourceClaim":
        obj["status"] = {}


# --- validation ---------------------------------------------------------------------------


def validation_errors(kind: str, obj: Json, old: Json | None) -> list[Cause]:
    """ValidateDeviceClass, ValidateResourceClaim(Update, StatusUpdate), ValidateResourceClaim
    Template(Update) and ValidateResourceSlice(Update), metadata aside."""
    spec = obj.get("spec")
    if kind == "ResourceClaim":
        if old is not None:
            errors = _immutable("spec", spec, old.get("spec"))
            return errors + _claim_status_errors(obj, old)
        return _claim_spec_errors(spec, "spec")
    if kind == "ResourceClaimTemplate":
        if old is not None:
            return _immutable("spec", spec, old.get("spec"))
        inner = spec.get("spec") if isinstance(spec, dict) else None
        return _claim_spec_errors(inner, "spec.spec")
    if kind == "DeviceClass":
        same = old is not None and (old.get("spec") or {}).get("selectors") == (
            spec or {}).get("selectors")
        return _selectors_errors((spec or {}).get("selectors") if isinstance(spec, dict)
                                 else None, "spec.selectors", stored=same)
    if kind == "ResourceSlice":
        return _slice_errors(spec if isinstance(spec, dict) else {},
                             (old or {}).get("spec") if old is not None else None)
    return []


def _object(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _immutable(path: str, new: Any, old: Any) -> list[Cause]:
    # kube-apiserver prints the internal Go struct (%#v, with pointer addresses) as the value;
    # this server names only its JSON type, as for other immutable structs here.
    return [] if new == old else [invalid(path, new, _IMMUTABLE)]


def _claim_spec_errors(spec: Any, path: str) -> list[Cause]:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return []
    path = f"{path}.devices"
    errors: list[Cause] = []
    names: set[str] = set()
    for i, request in enumerate(devices.get("requests") or []):
        rpath = f"{path}.requests[{i}]"
        if not isinstance(request, dict):
            errors.append(invalid(rpath, request, "must be an object"))
            continue
        name = str(request.get("name") or "")
        errors.extend(_label_errors(name, f"{rpath}.name"))
        if name and name in names:
            errors.append(duplicate(rpath, name))
        names.add(name)
        errors.extend(_request_errors(request, rpath))
    for i, constraint in enumerate(devices.get("constraints") or []):
        if isinstance(constraint, dict):
            for j, ref in enumerate(constraint.get("requests") or []):
                if str(ref).split("/")[0] not in names:
                    errors.append(invalid(
                        f"{path}.constraints[{i}].requests[{j}]", ref,
                        "must be the name of a request in the claim or the name of a request"
                        " and a subrequest separated by '/'"))
    return errors


def _request_errors(request: Json, path: str) -> list[Cause]:
    exactly, first = request.get("exactly"), request.get("firstAvailable")
    if exactly is None and not first:
        return [Cause("FieldValueRequired", "Required value: exactly one of `exactly` or"
                      " `firstAvailable` is required", path)]
    if exactly is not None and first:
        return [invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required,"
                        " but multiple fields are set")]
    if exactly is not None:
        return _exact_errors(exactly if isinstance(exactly, dict) else {}, f"{path}.exactly")
    errors: list[Cause] = []
    seen: set[str] = set()
    for i, sub in enumerate(first or []):
        spath = f"{path}.firstAvailable[{i}]"
        sub = sub if isinstance(sub, dict) else {}
        name = str(sub.get("name") or "")
        errors.extend(_label_errors(name, f"{spath}.name"))
        if name and name in seen:
            errors.append(duplicate(spath, name))
        seen.add(name)
        errors.extend(_exact_errors(sub, spath))
    return errors


def _exact_errors(request: Json, path: str) -> list[Cause]:
    errors: list[Cause] = []
    klass = str(request.get("deviceClassName") or "")
    if not klass:
        errors.append(required(f"{path}.deviceClassName"))
    else:
        errors.extend(invalid(f"{path}.deviceClassName", klass, m)
                      for m in dns1123_subdomain_errors(klass))
    errors.extend(_selectors_errors(request.get("selectors"), f"{path}.selectors"))
    mode, count = request.get("allocationMode"), request.get("count") or 0
    if mode == "All":
        if count != 0:
            errors.append(invalid(f"{path}.count", count,
                                  "must not be specified when allocationMode is 'All'"))
    elif mode == "ExactCount":
        if not isinstance(count, int) or count <= 0:
            errors.append(invalid(f"{path}.count", count, "must be greater than zero"))
    else:
        errors.append(unsupported(f"{path}.allocationMode", mode, list(_MODES)))
    return errors


def _selectors_errors(selectors: Any, path: str, *, stored: bool = False) -> list[Cause]:
    errors: list[Cause] = []
    for i, selector in enumerate(selectors or [] if isinstance(selectors, list) else []):
        cel = selector.get("cel") if isinstance(selector, dict) else None
        if not isinstance(cel, dict):
            errors.append(required(f"{path}[{i}].cel"))
            continue
        expression = str(cel.get("expression") or "")
        if stored:
            continue
        epath = f"{path}[{i}].cel.expression"
        if len(expression) > _CEL_MAX_LENGTH:
            errors.append(too_long(epath, _CEL_MAX_LENGTH))
    return errors


def _claim_status_errors(obj: Json, old: Json) -> list[Cause]:
    status: Json = _object(obj.get("status"))
    old_status: Json = _object(old.get("status"))
    errors: list[Cause] = []
    uids: set[str] = set()
    for i, ref in enumerate(status.get("reservedFor") or []):
        ref = ref if isinstance(ref, dict) else {}
        rpath = f"status.reservedFor[{i}]"
        for key in ("resource", "name", "uid"):
            if not ref.get(key):
                errors.append(required(f"{rpath}.{key}"))
        uid = str(ref.get("uid") or "")
        if uid and uid in uids:
            errors.append(duplicate(rpath, ref))
        uids.add(uid)
    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    if status.get("reservedFor") and allocation is None:
        errors.append(forbidden("status.reservedFor",
                                "may not be specified when `allocated` is not set"))
    if obj["metadata"].get("deletionTimestamp") and allocation is not None:
        old_uids = {str((r or {}).get("uid")) for r in old_status.get("reservedFor") or []}
        if any(str((r or {}).get("uid")) not in old_uids for r in status.get("reservedFor")
               or []):
            errors.append(forbidden("status.reservedFor", "new entries may not be added while"
                                    " `deallocationRequested` or `deletionTimestamp` are set"))
    if old_allocation is not None and allocation is not None:
        errors.extend(_immutable("status.allocation", allocation, old_allocation))
    elif isinstance(allocation, dict):
        errors.extend(_allocation_errors(allocation, obj.get("spec") or {}))
    return errors


def _allocation_errors(allocation: Json, spec: Json) -> list[Cause]:
    names = {str(r.get("name")) for r in (spec.get("devices") or {}).get("requests") or []
             if isinstance(r, dict)}
    errors: list[Cause] = []
    results = (allocation.get("devices") or {}).get("results") or []
    for i, result in enumerate(results):
        result = result if isinstance(result, dict) else {}
        path = f"status.allocation.devices.results[{i}]"
        request = str(result.get("request") or "")
        if request.split("/")[0] not in names:
            errors.append(invalid(f"{path}.request", request,
                                  "must be the name of a request in the claim or the name of a"
                                  " request and a subrequest separated by '/'"))
        errors.extend(driver_errors(str(result.get("driver") or ""), f"{path}.driver"))
        errors.extend(_pool_name_errors(str(result.get("pool") or ""), f"{path}.pool"))
        errors.extend(_label_errors(str(result.get("device") or ""), f"{path}.device"))
    return errors


def driver_errors(driver: str, path: str) -> list[Cause]:
    """ValidateCSIDriverName, which DRA reuses for driver names."""
    errors: list[Cause] = []
    if not driver:
        errors.append(required(path))
    if len(driver) > 63:
        errors.append(too_long(path, 63))
    errors.extend(invalid(path, driver, m)
                  for m in dns1123_subdomain_errors(driver.lower()) if "must be no more" not in m)
    return errors


def _pool_name_errors(name: str, path: str) -> list[Cause]:
    if not name:
        return [required(path)]
    errors = [too_long(path, _POOL_MAX_LENGTH)] if len(name) > _POOL_MAX_LENGTH else []
    for part in name.split("/"):
        errors.extend(invalid(path, part, m) for m in dns1123_subdomain_errors(part))
    return errors


def _label_errors(name: str, path: str) -> list[Cause]:
    if not name:
        return [required(path)]
    return [invalid(path, name, m) for m in dns1123_label_errors(name)]


def _slice_errors(spec: Json, old_spec: Json | None) -> list[Cause]:
    errors = driver_errors(str(spec.get("driver") or ""), "spec.driver")
    pool: Json = _object(spec.get("pool"))
    errors.extend(_pool_name_errors(str(pool.get("name") or ""), "spec.pool.name"))
    slices = pool.get("resourceSliceCount") or 0
    if not isinstance(slices, int) or slices <= 0:
        errors.append(invalid("spec.pool.resourceSliceCount", slices,
                              "must be greater than zero"))
    generation = pool.get("generation") or 0
    if isinstance(generation, int) and generation < 0:
        errors.append(invalid("spec.pool.generation", generation,
                              "must be greater than or equal to zero"))
    if old_spec is not None:
        old_pool = old_spec.get("pool") or {}
        for path, new, old in (("spec.pool.name", pool.get("name"), old_pool.get("name")),
                               ("spec.driver", spec.get("driver"), old_spec.get("driver")),
                               ("spec.nodeName", spec.get("nodeName"),
                                old_spec.get("nodeName"))):
            errors.extend(_immutable(path, new, old))
    set_fields: list[str] = []
    node = spec.get("nodeName")
    if node is not None:
        if node:
            set_fields.append("`nodeName`")
            errors.extend(invalid("spec.nodeName", node, m)
                          for m in dns1123_subdomain_errors(str(node)))
        else:
            errors.append(invalid("spec.nodeName", node,
                                  "must be either unset or set to a non-empty string"))
    selector = spec.get("nodeSelector")
    if selector is not None:
        set_fields.append("`nodeSelector`")
        terms = selector.get("nodeSelectorTerms") if isinstance(selector, dict) else None
        if not isinstance(terms, list) or len(terms) != 1:
            errors.append(invalid("spec.nodeSelector.nodeSelectorTerms", terms,
                                  "must have exactly one node selector term"))
    for key in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(key) is True:
            set_fields.append(f"`{key}`")
        elif spec.get(key) is not None:
            errors.append(invalid(f"spec.{key}", spec.get(key),
                                  "must be either unset or set to true"))
    if not set_fields:
        errors.append(Cause("FieldValueRequired", f"Required value: {_ONE_OF_NODE}", "spec"))
    elif len(set_fields) > 1:
        errors.append(invalid("spec", "{" + ", ".join(set_fields) + "}",
                              f"{_ONE_OF_NODE}, but multiple fields are set"))
    seen: set[str] = set()
    for i, device in enumerate(spec.get("devices") or []):
        device = device if isinstance(device, dict) else {}
        path = f"spec.devices[{i}]"
        name = str(device.get("name") or "")
        errors.extend(_label_errors(name, f"{path}.name"))
        if name and name in seen:
            errors.append(duplicate(path, name))
        seen.add(name)
        attributes = device.get("attributes") or {}
        for key, value in attributes.items() if isinstance(attributes, dict) else ():
            kinds = [k for k in ("bool", "int", "string", "version")
                     if isinstance(value, dict) and k in value]
            if len(kinds) != 1:
                errors.append(invalid(f"{path}.attributes[{key}]", "" if not kinds else value,
                                      "exactly one value must be specified"))
    return errors


# --- pods ---------------------------------------------------------------------------------


def pod_claim_errors(spec: Json, path: str) -> list[Cause]:
    """validatePodResourceClaims and validateResourceClaimNames of a pod spec."""
    errors: list[Cause] = []
    names: set[str] = set()
    for i, claim in enumerate(spec.get("resourceClaims") or []):
        cpath = f"{path}.resourceClaims[{i}]"
        claim = claim if isinstance(claim, dict) else {}
        name = str(claim.get("name") or "")
        if not name:
            errors.append(required(f"{cpath}.name"))
        elif name in names:
            errors.append(duplicate(f"{cpath}.name", name))
        else:
            errors.extend(invalid(f"{cpath}.name", name, m) for m in dns1123_label_errors(name))
            names.add(name)
        by_name, by_template = claim.get("resourceClaimName"), claim.get(
            "resourceClaimTemplateName")
        shown = _go_pod_resource_claim(name, by_name, by_template)
        if by_name is not None and by_template is not None:
            errors.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: at most one of"
                                " `resourceClaimName` or `resourceClaimTemplateName` may be"
                                " specified", cpath))
        if by_name is None and by_template is None:
            errors.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: must specify one"
                                " of: `resourceClaimName`, `resourceClaimTemplateName`", cpath))
        for key, value in (("resourceClaimName", by_name),
                           ("resourceClaimTemplateName", by_template)):
            if value is not None:
                errors.extend(invalid(f"{cpath}.{key}", value, m)
                              for m in dns1123_subdomain_errors(str(value)))
    for key in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(key) or []):
            resources = container.get("resources") if isinstance(container, dict) else None
            claims = resources.get("claims") if isinstance(resources, dict) else None
            errors.extend(_container_claim_errors(
                claims or [], names, f"{path}.{key}[{i}].resources.claims"))
    return errors


def _container_claim_errors(claims: list[Any], pod_claims: set[str], path: str) -> list[Cause]:
    errors: list[Cause] = []
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        name = str((claim or {}).get("name") or "") if isinstance(claim, dict) else ""
        if not name:
            errors.append(required(f"{path}[{i}]"))
            continue
        key = f"{name}/{claim.get('request') or ''}"
        if key in seen:
            errors.append(duplicate(f"{path}[{i}]", name))
        seen.add(key)
        if name not in pod_claims:
            listed = (": " + ", ".join(sorted(pod_claims))) if pod_claims else " which is empty"
            errors.append(Cause("FieldValueNotFound", f'Not found: "{name}": must be one of the'
                                f" names in pod.spec.resourceClaims{listed}", f"{path}[{i}]"))
    return errors


def _go_pod_resource_claim(name: str, by_name: Any, by_template: Any) -> str:
    """%#v of a core.PodResourceClaim (a set pointer prints as an address)."""
    def pointer(value: Any) -> str:
        return "(*string)(nil)" if value is None else "(*string)(0xc000010000)"
    return (f'core.PodResourceClaim{{Name:"{name}", ResourceClaimName:{pointer(by_name)},'
            f" ResourceClaimTemplateName:{pointer(by_template)}}}")
