"""Admission webhooks: the local server calls them as kube-apiserver does.

Mutating webhooks run where kube-apiserver runs them (after the built-in mutating plugins,
before the object is validated), one after another, each seeing its predecessor's JSONPatch
applied; validating webhooks run after validation, all at once, and the first refusal wins.

The write path (`Operations`) is synchronous, and a webhook is an HTTP call, so a request is
admitted by replay. At its admission points the write asks its `RequestAdmission`; without an
answer for exactly this object, that raises `AdmissionPending`, which carries what to send.
`admitted` awaits the calls and runs the write again from the start: the write reaches the same
point with the same object and now gets the answer, synchronously, and commits in one step.
When the stored object changed in between, the object differs, and the webhooks are called
again, as kube-apiserver calls admission again when its optimistic update retries.

Errors are kube-apiserver's: a refusal is the webhook's status with the message
`admission webhook "<name>" denied the request: <message>`; a webhook that cannot be called
fails the request with 500 `Internal error occurred: failed calling webhook ...` under
failurePolicy Fail and is skipped under Ignore; a dry run refuses (400) a webhook whose
sideEffects are not None or NoneOnDryRun. Warnings travel back as `Warning` headers, also on
errors. Reinvocation (reinvocationPolicy IfNeeded) is not done.

A webhook that asked for another version of the resource gets the objects in that version:
the apiVersion rewritten, or for a CRD converted by webhook, converted by it (`convert`), a
mutation being converted back; a conversion that fails is a 500 `Internal error occurred`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import ApiError
from ..json_copy import copy_json
from ..patch import json_patch
from ..registry import Registry, ResourceType
from ..storage import Storage
from ..users import ADMIN, UserInfo
from .webhook_client import CallError, WebhookClient
from .webhook_rules import Attributes, Invocation, matching_hooks

Json = dict[str, Any]
T = TypeVar("T")

__all__ = ["AdmissionPending", "RequestAdmission", "Webhooks", "admitted", "warning_header"]

#: Rounds of replay before giving up on an object that keeps changing under the request.
MAX_ROUNDS = 8
REVIEW_VERSION = "admission.k8s.io/v1"


class AdmissionPending(Exception):
    """The write needs webhook answers it does not have yet."""

    def __init__(self, key: str, attrs: Attributes, obj: Json | None, old: Json | None,
                 invocations: list[Invocation]) -> None:
        super().__init__(key)
        self.key = key
        self.attrs = attrs
        self.obj = obj
        self.old = old
        self.invocations = invocations


class Webhooks:
    """The webhook caller of one API server: configuration lookup and the HTTP client."""

    def __init__(self, storage: Storage, registry: Registry) -> None:
        self.storage = storage
        self.registry = registry
        self.client = WebhookClient(storage)
        #: Checked first at every validating-admission point with (user, attrs, obj, old);
        #: raises to refuse (the RBAC mode's escalation checks). None: nothing to check.
        self.guard: Callable[[UserInfo, Attributes, Json | None, Json | None], None] | None \
            = None
        #: Converts an object to the version of the given resource type, as a CRD's
        #: conversion webhook does (None, or a CRD without one: the apiVersion is rewritten).
        self.convert: Callable[[ResourceType, Json], Awaitable[Json]] | None = None

    def request(self, user: UserInfo | None, options: Json) -> RequestAdmission:
        """The admission of one API request by `user`, whose write options are `options`
        (a CreateOptions, UpdateOptions, PatchOptions or DeleteOptions object)."""
        return RequestAdmission(self, user or ADMIN, options)

    async def close(self) -> None:
        await self.client.close()


@dataclass
class RequestAdmission:
    """One API request's webhook answers, kept across the replays of its write."""

    webhooks: Webhooks
    user: UserInfo
    options: Json
    warnings: list[str] = field(default_factory=list)
    _answers: dict[str, Json | None] = field(default_factory=dict)

    # --- the write's admission points (synchronous) ------------------------------------------

    def mutate(self, attrs: Attributes, obj: Json, old: Json | None) -> Json:
        """`obj` as the mutating webhooks leave it."""
        invocations = self._matching(attrs, obj, old, mutating=True)
        if not invocations:
            return obj
        key = _key("mutate", attrs, obj, old)
        if key not in self._answers:
            raise AdmissionPending(key, attrs, copy_json(obj), old, invocations)
        answer = self._answers[key]
        assert answer is not None
        return copy_json(answer)

    def validate(self, attrs: Attributes, obj: Json | None, old: Json | None) -> None:
        """Return when the validating webhooks admit the write (refusals raise when the
        answers are collected, so a recorded answer is an admission)."""
        if self.webhooks.guard is not None:
            self.webhooks.guard(self.user, attrs, obj, old)
        invocations = self._matching(attrs, obj, old, mutating=False)
        if not invocations:
            return
        key = _key("validate", attrs, obj, old)
        if key not in self._answers:
            raise AdmissionPending(key, attrs, obj, old, invocations)

    def _matching(self, attrs: Attributes, obj: Json | None, old: Json | None, *,
                  mutating: bool) -> list[Invocation]:
        return matching_hooks(self.webhooks.storage, self.webhooks.registry, attrs, obj, old,
                              mutating=mutating)

    # --- calling (asynchronous) --------------------------------------------------------------

    async def resolve(self, pending: AdmissionPending) -> None:
        """Call the pending webhooks and record the answer; ApiError when they refuse."""
        try:
            if pending.invocations[0].hook.mutating:
                self._answers[pending.key] = await self._mutate(pending)
            else:
                await self._validate(pending)
                self._answers[pending.key] = None
        except ApiError as err:
            if self.warnings:
                err.headers = {**err.headers, "Warning": warning_header(self.warnings)}
            raise

    async def _mutate(self, pending: AdmissionPending) -> Json:
        assert pending.obj is not None
        obj = pending.obj
        for invocation in pending.invocations:
            sent = await self._in_version(invocation, pending.attrs, obj)
            assert sent is not None
            response = await self._call(invocation, pending.attrs, sent, await self._in_version(
                invocation, pending.attrs, pending.old))
            if response is None:
                continue
            patch = response.get("patch")
            if patch:
                if response.get("patchType") != "JSONPatch":
                    raise _internal(invocation, "webhook returned invalid response.patchType of"
                                    f" {json.dumps(response.get('patchType', ''))}")
                try:
                    operations = json.loads(base64.b64decode(patch))
                    patched = json_patch(sent, operations)
                except (ValueError, ApiError) as err:
                    raise ApiError(500, "InternalError", f"Internal error occurred: {err}",
                                   {"causes": [{"message": str(err)}]}) from None
                if not isinstance(patched, dict):
                    raise ApiError(500, "InternalError", "Internal error occurred: the patched"
                                   " object is not a JSON object")
                back = patched if sent is obj else await self._in_version(
                    invocation, pending.attrs, patched, back=True)
                assert back is not None
                obj = back
        return obj

    async def _validate(self, pending: AdmissionPending) -> None:
        results = await asyncio.gather(
            *(self._call_in_version(i, pending.attrs, pending.obj, pending.old)
              for i in pending.invocations), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _call_in_version(self, invocation: Invocation, attrs: Attributes,
                               obj: Json | None, old: Json | None) -> Json | None:
        return await self._call(invocation, attrs, await self._in_version(invocation, attrs, obj),
                                await self._in_version(invocation, attrs, old))

    async def _in_version(self, invocation: Invocation, attrs: Attributes, obj: Json | None,
                          back: bool = False) -> Json | None:
        """`obj` in the version the webhook asked for (`back`: from it to the request's), by
        the CRD's conversion webhook; a failure is kube-apiserver's internal error."""
        convert = self.webhooks.convert
        target = attrs.rt if back else invocation.rt
        if (obj is None or convert is None or attrs.subresource == "scale"
                or invocation.rt.version == attrs.rt.version
                or invocation.rt.group != attrs.rt.group):
            return obj
        try:
            return await convert(target, obj)
        except ApiError as err:
            message = f"Internal error occurred: {err.message}"
            raise ApiError(500, "InternalError", message,
                           {"causes": [{"message": err.message}]}) from None

    async def _call(self, invocation: Invocation, attrs: Attributes, obj: Json | None,
                    old: Json | None) -> Json | None:
        """The webhook's AdmissionResponse when it admits; None when it could not be called
        and may be ignored; ApiError when it refuses or fails closed."""
        hook = invocation.hook
        if attrs.dry_run and hook.side_effects not in ("None", "NoneOnDryRun"):
            raise ApiError(400, "BadRequest",
                           f'admission webhook "{hook.name}" does not support dry run')
        uid = str(uuid.uuid4())
        review = {"apiVersion": REVIEW_VERSION, "kind": "AdmissionReview",
                  "request": self._review_request(uid, invocation, attrs, obj, old)}
        try:
            response = await self.webhooks.client.post(hook, review, uid)
        except CallError as err:
            if hook.failure_policy == "Ignore":
                return None
            raise _internal(invocation, str(err)) from None
        for text in response.get("warnings") or []:
            if isinstance(text, str) and text not in self.warnings:
                self.warnings.append(text)
        if response.get("allowed") is True:
            return response
        raise _denied(hook.name, response.get("status"))

    def _review_request(self, uid: str, invocation: Invocation, attrs: Attributes,
                        obj: Json | None, old: Json | None) -> Json:
        rt, sent = attrs.rt, invocation.rt
        group, version, kind = attrs.kind
        sent_kind = (group, sent.version if group == rt.group else version, kind)
        request: Json = {
            "uid": uid,
            "kind": _gvk(*sent_kind),
            "resource": {"group": sent.group, "version": sent.version,
                         "resource": sent.plural},
            "requestKind": _gvk(group, version, kind),
            "requestResource": {"group": rt.group, "version": rt.version,
                                "resource": rt.plural},
            "operation": attrs.operation,
            "userInfo": self.user.to_json(),
            "object": _as_version(obj, sent_kind),
            "oldObject": _as_version(old, sent_kind),
            "dryRun": attrs.dry_run,
            "options": self.options,
        }
        if attrs.subresource:
            request["subResource"] = attrs.subresource
            request["requestSubResource"] = attrs.subresource
        if attrs.name:
            request["name"] = attrs.name
        if attrs.namespace and rt.namespaced:
            request["namespace"] = attrs.namespace
        return request


async def admitted(admission: RequestAdmission | None, write: Callable[[], T]) -> T:
    """Run `write` (which consults `admission` at its admission points) until every webhook it
    needs has answered; the write's result, or the ApiError of a refusal."""
    if admission is None:
        return write()
    for _ in range(MAX_ROUNDS):
        try:
            return write()
        except AdmissionPending as pending:
            await admission.resolve(pending)
    raise ApiError(409, "Conflict", "the object has been modified; please apply your changes"
                   " to the latest version and try again")


def warning_header(warnings: list[str]) -> str:
    """RFC 7234 warnings with code 299, as kube-apiserver writes them."""
    return ", ".join('299 - "' + w.replace("\\", "\\\\").replace('"', '\\"') + '"'
                     for w in warnings)


def _gvk(group: str, version: str, kind: str) -> Json:
    return {"group": group, "version": version, "kind": kind}


def _as_version(obj: Json | None, gvk: tuple[str, str, str]) -> Json | None:
    if obj is None:
        return None
    group, version, _ = gvk
    return {**obj, "apiVersion": f"{group}/{version}" if group else version}


def _key(phase: str, attrs: Attributes, obj: Json | None, old: Json | None) -> str:
    """What an answer is for: the phase, the request, and the object without the fields a
    replay sets anew (uid, creation time, a generated name, managedFields times)."""
    return json.dumps([phase, attrs.rt.group, attrs.rt.plural, attrs.operation,
                       attrs.namespace, attrs.name, attrs.subresource, attrs.dry_run,
                       _stable(obj, attrs), (old or {}).get("metadata", {}).get(
                           "resourceVersion")], sort_keys=True)


def _stable(obj: Json | None, attrs: Attributes) -> Json | None:
    if obj is None:
        return None
    meta = dict(obj.get("metadata") or {})
    for volatile in ("uid", "creationTimestamp"):
        meta.pop(volatile, None)
    if attrs.operation == "CREATE" and meta.get("generateName"):
        meta.pop("name", None)
    managed = meta.get("managedFields")
    if isinstance(managed, list):
        meta["managedFields"] = [{k: v for k, v in e.items() if k != "time"}
                                 if isinstance(e, dict) else e for e in managed]
    return {**obj, "metadata": meta}


def _denied(name: str, status: Any) -> ApiError:
    """ToStatusErr: the webhook's status, prefixed with who denied; code 400 at least."""
    status = status if isinstance(status, dict) else {}
    denied_by = f'admission webhook "{name}" denied the request'
    message, reason = status.get("message") or "", status.get("reason") or ""
    if message:
        text = f"{denied_by}: {message}"
    elif reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    code = status.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    details = status.get("details") if isinstance(status.get("details"), dict) else {}
    return ApiError(code, str(reason), text, details or {})


def _internal(invocation: Invocation, reason: str) -> ApiError:
    message = (f'Internal error occurred: failed calling webhook "{invocation.hook.name}": '
               f"{reason}")
    return ApiError(500, "InternalError", message, {"causes": [{"message": message.split(
        ": ", 1)[1]}]})
