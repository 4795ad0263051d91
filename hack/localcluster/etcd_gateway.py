"""A fake etcd v3 JSON gRPC gateway: in-memory keys over HTTP, for the etcd discovery tests.

It answers the three KV calls the operator and its tests use, with etcd's JSON shapes
(https://etcd.io/docs/current/dev-guide/api_grpc_gateway/): keys and values base64-encoded,
int64 fields as strings, zero values left out.

- `POST /v3/kv/put` `{"key", "value", "prev_kv"?}`: `{"header", "prev_kv"?}`;
- `POST /v3/kv/range` `{"key", "range_end"?, "count_only"?, "keys_only"?}`:
  `{"header", "kvs", "count"}`;
- `POST /v3/kv/deleterange` `{"key", "range_end"?, "prev_kv"?}`: `{"header", "deleted",
  "prev_kvs"?}`.

A range is etcd's: no `range_end` means the key alone; `range_end` `"\\0"` means every key
from `key` on (every key when `key` is `"\\0"` too); otherwise `[key, range_end)` in byte
order. A malformed body gets 400 with `{"error", "code": 3, "message"}`, as gRPC's
InvalidArgument through the gateway. `stop()` then `start()` simulates an outage: the same
port, the same keys; requests meanwhile are refused. `requests` counts the calls by path.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from aiohttp import web

Json = dict[str, Any]

CLUSTER_ID = "14841639068965178418"
MEMBER_ID = "10276657743932975437"


@dataclass
class _Entry:
    value: bytes
    create_revision: int
    mod_revision: int
    version: int


class _BadRequest(Exception):
    pass


def _decode(body: Json, field: str, required: bool = False) -> bytes | None:
    raw = body.get(field)
    if raw is None or raw == "":
        if required:
            raise _BadRequest("etcdserver: key is not provided")
        return None
    if not isinstance(raw, str):
        raise _BadRequest(f"bad {field}: not a base64 string")
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise _BadRequest(f"bad {field}: invalid base64") from None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class EtcdGateway:
    """The fake gateway; `async with EtcdGateway() as etcd:` serves on a free local port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self.revision = 1
        self.requests: Counter[str] = Counter()
        self._keys: dict[bytes, _Entry] = {}
        self._runner: web.AppRunner | None = None

    # -- serving ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        """host:port, as `--etcd-address` is usually given (no scheme)."""
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self) -> None:
        """Serve (again, on the same port after a stop)."""
        if self._runner is not None:
            return
        app = web.Application()
        app.router.add_post("/v3/kv/put", self._put)
        app.router.add_post("/v3/kv/range", self._range)
        app.router.add_post("/v3/kv/deleterange", self._delete_range)
        runner = web.AppRunner(app, access_log=None, handle_signals=False,
                               shutdown_timeout=0.2)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None)
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        self._runner = runner

    async def stop(self) -> None:
        """Stop serving (connections are refused); the keys are kept."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def __aenter__(self) -> EtcdGateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- direct access for tests --------------------------------------------------------

    def put(self, key: str, value: str = "") -> None:
        self._put_bytes(key.encode(), value.encode())

    def keys(self, prefix: str = "") -> list[str]:
        """The keys beginning with `prefix`, in byte order."""
        raw = prefix.encode()
        return [k.decode() for k in sorted(self._keys) if k.startswith(raw)]

    # -- the store ----------------------------------------------------------------------

    def _put_bytes(self, key: bytes, value: bytes) -> _Entry | None:
        self.revision += 1
        old = self._keys.get(key)
        if old is None:
            self._keys[key] = _Entry(value, self.revision, self.revision, 1)
        else:
            self._keys[key] = _Entry(value, old.create_revision, self.revision, old.version + 1)
        return old

    def _select(self, key: bytes, range_end: bytes | None) -> list[bytes]:
        if range_end is None:
            return [key] if key in self._keys else []
        if range_end == b"\0":
            everything = key == b"\0"
            return sorted(k for k in self._keys if everything or k >= key)
        return sorted(k for k in self._keys if key <= k < range_end)

    def _header(self) -> Json:
        return {"cluster_id": CLUSTER_ID, "member_id": MEMBER_ID,
                "revision": str(self.revision), "raft_term": "2"}

    @staticmethod
    def _kv(key: bytes, entry: _Entry, keys_only: bool = False) -> Json:
        kv: Json = {"key": _b64(key), "create_revision": str(entry.create_revision),
                    "mod_revision": str(entry.mod_revision), "version": str(entry.version)}
        if entry.value and not keys_only:
            kv["value"] = _b64(entry.value)
        return kv

    # -- handlers -----------------------------------------------------------------------

    async def _body(self, request: web.Request) -> Json:
        self.requests[request.path] += 1
        try:
            body = json.loads(await request.read() or b"{}")
        except ValueError as err:
            raise _BadRequest(f"invalid JSON: {err}") from None
        if not isinstance(body, dict):
            raise _BadRequest("the body is not a JSON object")
        return body

    @staticmethod
    def _error(err: _BadRequest) -> web.Response:
        return web.json_response({"error": str(err), "code": 3, "message": str(err)},
                                 status=400)

    async def _put(self, request: web.Request) -> web.Response:
        try:
            body = await self._body(request)
            key = _decode(body, "key", required=True)
            value = _decode(body, "value") or b""
        except _BadRequest as err:
            return self._error(err)
        assert key is not None
        old = self._put_bytes(key, value)
        answer: Json = {"header": self._header()}
        if body.get("prev_kv") and old is not None:
            answer["prev_kv"] = self._kv(key, old)
        return web.json_response(answer)

    async def _selection(self, request: web.Request) -> tuple[Json, list[bytes]]:
        """A range request's body and the keys it selects (`key`, optional `range_end`)."""
        body = await self._body(request)
        key = _decode(body, "key", required=True)
        assert key is not None
        return body, self._select(key, _decode(body, "range_end"))

    async def _range(self, request: web.Request) -> web.Response:
        try:
            body, found = await self._selection(request)
        except _BadRequest as err:
            return self._error(err)
        answer: Json = {"header": self._header()}
        if found and not body.get("count_only"):
            keys_only = bool(body.get("keys_only"))
            answer["kvs"] = [self._kv(k, self._keys[k], keys_only) for k in found]
        if found:
            answer["count"] = str(len(found))
        return web.json_response(answer)

    async def _delete_range(self, request: web.Request) -> web.Response:
        try:
            body, found = await self._selection(request)
        except _BadRequest as err:
            return self._error(err)
        gone = [(k, self._keys.pop(k)) for k in found]
        if gone:
            self.revision += 1
        answer: Json = {"header": self._header()}
        if gone:
            answer["deleted"] = str(len(gone))
            if body.get("prev_kv"):
                answer["prev_kvs"] = [self._kv(k, e) for k, e in gone]
        return web.json_response(answer)
