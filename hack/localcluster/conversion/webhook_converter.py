"""Calling a CRD's conversion webhook, as kube-apiserver's webhookConverter does.

One `ConversionReview` (apiextensions.k8s.io/v1, or v1beta1 when the CRD lists only that in
`conversionReviewVersions`) per object: kube-apiserver converts each object as its storage
decodes it, so a list of objects stored in another version makes one call per object, one
after the other (a LIST read from etcd decodes its items in a loop), and stops at the first
object that fails. The
call goes where `clientConfig` says (`admission.WebhookClient.exchange`: URL or Service,
`caBundle`) with a 30 s timeout (`?timeout=30s`).

Failures read as kube-apiserver's, a 500 without a reason (kubectl: `Error from server: ...`):
`conversion webhook for <group/version, Kind=kind of the object sent> failed: <why>`, where why
is client-go's (`Post "https://127.0.0.1:9443/convert?timeout=30s": dial tcp 127.0.0.1:9443:
connect: connection refused`), the webhook's `result.message`, or a malformed answer
(`expected response.uid=...`); an answer of the wrong version, kind, name, namespace or uid is
`conversion webhook for ... returned invalid object...`.

`ConversionWebhooks.run` serves one request with the answers of `answers.RequestConversions`,
replaying it after each `ConversionPending`; `watch_converter` converts the events of a watch.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..admission.webhook_client import CallError, WebhookClient
from ..errors import ApiError
from ..registry import ResourceType
from ..storage import Storage
from .answers import (
    ConversionPending,
    RequestConversions,
    current,
    gvk_text,
    restore_meta,
    webhook_of,
)

Json = dict[str, Any]
T = TypeVar("T")

__all__ = ["ConversionWebhooks"]

#: Seconds a conversion webhook may take (the webhook client's timeout in kube-apiserver).
TIMEOUT = 30
#: Replays of one request before giving up (objects that keep changing under it).
MAX_ROUNDS = 16


class ConversionWebhooks:
    """The conversion webhook caller of one API server."""

    def __init__(self, storage: Storage, client: WebhookClient) -> None:
        self.storage = storage
        self.client = client
        #: When a list, each review's round trip in seconds is appended (a benchmark's).
        self.review_seconds: list[float] | None = None

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """Serve one request: `call` again after each conversion it was missing."""
        requests = RequestConversions()
        token = current.set(requests)
        try:
            for _ in range(MAX_ROUNDS):
                try:
                    return await call()
                except ConversionPending as pending:
                    await self._resolve(requests, pending)
        finally:
            current.reset(token)
        raise ApiError(409, "Conflict", "the object has been modified; please apply your changes"
                       " to the latest version and try again")

    async def run_sync(self, call: Callable[[], T]) -> T:
        async def once() -> T:
            return call()
        return await self.run(once)

    async def _resolve(self, requests: RequestConversions, pending: ConversionPending) -> None:
        # One review at a time, in the objects' order, the first failure ending the request:
        # kube-apiserver converts each item as its storage decodes it, in a loop (a LIST read
        # from etcd: etcd3 store List -> appendListItem -> codec.Decode -> the webhook).
        for obj in pending.objects:
            requests.record(obj, pending.desired,
                            await self.convert(pending.webhook, obj, pending.desired))

    async def to_version(self, rt: ResourceType, obj: Json) -> Json:
        """`obj` at `rt`'s version through its CRD's webhook; `obj` itself when it is there
        already or the CRD has none (admission webhooks of another version use this)."""
        webhook = webhook_of(self.storage, rt)
        if webhook is None or obj.get("apiVersion") == rt.api_version:
            return obj
        return restore_meta(obj, await self.convert(webhook, obj, rt.api_version))

    def watch_converter(self, rt: ResourceType) -> Callable[[Json], Awaitable[Json]] | None:
        """How a watch of `rt` converts objects stored in another version (None: it only
        rewrites apiVersion, the None strategy)."""
        webhook = webhook_of(self.storage, rt)
        if webhook is None:
            return None
        target = rt.api_version

        async def convert(obj: Json) -> Json:
            current_hook = webhook_of(self.storage, rt) or webhook
            return restore_meta(obj, await self.convert(current_hook, obj, target))
        return convert

    async def convert(self, webhook: Json, obj: Json, desired: str) -> Json:
        """The webhook's converted object (metadata as the webhook left it); ApiError (500)
        with kube-apiserver's message when the call or the answer fails."""
        api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        what = gvk_text(api_version, kind)
        review_version = _review_version(webhook.get("conversionReviewVersions") or [])
        if review_version is None:
            raise _error("no supported conversion review versions")
        uid = str(uuid.uuid4())
        review = {"apiVersion": review_version, "kind": "ConversionReview",
                  "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [obj]}}
        meta = obj.get("metadata") or {}
        started = time.perf_counter()
        try:
            status, body = await self.client.exchange(webhook.get("clientConfig") or {},
                                                      review, TIMEOUT)
            converted = _converted_objects(status, body, uid, review_version)
        except CallError as err:
            raise _error(f"conversion webhook for {what} failed: {err}") from None
        finally:
            if self.review_seconds is not None:
                self.review_seconds.append(time.perf_counter() - started)
        if len(converted) != 1:
            raise _error(f"conversion webhook for {what} returned {len(converted)} objects, "
                         "expected 1")
        out = converted[0]
        if not isinstance(out, dict):
            raise _error(f"conversion webhook for {what} failed, unexpected type at index 0")
        got_version = str(out.get("apiVersion") or "")
        if got_version != desired:
            raise _error(f"conversion webhook for {what} returned invalid object at index 0: "
                         f"invalid groupVersion (expected {desired}, received {got_version})")
        if out.get("kind") != kind:
            raise _error(f"conversion webhook for {what} returned invalid object at index 0: "
                         f"invalid kind (expected {kind}, received {out.get('kind', '')})")
        out_meta = out.get("metadata") or {}
        for field, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
            ours, theirs = meta.get(field) or "", out_meta.get(field) or ""
            if ours != theirs:  # validateConvertedObject
                raise _error(f"conversion webhook for {what} returned invalid object: must "
                             f"have the same {label}: {ours} != {theirs}")
        return out


def _review_version(versions: list[Any]) -> str | None:
    """The first of the CRD's ConversionReview versions this server speaks."""
    for version in versions:
        if version in ("v1", "v1beta1"):
            return f"apiextensions.k8s.io/{version}"
    return None


def _converted_objects(status: int, body: bytes, uid: str, review_version: str) -> list[Any]:
    """getConvertedObjectsFromResponse: the answer's objects, or CallError saying why not."""
    try:
        review = json.loads(body)
    except ValueError:
        review = None
    if status >= 300:
        raise CallError(_unexpected(status, review, body.decode(errors="replace").strip()))
    if not isinstance(review, dict):
        raise CallError("the server returned a body that is not JSON")
    if review_version.endswith("/v1"):
        got = gvk_text(str(review.get("apiVersion") or ""), str(review.get("kind") or ""))
        if got != "apiextensions.k8s.io/v1, Kind=ConversionReview":
            raise CallError("expected webhook response of apiextensions.k8s.io/v1, "
                            f"Kind=ConversionReview, got {got}")
    response = review.get("response")
    if not isinstance(response, dict):
        raise CallError("no response provided")
    if review_version.endswith("/v1") and response.get("uid") != uid:
        raise CallError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    result = response.get("result") or {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise CallError(str(result["message"]))
        raise CallError(f"response.result.status was '{result.get('status', '')}', not "
                        "'Success'")
    objects = response.get("convertedObjects") or []
    return objects if isinstance(objects, list) else []


def _unexpected(status: int, decoded: Any, text: str) -> str:
    """client-go's error for a non-2xx answer: a Status's message, else its generic one."""
    if isinstance(decoded, dict) and decoded.get("kind") == "Status" and decoded.get("message"):
        return str(decoded["message"])
    if status == 400:
        return "the server rejected our request for an unknown reason"
    if status == 404:
        return "the server could not find the requested resource"
    if status >= 500:
        return (f"an error on the server ({json.dumps(text or 'unknown')}) has prevented the "
                "request from succeeding")
    return f"the server responded with the status code {status} but did not return more " \
        "information"


def _error(message: str) -> ApiError:
    """A conversion failure as kube-apiserver answers it: 500, no reason."""
    return ApiError(500, "", message)
