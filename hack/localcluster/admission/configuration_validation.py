"""Validation of ValidatingWebhookConfiguration and MutatingWebhookConfiguration objects, as
kube-apiserver's admissionregistration validation does it for v1: webhook names (qualified,
unique), the client config (exactly one of url and service; an https URL with a host and no
user, fragment or query; a service's name, namespace, port and path), failurePolicy,
matchPolicy, sideEffects, timeoutSeconds, admissionReviewVersions and, for mutating webhooks,
reinvocationPolicy. Rules and selectors are not validated here.

An update keeps two of the checks only where the old object passed them (sideEffects of None
or NoneOnDryRun, a recognized admissionReviewVersion), as kube-apiserver does.
"""

from __future__ import annotations

from typing import Any

from ..errors import Cause, duplicate, invalid, required, unsupported
from ..name_validation import dns1035_label_errors, dns1123_subdomain_errors
from ..webhook_client_config import client_config_errors

Json = dict[str, Any]

KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
_REVIEW_VERSIONS = ("v1", "v1beta1")
_NO_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
_SIDE_EFFECTS = ["None", "NoneOnDryRun", "Some", "Unknown"]


def validation_errors(kind: str, obj: Json, old: Json | None) -> list[Cause]:
    """The field errors of a webhook configuration `obj` (`old` on update)."""
    hooks = _hooks(obj)
    old_hooks = _hooks(old) if old is not None else None
    recognized = old_hooks is None or all(_has_recognized_version(h) for h in old_hooks)
    no_side_effects = old_hooks is None or all(
        h.get("sideEffects") in _NO_SIDE_EFFECTS for h in old_hooks)
    errors: list[Cause] = []
    seen: set[str] = set()
    for i, hook in enumerate(hooks):
        path = f"webhooks[{i}]"
        name = hook.get("name")
        if isinstance(name, str) and name in seen:
            errors.append(duplicate(f"{path}.name", name))
        seen.add(str(name))
        errors += _review_version_errors(hook.get("admissionReviewVersions"),
                                         f"{path}.admissionReviewVersions", recognized)
        errors += _hook_errors(kind, hook, path, no_side_effects)
    return errors


def _hooks(obj: Json) -> list[Json]:
    hooks = obj.get("webhooks")
    return [h for h in hooks if isinstance(h, dict)] if isinstance(hooks, list) else []


def _has_recognized_version(hook: Json) -> bool:
    versions = hook.get("admissionReviewVersions")
    return isinstance(versions, list) and any(v in _REVIEW_VERSIONS for v in versions)


def _hook_errors(kind: str, hook: Json, path: str, no_side_effects: bool) -> list[Cause]:
    errors = _name_errors(hook.get("name"), f"{path}.name")
    policy = hook.get("failurePolicy")
    if policy is not None and policy not in ("Fail", "Ignore"):
        errors.append(unsupported(f"{path}.failurePolicy", policy, ["Fail", "Ignore"]))
    match = hook.get("matchPolicy")
    if match is not None and match not in ("Equivalent", "Exact"):
        errors.append(unsupported(f"{path}.matchPolicy", match, ["Equivalent", "Exact"]))
    side_effects = hook.get("sideEffects")
    allowed = _NO_SIDE_EFFECTS if no_side_effects else _SIDE_EFFECTS
    if side_effects is None:
        errors.append(Cause("FieldValueRequired",
                            "Required value: must specify one of " + ", ".join(allowed),
                            f"{path}.sideEffects"))
    elif side_effects not in allowed:
        errors.append(unsupported(f"{path}.sideEffects", side_effects, allowed))
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        errors.append(invalid(f"{path}.timeoutSeconds", timeout,
                              "the timeout value must be between 1 and 30 seconds"))
    reinvocation = hook.get("reinvocationPolicy")
    if kind == KINDS[1] and reinvocation is not None and reinvocation not in (
            "IfNeeded", "Never"):
        errors.append(unsupported(f"{path}.reinvocationPolicy", reinvocation,
                                  ["IfNeeded", "Never"]))
    errors += client_config_errors(hook.get("clientConfig"), f"{path}.clientConfig")
    return errors


def _name_errors(name: Any, path: str) -> list[Cause]:
    if not isinstance(name, str) or not name:
        return [required(path)]
    messages = dns1123_subdomain_errors(name)
    errors = [invalid(path, name, ",".join(messages))] if messages else []
    if len(name.split(".")) < 3:
        errors.append(invalid(path, name,
                              "should be a domain with at least three segments separated by dots"))
    return errors


def _review_version_errors(versions: Any, path: str, recognized: bool) -> list[Cause]:
    if not isinstance(versions, list) or not versions:
        return [Cause("FieldValueRequired",
                      "Required value: must specify one of " + ", ".join(_REVIEW_VERSIONS),
                      path)]
    errors: list[Cause] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        version = str(version)
        if version in seen:
            errors.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errors += [invalid(f"{path}[{i}]", version, message)
                   for message in dns1035_label_errors(version)]
    if recognized and not any(v in _REVIEW_VERSIONS for v in versions):
        rendered = "[]string{" + ", ".join(f'"{v}"' for v in versions) + "}"
        errors.append(Cause("FieldValueInvalid", f"Invalid value: {rendered}: must include at"
                            " least one of " + ", ".join(_REVIEW_VERSIONS), path))
    return errors

