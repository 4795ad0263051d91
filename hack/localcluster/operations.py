"""The verbs of the API server (create, get, list, update, patch, delete) with their semantics.

This is the layer between HTTP and storage: it resolves versions, applies defaults, validation,
schemas, patches and server-side apply, keeps metadata (uid, resourceVersion, generation,
managedFields, finalizers, deletionTimestamp) the way kube-apiserver does, and reports failures
as `ApiError`s. It knows nothing of HTTP.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from . import (
    admission,
    builtin_rules,
    certificate_requests,
    conversion,
    crd_scale_rules,
    patch,
    schema,
    typed_decoding,
)
from . import apply as ssa
from .errors import (
    ApiError,
    Cause,
    already_exists,
    bad_request,
    conflict,
    invalid_object,
    not_found,
    unparsable_resource_version,
)
from .json_copy import copy_json
from .metadata_rules import metadata_errors
from .registry import Registry, ResourceType
from .selectors import FieldSelector, LabelSelector
from .storage import DELETED, Storage
from .users import UserInfo

Json = dict[str, Any]

CRD_CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SERVER_OWNED_META = ("uid", "creationTimestamp", "resourceVersion", "generation",
                      "deletionTimestamp", "deletionGracePeriodSeconds")


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class WriteOptions:
    """Query parameters shared by writes."""

    dry_run: bool = False
    manager: str = ""
    field_validation: str = "Warn"
    force: bool = False
    user_agent: str = ""
    #: The admission webhooks of an API request (None: the server's own writes).
    webhooks: admission.RequestAdmission | None = None
    #: Who sent the request (None: the server's own writes).
    user: UserInfo | None = None


@dataclass
class WriteResult:
    """What a write returns: the object, whether it was created, and warnings to send."""

    obj: Json
    created: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class ListResult:
    """A page of a list."""

    items: list[Json]
    resource_version: str
    continue_token: str = ""
    remaining: int | None = None


class Operations:
    """kube-apiserver's request semantics over `Storage` and `Registry`."""

    def __init__(self, storage: Storage, registry: Registry) -> None:
        self.storage = storage
        self.registry = registry
        self.cluster_ips = builtin_rules.ClusterIPAllocator()

    # --- helpers ---------------------------------------------------------------------------

    def _served(self, rt: ResourceType, obj: Json) -> Json:
        """An object as served at `rt`'s version (conversion strategy None: apiVersion only;
        Webhook: the webhook's answer, or `conversion.ConversionPending`)."""
        if obj.get("apiVersion") == rt.api_version:
            return obj
        if rt.custom:
            return conversion.to_version(self.storage, rt, obj, rt.api_version)
        return {**obj, "apiVersion": rt.api_version}

    def _stored(self, rt: ResourceType, obj: Json) -> Json:
        storage_version = rt.storage_version or rt.version
        api_version = f"{rt.group}/{storage_version}" if rt.group else storage_version
        if obj.get("apiVersion") != api_version and conversion.webhook_of(self.storage, rt):
            return conversion.to_version(self.storage, rt, obj, api_version)
        obj["apiVersion"] = api_version
        return obj

    def _versions(self, rt: ResourceType, namespace: str, name: str) -> ssa.Versions | None:
        """How the field manager sees a custom object at the other versions of its kind."""
        if not rt.custom:
            return None

        def served(api_version: str) -> ResourceType | None:
            group, _, version = api_version.rpartition("/")
            return self.registry.get(rt.group, version, rt.plural) if group == rt.group \
                else None

        return ssa.Versions(
            convert=lambda objs, v: conversion.all_to_version(self.storage, rt, objs, v),
            resource=served,
            identity={"name": name, **({"namespace": namespace} if rt.namespaced else {})})

    def _in_storage_version(self, rt: ResourceType, stored: Json) -> bool:
        """A custom object is stored in its CRD's storage version (built-in objects always
        are: one stored version per resource)."""
        if not rt.custom:
            return True
        storage_version = rt.storage_version or rt.version
        api_version = f"{rt.group}/{storage_version}" if rt.group else storage_version
        return stored.get("apiVersion") == api_version

    def _check_body(self, rt: ResourceType, body: Any, namespace: str) -> Json:
        if not isinstance(body, dict):
            raise bad_request("the body of the request was not a JSON object")
        kind, api_version = body.get("kind"), body.get("apiVersion")
        if (kind is not None and kind != rt.kind) or (
                api_version is not None and api_version != rt.api_version):
            foreign = typed_decoding.foreign_body_error(
                rt, str(kind or rt.kind), str(api_version or rt.api_version), body)
            if foreign is not None:
                version = str(api_version or rt.api_version).rpartition("/")[2]
                raise bad_request(f'{kind or rt.kind} in version "{version}" cannot be handled'
                                  f" as a {rt.kind}: {foreign}")
        if kind is not None and kind != rt.kind:
            raise bad_request(
                f"{rt.kind} in version \"{rt.version}\" cannot be handled as a {rt.kind}: "
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
        if api_version is not None and api_version != rt.api_version:
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the expected API"
                f" version ({rt.api_version})")
        meta = body.get("metadata")
        if meta is None:
            body["metadata"] = meta = {}
        if not isinstance(meta, dict):
            error = typed_decoding.decode_error(rt, body) or "metadata must be an object"
            raise bad_request(f"{rt.kind} in version \"{rt.version}\" cannot be handled as a "
                              f"{rt.kind}: {error}")
        body_ns = meta.get("namespace")
        if rt.namespaced:
            if body_ns and body_ns != namespace:
                raise bad_request("the namespace of the provided object does not match the"
                                  " namespace sent on the request")
            meta["namespace"] = namespace
        body["kind"] = rt.kind
        body["apiVersion"] = rt.api_version
        return body

    def _schema_pass(self, rt: ResourceType, obj: Json, opts: WriteOptions,
                     warnings: list[str]) -> list[Cause]:
        """Prune, default and validate a custom object against its schema."""
        if not rt.custom or rt.schema is None:
            return []
        unknown = schema.prune(obj, rt.schema)
        if unknown:
            if opts.field_validation == "Strict":
                raise bad_request(
                    f"{rt.kind} in version \"{rt.version}\" cannot be handled as a {rt.kind}: "
                    "strict decoding error: "
                    + ", ".join(f'unknown field "{p}"' for p in unknown))
            if opts.field_validation == "Warn":
                warnings.extend(f'unknown field "{p}"' for p in unknown)
        schema.apply_defaults(obj, rt.schema)
        return [*schema.validate(obj, rt.schema), *crd_scale_rules.causes(rt, obj)]

    def _validate(self, rt: ResourceType, obj: Json, old: Json | None,
                  extra: list[Cause]) -> None:
        causes = metadata_errors(rt.kind, obj.get("metadata"), rt.namespaced)
        causes.extend(extra)
        causes.extend(builtin_rules.validation_errors(rt, obj, old))
        if old is not None:
            new_meta, old_meta = obj["metadata"], old["metadata"]
            old_finalizers = set(old_meta.get("finalizers") or [])
            added = [f for f in new_meta.get("finalizers") or [] if f not in old_finalizers]
            if old_meta.get("deletionTimestamp") and added:
                listed = ", ".join(json.dumps(f) for f in sorted(set(added)))  # Go's %#v
                cause = Cause("FieldValueForbidden",
                              "Forbidden: no new finalizers can be added if the object is"
                              f" being deleted, found new finalizers []string{{{listed}}}",
                              "metadata.finalizers")
                # A built-in kind's object meta is checked twice (the generic update checks
                # and the kind's own ValidateObjectMetaUpdate), so kube-apiserver says it twice.
                causes.extend([cause] if rt.custom else [cause, cause])
        if causes:
            name = obj.get("metadata", {}).get("name") or obj.get("metadata", {}).get(
                "generateName", "")
            raise invalid_object(rt.group, rt.kind, name, causes)

    def _bump_generation(self, rt: ResourceType, new: Json, old: Json) -> None:
        if "generation" not in old["metadata"]:
            return
        skip = {"metadata", "status", "apiVersion", "kind"} if rt.has_status else {
            "metadata", "apiVersion", "kind"}
        changed = any(new.get(k) != old.get(k) for k in set(new) | set(old) if k not in skip)
        new["metadata"]["generation"] = old["metadata"]["generation"] + (1 if changed else 0)

    # --- get / list ------------------------------------------------------------------------

    def get(self, rt: ResourceType, namespace: str, name: str) -> Json:
        obj = self.storage.get(rt.stored_as, namespace if rt.namespaced else "", name)
        if obj is None:
            raise not_found(rt.group, rt.plural, name)
        return self._served(rt, obj)

    def list_objects(self, rt: ResourceType, namespace: str | None, *, label_selector: str = "",
             field_selector: str = "", limit: int = 0, continue_token: str = "",
             resource_version: str = "", resource_version_match: str = "") -> ListResult:
        labels = LabelSelector.parse(label_selector)
        fields = FieldSelector.for_resource(field_selector, rt)
        ns = namespace if rt.namespaced else None
        _validate_list_options(resource_version, resource_version_match, continue_token)
        start = ""
        if continue_token:
            start, token_rv = _decode_continue(continue_token)
            if resource_version not in ("", "0"):
                raise bad_request("specifying resource version is not allowed when using"
                                  " continue")
            # Later pages are read at the first page's version, so the list is consistent.
            if token_rv < self.storage.oldest_replayable_rv():
                raise ApiError(410, "Expired", _CONTINUE_EXPIRED)
            objs, current = self._objects_at(rt, ns, labels, str(token_rv), "Exact")
        else:
            objs, current = self._objects_at(rt, ns, labels, resource_version,
                                             resource_version_match)
        items: list[Json] = []
        remaining = 0
        last_key = ""
        for obj in objs:
            meta = obj["metadata"]
            key = f"{meta.get('namespace', '')}/{meta['name']}"
            if start and key <= start:
                continue
            if not (labels.matches(meta.get("labels")) and fields.matches(obj)):
                continue
            if limit > 0 and len(items) >= limit:  # a negative limit is no limit
                remaining += 1
                continue
            items.append(obj)
            last_key = key
        if limit > 0 and not remaining and len(items) == limit and (
                label_selector or field_selector):
            # etcd pages by keys, not by matches: a full page with any key after its last one
            # gets a continue token, even when nothing after it matches.
            remaining = int(any(
                f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" > last_key
                for o in self.storage.list_selected(rt.stored_as, ns, LabelSelector.parse(""))))
        token = ""
        if remaining:
            token = base64.urlsafe_b64encode(
                json.dumps({"rv": current, "start": last_key}).encode()).decode()
        # The remaining count is only known (and only reported) for unfiltered lists.
        count = remaining if remaining and not (label_selector or field_selector) else None
        # One ConversionPending for every object a conversion webhook must answer for.
        served = conversion.all_to_version(self.storage, rt, items, rt.api_version) \
            if rt.custom else [self._served(rt, o) for o in items]
        return ListResult(served, str(current), token, count)

    def _objects_at(self, rt: ResourceType, ns: str | None, labels: LabelSelector,
                    resource_version: str, match: str) -> tuple[list[Json], int]:
        """The objects a list at (resourceVersion, resourceVersionMatch) sees, and the
        version the list reports. Current lists are narrowed by `labels` through the label
        index; a snapshot of an older version may hold objects outside it."""
        if resource_version in ("", "0"):
            return self.storage.list_selected(rt.stored_as, ns, labels), self.storage.rv
        try:
            wanted = int(resource_version)
        except ValueError:
            raise unparsable_resource_version(resource_version) from None
        if wanted > self.storage.rv:
            raise ApiError(504, "Timeout", f"Timeout: Too large resource version: {wanted},"
                           f" current: {self.storage.rv}", {"causes": [{
                               "reason": "ResourceVersionTooLarge",
                               "message": "Too large resource version"}],
                               "retryAfterSeconds": 1})
        if match != "Exact" or wanted == self.storage.rv:
            return self.storage.list_selected(rt.stored_as, ns, labels), self.storage.rv
        return self._snapshot(rt, ns, wanted), wanted

    def _snapshot(self, rt: ResourceType, ns: str | None, at: int) -> list[Json]:
        """The objects as they were at version `at`, rebuilt by undoing later history."""
        if at < self.storage.oldest_replayable_rv():
            oldest = self.storage.oldest_replayable_rv()
            raise ApiError(410, "Expired", f"too old resource version: {at} ({oldest})")
        state = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
                 for o in self.storage.list_objects(rt.stored_as, ns)}
        for change in reversed(list(self.storage._history)):
            if change.rv <= at:
                break
            if change.resource != rt.stored_as:
                continue
            meta = change.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if ns is not None and key[0] != ns:
                continue
            if change.old is None:
                state.pop(key, None)
            else:
                state[key] = change.old
        return [state[k] for k in sorted(state)]

    # --- create ----------------------------------------------------------------------------

    def create(self, rt: ResourceType, namespace: str, body: Any,
               opts: WriteOptions) -> WriteResult:
        obj = self._check_body(rt, copy_json(body), namespace)
        typed_decoding.check_decodable(rt, obj)
        meta = obj["metadata"]
        requested_name = str(meta.get("name") or "")
        if rt.namespaced and not namespace:
            raise bad_request("the namespace of the object could not be determined")
        admission.admit_create(self.storage, rt, namespace, requested_name, obj)
        attrs = admission.Attributes(rt, "CREATE", namespace, requested_name,
                                     dry_run=opts.dry_run)
        obj = admission.mutate(opts.webhooks, attrs, obj, None)
        meta = obj["metadata"]
        # As in BeforeCreate: after admission, so webhooks see a generateName without a name.
        if not meta.get("name") and meta.get("generateName"):
            suffix = "".join(random.choice(_GENERATE_ALPHABET) for _ in range(5))
            meta["name"] = str(meta["generateName"])[:58] + suffix
        for key in _SERVER_OWNED_META:
            meta.pop(key, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        if rt.custom or rt.kind in builtin_rules.GENERATION_KINDS:
            meta["generation"] = 1
        warnings: list[str] = []
        if rt.custom and rt.has_status:
            obj.pop("status", None)
        builtin_rules.prepare_for_create(rt, obj)
        if rt.kind == certificate_requests.KIND and not rt.custom:
            certificate_requests.prepare_for_create(obj, opts.user)
        extra = self._schema_pass(rt, obj, opts, warnings)
        self._validate(rt, obj, None, extra)
        admission.validate(opts.webhooks, attrs, obj, None)
        name = meta["name"]
        if self.storage.get(rt.stored_as, namespace if rt.namespaced else "", name) is not None:
            raise already_exists(rt.group, rt.plural, name)
        builtin_rules.apply_defaults(rt, obj, self.cluster_ips)
        obj = ssa.track_update(None, obj, manager=opts.manager or ssa.default_manager(
            opts.user_agent), rt=rt, operation="Update", now=now_rfc3339(), copy_new=False) \
            if "managedFields" not in body.get("metadata", {}) else obj
        return WriteResult(self._commit(rt, obj, opts), created=True, warnings=warnings)

    def _commit(self, rt: ResourceType, obj: Json, opts: WriteOptions) -> Json:
        obj = self._stored(rt, obj)
        if opts.dry_run:
            # Nothing is persisted, so no version is assigned: a dry-run create answers
            # without a resourceVersion, a dry-run update with the current one.
            return self._served(rt, obj)
        if rt.custom:  # the answer's conversion is asked for before anything is stored
            self._served(rt, obj)
        obj["metadata"]["resourceVersion"] = str(self.storage.next_rv())
        self.storage.put(rt.stored_as, obj)
        return self._served(rt, obj)

    # --- update ----------------------------------------------------------------------------

    def update(self, rt: ResourceType, namespace: str, name: str, body: Any,
               opts: WriteOptions, subresource: str = "") -> WriteResult:
        obj = self._check_body(rt, _request_copy(body, subresource, rt.custom), namespace)
        typed_decoding.check_decodable(rt, obj)
        meta = obj["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise bad_request("the name of the object (" + str(meta["name"]) + ") does not"
                              " match the name on the URL (" + name + ")")
        meta["name"] = name
        old = self.storage.get(rt.stored_as, namespace if rt.namespaced else "", name)
        if old is None:
            raise not_found(rt.group, rt.plural, name)
        uid, old_uid = meta.get("uid"), old["metadata"].get("uid")
        if uid and uid != old_uid:  # the storage's UID precondition, checked before the RV
            prefix = f"/registry/{rt.group}/" if rt.custom else "/registry/"
            key = f"{prefix}{rt.plural}/{namespace + '/' if rt.namespaced else ''}{name}"
            raise conflict(rt.group, rt.plural, name, "StorageError: invalid object, Code: 4,"
                           f" Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition"
                           f" failed: UID in precondition: {uid}, UID in object meta: {old_uid}")
        rv = meta.get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt.group, rt.plural, name, "the object has been modified; please"
                           " apply your changes to the latest version and try again")
        return self._write_over(rt, old, obj, opts, subresource,
                                track=lambda o, n: ssa.track_update(
                                    o, n, manager=opts.manager or ssa.default_manager(
                                        opts.user_agent), rt=rt, operation="Update",
                                    subresource=subresource, now=now_rfc3339(),
                                    copy_new=False, versions=self._versions(rt, namespace, name)))

    def _write_over(self, rt: ResourceType, old: Json, obj: Json, opts: WriteOptions,
                    subresource: str, track: Any) -> WriteResult:
        """The common tail of update, patch and apply on an existing object.

        `obj` is the write's own to change and keep: all of it, or on the status subresource
        its top level, metadata and status. `track` may hand back an object sharing `obj`'s
        values.
        """
        old_served = self._served(rt, old)
        meta = obj["metadata"]
        shared: Json = {}
        if subresource in ("status", "approval"):
            obj, shared = _status_over(old_served, obj)
            meta = obj["metadata"]
        else:
            if rt.has_status:
                if "status" in old_served:
                    obj["status"] = copy_json(old_served["status"])
                else:
                    obj.pop("status", None)
            for key in _SERVER_OWNED_META:
                if key == "resourceVersion":
                    continue
                if key in old["metadata"]:
                    meta[key] = old["metadata"][key]
                else:
                    meta.pop(key, None)
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        attrs = admission.Attributes(rt, "UPDATE", meta.get("namespace", ""), meta["name"],
                                     subresource, opts.dry_run)
        obj = admission.mutate(opts.webhooks, attrs, obj, old_served)
        meta = obj["metadata"]
        warnings: list[str] = []
        extra = self._schema_pass(rt, obj, opts, warnings) if subresource != "status" else []
        if rt.custom and subresource == "status" and rt.schema is not None:
            extra = [*schema.validate(obj, rt.schema),
                     *crd_scale_rules.causes(rt, obj, status_only=True)]
        builtin_rules.prepare_for_update(rt, obj, old_served)
        if rt.kind == certificate_requests.KIND and not rt.custom:
            extra = [*extra, *certificate_requests.prepare_for_update(
                obj, old_served, subresource, now_rfc3339())]
        self._validate(rt, obj, old_served, extra)
        if rt.custom:
            # customResourceStrategy.PrepareForUpdate bumps it, before the validating webhooks
            # (BeforeUpdate precedes updateValidation): they see the new generation.
            self._bump_generation(rt, obj, old_served)
        admission.validate(opts.webhooks, attrs, obj, old_served)
        builtin_rules.apply_defaults(rt, obj, self.cluster_ips)
        # What the strategy left as it was goes back to sharing the stored object's value. Only
        # setdefault()s and assignments of strings happen above, so == means the same JSON.
        for key, value in shared.items():
            if key in obj and obj[key] == value:
                obj[key] = value
        if not rt.custom:
            self._bump_generation(rt, obj, old_served)
        obj = track(old_served, obj)
        # As etcd3's GuaranteedUpdate: a write is skipped only when what would be stored is
        # the bytes stored, so an object stored in an older version is re-encoded in the
        # storage version even when nothing else changed (kube-storage-version-migrator).
        if _same_ignoring_managed_times(obj, old_served) and self._in_storage_version(rt, old):
            return WriteResult(old_served, warnings=warnings)
        # shouldDeleteDuringUpdate: a pod in its grace period (the kubelet writing the stopped
        # containers' status) stays until the kubelet deletes it with grace 0.
        if old["metadata"].get("deletionTimestamp") and not obj["metadata"].get(
                "finalizers") and not old["metadata"].get("deletionGracePeriodSeconds"):
            return WriteResult(self._finalize_delete(rt, obj, opts, stored=old),
                               warnings=warnings)
        return WriteResult(self._commit(rt, obj, opts), warnings=warnings)

    # --- patch -----------------------------------------------------------------------------

    def patch(self, rt: ResourceType, namespace: str, name: str, patch_type: str,
              body: Any, opts: WriteOptions, subresource: str = "") -> WriteResult:
        if patch_type == "strategic" and rt.custom:
            # Checked before the object is looked up, as the patch handler does.
            raise ApiError(415, "UnsupportedMediaType",
                           "the body of the request was in an unknown format - accepted media"
                           " types include: application/json-patch+json,"
                           " application/merge-patch+json, application/apply-patch+yaml")
        ns = namespace if rt.namespaced else ""
        old = self.storage.get(rt.stored_as, ns, name)
        if patch_type == "apply":
            return self._apply(rt, namespace, name, old, body, opts, subresource)
        if old is None:
            raise not_found(rt.group, rt.plural, name)
        # Each patch works on a copy of its own and returns it: the stored object stays as is.
        current = self._served(rt, old)
        if patch_type == "merge":
            patched = patch.json_merge_patch(current, body)
        elif patch_type == "json":
            patched = patch.json_patch(current, body)
        elif patch_type == "strategic":
            patched = patch.strategic_merge_patch(current, body, rt.kind)
        else:
            raise ApiError(415, "UnsupportedMediaType", f"unsupported patch type {patch_type}")
        if not isinstance(patched, dict):
            raise bad_request("the patched object is not a JSON object")
        if patch_type == "merge":
            typed_decoding.check_patched(rt, patched, patch.merge_patch_text(patched, body))
        elif patch_type == "json":
            typed_decoding.check_patched(rt, patched)
        rv = (patched.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt.group, rt.plural, name, "the object has been modified; please"
                           " apply your changes to the latest version and try again")
        patched_meta = patched.get("metadata") or {}
        patched_name, patched_ns = patched_meta.get("name"), patched_meta.get("namespace")
        if patched_name and patched_name != name:  # the patch handler's checkName
            raise bad_request(f"the name of the object ({patched_name}) does not match the name"
                              f" on the URL ({name})")
        if rt.namespaced and patched_ns and patched_ns != namespace:
            raise bad_request(f"the namespace of the object ({patched_ns}) does not match the"
                              f" namespace on the request ({namespace})")
        patched.setdefault("metadata", {})["name"] = name
        obj = self._check_body(rt, patched, namespace)
        return self._write_over(rt, old, obj, opts, subresource,
                                track=lambda o, n: ssa.track_update(
                                    o, n, manager=opts.manager or ssa.default_manager(
                                        opts.user_agent), rt=rt, operation="Update",
                                    subresource=subresource, now=now_rfc3339(),
                                    copy_new=False, versions=self._versions(rt, namespace, name)))

    def _apply(self, rt: ResourceType, namespace: str, name: str, old: Json | None,
               body: Any, opts: WriteOptions, subresource: str) -> WriteResult:
        ssa.validate_field_manager(opts.manager, apply=True)
        if not isinstance(body, dict):
            raise bad_request("the body of the apply request was not a JSON or YAML object")
        body = copy_json(body)
        ssa.check_name(body, name, namespace if rt.namespaced else "")
        meta = body["metadata"]
        self._check_body(rt, _shallow_copy(body), namespace)
        if rt.namespaced:
            meta["namespace"] = namespace
        now = now_rfc3339()
        if old is None:
            if subresource:
                raise not_found(rt.group, rt.plural, name)
            created = ssa.server_side_apply(None, body, manager=opts.manager, force=opts.force,
                                            rt=rt, now=now)
            self._check_body(rt, created, namespace)
            result = self._create_applied(rt, namespace, created, opts)
            return result
        old_served = self._served(rt, old)
        merged = ssa.server_side_apply(old_served, body, manager=opts.manager,
                                       force=opts.force, rt=rt, subresource=subresource, now=now,
                                       versions=self._versions(rt, namespace, name))
        obj = self._check_body(rt, merged, namespace)
        return self._write_over(rt, old, obj, opts, subresource, track=lambda o, n: n)

    def _create_applied(self, rt: ResourceType, namespace: str, obj: Json,
                        opts: WriteOptions) -> WriteResult:
        """Create by apply: like create, but managedFields come from the apply."""
        managed = obj["metadata"].get("managedFields")
        result = self.create(rt, namespace, obj, opts)
        if managed is not None and not opts.dry_run:
            stored = self.storage.get(rt.stored_as, namespace if rt.namespaced else "",
                                      result.obj["metadata"]["name"])
            assert stored is not None
            stored["metadata"]["managedFields"] = managed
        return result

    # --- delete ----------------------------------------------------------------------------

    def delete(self, rt: ResourceType, namespace: str, name: str, options: Json,
               dry_run: bool = False,
               webhooks: admission.RequestAdmission | None = None) -> tuple[Json, int]:
        """Delete per DeleteOptions; returns (body, 200) when the object is gone, or
        (body, 202) while finalizers (or a grace period) keep it; the HTTP layer picks the
        response code."""
        _validate_delete_options(options)
        ns = namespace if rt.namespaced else ""
        old = self.storage.get(rt.stored_as, ns, name)
        if old is None:
            raise not_found(rt.group, rt.plural, name)
        # rest.BeforeDelete's checks, which name the kind (not the resource).
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != old["metadata"]["uid"]:
            raise conflict(rt.group, rt.kind, name,
                           f"the UID in the precondition ({pre['uid']}) does not match the UID"
                           f" in record ({old['metadata']['uid']}). The object might have"
                           " been deleted and then recreated")
        if pre.get("resourceVersion") and pre["resourceVersion"] != old["metadata"][
                "resourceVersion"]:
            raise conflict(rt.group, rt.kind, name,
                           f"the ResourceVersion in the precondition ({pre['resourceVersion']})"
                           " does not match the ResourceVersion in record"
                           f" ({old['metadata']['resourceVersion']}). The object might have"
                           " been modified")
        admission.admit_delete(rt, name)
        admission.validate(webhooks, admission.Attributes(rt, "DELETE", ns, name,
                                                          dry_run=dry_run),
                           None, self._served(rt, old))
        policy = options.get("propagationPolicy") or _default_propagation(rt, old, options)
        obj = copy_json(old)
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if rt.kind == "CustomResourceDefinition" and CRD_CLEANUP not in finalizers:
            finalizers.append(CRD_CLEANUP)
        if policy == "Foreground" and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
        if policy == "Orphan" and "orphan" not in finalizers:
            finalizers.append("orphan")
        if policy == "Background":
            finalizers = [f for f in finalizers if f not in ("orphan", "foregroundDeletion")]
        pending = bool(finalizers) or (rt.kind == "Namespace")
        graceful = rt.kind == "Pod" and bool((obj.get("spec") or {}).get("nodeName")) and \
            options.get("gracePeriodSeconds", 1) != 0
        if not pending and not graceful:
            if dry_run:
                return self._served(rt, obj), 200
            self._finalize_delete(rt, obj, WriteOptions())
            return self._served(rt, obj), 200
        if meta.get("deletionTimestamp") and finalizers == list(meta.get("finalizers") or []):
            return self._served(rt, old), 202
        meta["finalizers"] = finalizers
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = now_rfc3339()
            grace = 0
            if graceful:
                grace = int(options.get("gracePeriodSeconds") or (obj.get("spec") or {}).get(
                    "terminationGracePeriodSeconds", 30))
            meta["deletionGracePeriodSeconds"] = grace
        if rt.kind == "Namespace":
            obj.setdefault("status", {})["phase"] = "Terminating"
        if not meta["finalizers"]:
            meta.pop("finalizers")
        served = self._commit(rt, obj, WriteOptions(dry_run=dry_run))
        return served, 202

    def _finalize_delete(self, rt: ResourceType, obj: Json, opts: WriteOptions,
                         stored: Json | None = None) -> Json:
        """Remove the object for good (no finalizers left). After an update that emptied the
        finalizers (`stored`: the object as stored), the DELETED event carries the stored
        object, as etcd's previous value does for kube-apiserver, and the caller gets the
        object it sent, without the empty finalizers Go's encoder leaves out."""
        if opts.dry_run:
            return self._served(rt, obj)
        if rt.kind == "Service":
            ip = (obj.get("spec") or {}).get("clusterIP")
            if ip and ip != "None":
                self.cluster_ips.release(ip)
        answer: Json | None = None
        if rt.custom:  # the answer's conversions are asked for before anything is removed
            self._served(rt, obj)
            if stored is not None:
                answer = self._stored(rt, copy_json(obj))
                self._served(rt, answer)
        change = self.storage.remove(rt.stored_as, obj if stored is None else stored,
                                     self.storage.next_rv())
        assert change.type == DELETED
        if stored is None:
            return self._served(rt, change.obj)
        if answer is None:
            answer = self._stored(rt, obj)
        if not answer["metadata"].get("finalizers"):
            answer["metadata"].pop("finalizers", None)
        return self._served(rt, answer)

    def finalize_namespace(self, rt: ResourceType, body: Json) -> Json:
        """PUT namespaces/<name>/finalize: set spec.finalizers; remove the namespace when done."""
        name = body["metadata"]["name"]
        old = self.storage.get(rt.stored_as, "", name)
        if old is None:
            raise not_found("", "namespaces", name)
        obj = copy_json(old)
        obj.setdefault("spec", {})["finalizers"] = list(
            (body.get("spec") or {}).get("finalizers") or [])
        if not obj["spec"]["finalizers"]:
            obj["spec"].pop("finalizers")
        if obj == old:
            return self._served(rt, old)
        if (obj["metadata"].get("deletionTimestamp") and not obj["spec"].get("finalizers")
                and not obj["metadata"].get("finalizers")):
            return self._finalize_delete(rt, obj, WriteOptions())
        return self._commit(rt, obj, WriteOptions())

    def delete_collection(self, rt: ResourceType, namespace: str | None, options: Json,
                          label_selector: str, field_selector: str,
                          dry_run: bool = False,
                          webhooks: admission.RequestAdmission | None = None) -> ListResult:
        """Delete every matching object; returns them as listed, which is what
        kube-apiserver answers a deletecollection with."""
        listed = self.list_objects(rt, namespace, label_selector=label_selector,
                           field_selector=field_selector)
        for obj in listed.items:
            try:
                self.delete(rt, obj["metadata"].get("namespace", ""),
                            obj["metadata"]["name"], options, dry_run, webhooks)
            except ApiError as err:
                if err.code != 404:
                    raise
        return listed

    # --- scale -----------------------------------------------------------------------------

    def get_scale(self, rt: ResourceType, namespace: str, name: str) -> Json:
        assert rt.scale is not None
        obj = self.get(rt, namespace, name)
        return _to_scale(rt, obj)

    def update_scale(self, rt: ResourceType, namespace: str, name: str, scale: Any,
                     opts: WriteOptions) -> WriteResult:
        assert rt.scale is not None
        if not isinstance(scale, dict):
            raise bad_request("the body of the request was not a JSON object")
        typed_decoding.check_decodable(typed_decoding.SCALE, scale)
        replicas = (scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool):
            raise invalid_object("autoscaling", "Scale", name, [Cause(
                "FieldValueRequired", "Required value", "spec.replicas")])
        scale_name = (scale.get("metadata") or {}).get("name")
        if scale_name and scale_name != name:
            raise bad_request(f"the name of the object ({scale_name}) does not match the name"
                              f" on the URL ({name})")
        # A custom resource's Scale is not validated as a Scale: the object it changes is,
        # with its schema and the scale paths' checks (crd_scale_rules).
        if replicas < 0 and not rt.custom:
            raise invalid_object("autoscaling", "Scale", name, [Cause(
                "FieldValueInvalid", f"Invalid value: {replicas}: must be greater than or"
                " equal to 0", "spec.replicas")])
        current = copy_json(self.get(rt, namespace, name))
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        if rv and rv != current["metadata"]["resourceVersion"]:
            raise conflict(rt.group, rt.plural, name, "the object has been modified; please"
                           " apply your changes to the latest version and try again")
        if opts.webhooks is not None:
            replicas = self._admit_scale(rt, namespace, name, current, replicas, opts)
            opts = dataclasses.replace(opts, webhooks=None)
        _set_path(current, rt.scale.spec_replicas_path, replicas)
        result = self.update(rt, namespace, name, current, opts)
        return WriteResult(_to_scale(rt, result.obj), warnings=result.warnings)

    def _admit_scale(self, rt: ResourceType, namespace: str, name: str, current: Json,
                     replicas: int, opts: WriteOptions) -> int:
        """Webhooks of a `/scale` write see Scale objects; the replicas they leave."""
        old_scale = _to_scale(rt, current)
        new_scale = copy_json(old_scale)
        new_scale["spec"]["replicas"] = replicas
        attrs = admission.Attributes(rt, "UPDATE", namespace, name, "scale", opts.dry_run)
        new_scale = admission.mutate(opts.webhooks, attrs, new_scale, old_scale)
        admission.validate(opts.webhooks, attrs, new_scale, old_scale)
        mutated = (new_scale.get("spec") or {}).get("replicas")
        return mutated if isinstance(mutated, int) and not isinstance(mutated, bool) else replicas

    def patch_scale(self, rt: ResourceType, namespace: str, name: str, patch_type: str,
                    body: Any, opts: WriteOptions) -> WriteResult:
        scale = self.get_scale(rt, namespace, name)
        if patch_type == "merge":
            patched = patch.json_merge_patch(scale, body)
        elif patch_type == "json":
            patched = patch.json_patch(scale, body)
        elif patch_type == "strategic":
            patched = patch.strategic_merge_patch(scale, body, "Scale")
        else:
            raise ApiError(415, "UnsupportedMediaType",
                           "apply patches are not supported on the scale subresource")
        if patch_type in ("merge", "json") and isinstance(patched, dict):
            typed_decoding.check_patched(typed_decoding.SCALE, patched)
        return self.update_scale(rt, namespace, name, patched, opts)


_CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can"
    " start a new list without the continue parameter, or use the continue token in this"
    " response to retrieve the remainder of the results. Continuing with the provided token"
    " results in an inconsistent list - objects that were created, modified, or deleted between"
    " the time the first chunk was returned and now may show up in the list.")


def _decode_continue(encoded: str) -> tuple[str, int]:
    """The start key and version of a continue token; refusals word it as kube-apiserver
    does (`invalid continue token: continue key is not valid: <Go's decoding error>`)."""
    def refuse(why: str) -> ApiError:
        return bad_request(f"invalid continue token: continue key is not valid: {why}")
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except ValueError:
        raise refuse("illegal base64 data at input byte 0") from None
    try:
        token = json.loads(raw)
        return str(token["start"]), int(token["rv"])
    except (ValueError, KeyError, TypeError):
        text = raw.decode("latin-1").lstrip(" \t\r\n")
        first = text[:1]
        if first and first not in '{["-0123456789tfn':
            quoted = json.dumps(first)[1:-1] if first != "'" else "\\'"
            raise refuse(f"invalid character '{quoted}' looking for beginning of value"
                         ) from None
        raise refuse("invalid continue token") from None


def _validate_list_options(resource_version: str, match: str, continue_token: str) -> None:
    """ValidateListOptions of a (non-watch) list: 422 on ListOptions.meta.k8s.io."""
    causes = []
    if match:
        if not resource_version:
            causes.append(Cause("FieldValueForbidden", "Forbidden: resourceVersionMatch is"
                                " forbidden unless resourceVersion is provided",
                                "resourceVersionMatch"))
        if continue_token:
            causes.append(Cause("FieldValueForbidden", "Forbidden: resourceVersionMatch is"
                                " forbidden when continue is provided", "resourceVersionMatch"))
        if match not in ("Exact", "NotOlderThan"):
            causes.append(Cause("FieldValueNotSupported", f'Unsupported value: "{match}":'
                                ' supported values: "Exact", "NotOlderThan", ""',
                                "resourceVersionMatch"))
        if match == "Exact" and resource_version == "0":
            causes.append(Cause("FieldValueForbidden", 'Forbidden: resourceVersionMatch "exact"'
                                ' is forbidden for resourceVersion "0"', "resourceVersionMatch"))
    if causes:
        raise invalid_object("meta.k8s.io", "ListOptions", "", causes)


def _validate_delete_options(options: Json) -> None:
    """ValidateDeleteOptions, checked before the object is looked up."""
    policy = options.get("propagationPolicy")
    causes = []
    if options.get("orphanDependents") is not None and policy is not None:
        causes.append(Cause("FieldValueInvalid", f"Invalid value: {json.dumps(policy)}:"
                            " orphanDependents and deletionPropagation cannot be both set",
                            "propagationPolicy"))
    if policy is not None and policy not in ("Background", "Foreground", "Orphan"):
        causes.append(Cause("FieldValueNotSupported", f"Unsupported value: {json.dumps(policy)}:"
                            ' supported values: "Foreground", "Background", "Orphan", "nil"',
                            "propagationPolicy"))
    if causes:
        raise invalid_object("meta.k8s.io", "DeleteOptions", "", causes)


def _default_propagation(rt: ResourceType, obj: Json, options: Json) -> str:
    """The propagation of a delete that names none: orphanDependents, then an orphan or
    foregroundDeletion finalizer already on the object, then the kind's default (batch/v1
    Jobs orphan their pods, for backwards compatibility; everything else is Background)."""
    if "orphanDependents" in options and options["orphanDependents"] is not None:
        return "Orphan" if options["orphanDependents"] else "Background"
    finalizers = obj["metadata"].get("finalizers") or []
    if "orphan" in finalizers:
        return "Orphan"
    if "foregroundDeletion" in finalizers:
        return "Foreground"
    if (rt.group, rt.version, rt.kind) == ("batch", "v1", "Job"):
        return "Orphan"
    return "Background"


def _get_path(obj: Json, path: str) -> Any:
    cur: Any = obj
    for part in path.strip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _set_path(obj: Json, path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    cur = obj
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value


def _to_scale(rt: ResourceType, obj: Json) -> Json:
    """The autoscaling/v1 Scale view of an object."""
    assert rt.scale is not None
    from .selectors import label_selector_string

    meta = obj["metadata"]
    status: Json = {"replicas": _get_path(obj, rt.scale.status_replicas_path) or 0}
    if rt.custom:
        if rt.scale.label_selector_path:
            selector = _get_path(obj, rt.scale.label_selector_path)
            if isinstance(selector, str) and selector:
                status["selector"] = selector
    else:
        selector_obj = (obj.get("spec") or {}).get("selector")
        if rt.kind == "ReplicationController" and isinstance(selector_obj, dict):
            selector_obj = {"matchLabels": selector_obj}  # a plain label map
        if isinstance(selector_obj, dict):
            status["selector"] = label_selector_string(selector_obj)
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                        "creationTimestamp") if k in meta}
    spec_replicas = _get_path(obj, rt.scale.spec_replicas_path)
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta,
            "spec": {"replicas": spec_replicas} if spec_replicas is not None else {},
            "status": status}


def _request_copy(body: Any, subresource: str, custom: bool) -> Any:
    """The part of a request body an update may change and keep, copied: on the status
    subresource the top level, metadata and status; otherwise everything, except for a
    built-in kind the managedFields, which are only read (the write replaces them). (A custom
    kind's schema may reach into metadata when it prunes and defaults.)"""
    if not isinstance(body, dict):
        return body
    if subresource == "status":
        out = _shallow_copy(body)
        if "status" in out:
            out["status"] = copy_json(out["status"])
        return out
    meta = body.get("metadata")
    if custom or not isinstance(meta, dict) or "managedFields" not in meta:
        return copy_json(body)
    out = copy_json({**body, "metadata": {**meta, "managedFields": None}})
    out["metadata"]["managedFields"] = meta["managedFields"]
    return out


def _shallow_copy(body: Json) -> Json:
    """A body's top level and metadata, copied: all that `_check_body` changes."""
    out = dict(body)
    meta = body.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = dict(meta)
    return out


def _status_over(old: Json, request: Json) -> tuple[Json, Json]:
    """What a status write starts from: the stored object with the request's status (and
    managedFields, until tracking replaces them), and the values it shares with `old`.

    The strategy may change the spec and such, so the object gets copies of them; the second
    dict maps each of those keys to `old`'s own value, for sharing it again when unchanged.
    """
    status = request.get("status")
    managed = request["metadata"].get("managedFields")
    shared = {k: v for k, v in old.items() if k not in ("metadata", "status")}
    obj = {**old, **copy_json(shared), "metadata": dict(old["metadata"])}
    if status is None:
        obj.pop("status", None)
    else:
        obj["status"] = status
    if managed is not None:
        obj["metadata"]["managedFields"] = managed
    return obj, shared


def _same_ignoring_managed_times(a: Json, b: Json) -> bool:
    """Whether a write changes nothing but managedFields timestamps (a no-op for etcd)."""
    if {k: v for k, v in a.items() if k != "metadata"} != {
            k: v for k, v in b.items() if k != "metadata"}:
        return False
    ma, mb = a["metadata"], b["metadata"]
    if {k: v for k, v in ma.items() if k != "managedFields"} != {
            k: v for k, v in mb.items() if k != "managedFields"}:
        return False
    strip = [{k: v for k, v in e.items() if k != "time"} for e in ma.get("managedFields") or []]
    strip_b = [{k: v for k, v in e.items() if k != "time"} for e in mb.get("managedFields") or []]
    return strip == strip_b
