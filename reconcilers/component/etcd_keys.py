"""The DCD finalizer's cleanup with etcd discovery: deleting the component's etcd keys.

With the etcd discovery backend a component's workers register under
`/<spec.dynamoNamespace>/components/<spec.serviceName>`; when the DCD is deleted those keys
are removed before its finalizer is released (spec §1.1, podgen §3). Nothing is to be done
with Kubernetes discovery (owner references clean up), or when either name is empty.

"Under the prefix" is read as a path: the key `<prefix>` itself and every key beginning with
`<prefix>/`. The original hands this prefix, without a trailing slash, to its etcd
storage's `DeleteKeys`; a plain etcd prefix delete of it would also remove a sibling
component's keys (`…/Frontend2/…` when deleting `Frontend`), which the path reading keeps.

etcd is reached through its v3 JSON gRPC gateway (`POST <endpoint>/v3/kv/deleterange`, keys
base64-encoded; a prefix is the range `[key, range_end)` with range_end the key with its last
byte incremented) on the process's one `controller.http.HttpClient`, each request bounded by
`seconds`. `--etcd-address` may list several endpoints separated by commas, with or without
a scheme (`host:2379` means `http://host:2379`); they are tried in order until one answers.

When none does, `EtcdUnavailable` is raised after a Warning event on the DCD naming each
endpoint and its error: the finalizer stays, and the controller loop retries with backoff,
logging the error once at warning level without a traceback (the class is a
`ConnectionError`, which `controller.errors.is_transient` counts as transient). With no
`--etcd-address` at all there is nowhere to delete from: a Warning event, and the DCD goes
(blocking it forever would need a person to remove the finalizer).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import structlog

from backends import constants
from backends.context import discovery_backend_of
from backends.settings import OperatorSettings
from controller.events import EventRecorder
from controller.http import HttpClient, HttpError
from reconcilers.machinery.spec_views import inputs_of

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.component.etcd_keys")

DELETE_RANGE_PATH = "/v3/kv/deleterange"
#: Seconds each request to an endpoint may take (the original's etcd dial timeout).
REQUEST_TIMEOUT = 5.0
#: Event reasons on the DCD.
CLEANUP_FAILED = "EtcdCleanupFailed"
CLEANUP_SKIPPED = "EtcdCleanupSkipped"


class EtcdUnavailable(ConnectionError):
    """No etcd endpoint deleted the keys; the message names every endpoint tried and why."""


def keys_prefix(obj: Json, settings: OperatorSettings) -> str | None:
    """The key prefix a DCD's deletion must clean, from the DCD as stored (or a test bed's
    `v1alpha1` DCD): None with Kubernetes discovery or an empty name. The names are
    `v1alpha1`'s dynamoNamespace and serviceName as given, and the backend is the DCD's own
    `nvidia.com/dynamo-discovery-backend` annotation when present, else the operator's
    (`backends.context.discovery_backend_of`): all render inputs. A terminating DCD need not
    be valid any more: one whose saved fields do not read has no keys to clean."""
    try:
        inputs = next(iter(inputs_of(obj).components.values()), None)
    except ValueError:
        return None
    if inputs is None:
        return None
    backend = discovery_backend_of(inputs.annotations, settings)
    namespace, service = inputs.dynamo_namespace or "", inputs.service_name or ""
    if backend != constants.DISCOVERY_ETCD or not namespace or not service:
        return None
    return f"/{namespace}/components/{service}"


def endpoints(address: str) -> list[str]:
    """The gateway base URLs of a comma-separated `--etcd-address` (`http://` when no scheme
    is given; empty entries dropped, duplicates once, order kept)."""
    urls = []
    for part in address.split(","):
        part = part.strip().rstrip("/")
        if part:
            urls.append(part if "://" in part else f"http://{part}")
    return list(dict.fromkeys(urls))


def prefix_end(prefix: bytes) -> bytes:
    """etcd's range_end for "every key starting with prefix": the prefix with its last byte
    below 0xff incremented and what follows dropped; b"\\0" (every key) when all are 0xff."""
    for i in range(len(prefix) - 1, -1, -1):
        if prefix[i] < 0xFF:
            return prefix[:i] + bytes([prefix[i] + 1])
    return b"\0"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def delete_requests(prefix: str) -> list[Json]:
    """The DeleteRange bodies removing `prefix` as a path: the keys under `prefix/`, then
    the key `prefix` itself."""
    under = (prefix + "/").encode()
    return [{"key": _b64(under), "range_end": _b64(prefix_end(under))},
            {"key": _b64(prefix.encode())}]


async def _delete_at(http: HttpClient, endpoint: str, bodies: list[Json],
                     seconds: float) -> int:
    """Run the deletes at one endpoint; the number of keys deleted. Raises HttpError."""
    deleted = 0
    for body in bodies:
        url = endpoint + DELETE_RANGE_PATH
        answer = await http.post_json(url, body, seconds=seconds)
        try:
            parsed = json.loads(answer.body) if answer.body else {}
        except ValueError:
            parsed = None
        if not answer.ok or not isinstance(parsed, dict):
            # The gateway's errors: {"error": ..., "code": <grpc code>, "message": ...}.
            detail = answer.body[:200]
            if isinstance(parsed, dict):
                detail = str(parsed.get("message") or parsed.get("error") or detail)
            raise HttpError(f"POST {url}: {answer.status} {detail}")
        # int64 fields are JSON strings in the gateway's answers; a zero is left out.
        deleted += int(parsed.get("deleted") or 0)
    return deleted


async def delete_keys(http: HttpClient, address: str, prefix: str, *,
                      seconds: float = REQUEST_TIMEOUT) -> int:
    """Delete the keys under `prefix` at the first endpoint of `address` that answers; the
    number deleted. Raises EtcdUnavailable naming each endpoint's error when none does."""
    bodies = delete_requests(prefix)
    errors = []
    for endpoint in endpoints(address):
        try:
            deleted = await _delete_at(http, endpoint, bodies, seconds)
        except HttpError as err:
            errors.append(str(err))  # names the endpoint's URL
            continue
        log.info("etcd keys deleted", prefix=prefix, deleted=deleted, endpoint=endpoint)
        return deleted
    raise EtcdUnavailable(f"cannot delete the etcd keys under {prefix}: " + "; ".join(errors))


async def clean_up(http: HttpClient, settings: OperatorSettings, recorder: EventRecorder,
                   obj: Json) -> None:
    """The cleanup of a terminating DCD that carries our finalizer: its etcd keys deleted,
    or EtcdUnavailable raised after a Warning event (the finalizer must stay). Without an
    etcd address there is nowhere to delete from: a Warning event, and the DCD may go."""
    prefix = keys_prefix(obj, settings)
    if prefix is None:
        return
    if not endpoints(settings.etcd_address):
        await recorder.warning(obj, CLEANUP_SKIPPED,
                               f"etcd keys under {prefix} not deleted: no etcd address "
                               "configured (--etcd-address)")
        return
    try:
        await delete_keys(http, settings.etcd_address, prefix)
    except EtcdUnavailable as err:
        await recorder.warning(obj, CLEANUP_FAILED, str(err))
        raise
