"""One API server as the suite sees it: a base URL and a TLS context that presents the admin's
client certificate; requests go over plain aiohttp so that every byte of an answer is seen."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

Json = dict[str, Any]
REQUEST_TIMEOUT = 30.0


@dataclass
class Answer:
    """One HTTP answer: status, headers, the text, and the JSON (None when not JSON)."""

    code: int
    headers: dict[str, str]
    text: str
    json: Any = None
    #: For watches: the events read, in order.
    events: list[Json] = field(default_factory=list)


class Target:
    """HTTP to one server as its admin; `name` is "real" or "local"."""

    def __init__(self, name: str, url: str, context: ssl.SSLContext) -> None:
        self.name = name
        self.url = url
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=context, limit=16),
            timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT))

    @classmethod
    def from_kubeconfig(cls, name: str, kubeconfig: Path) -> Target:
        """The current context's server and inline credentials (CA, client certificate)."""
        config = yaml.safe_load(kubeconfig.read_text())
        context = next(c["context"] for c in config["contexts"]
                       if c["name"] == config["current-context"])
        cluster = next(c["cluster"] for c in config["clusters"]
                       if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
        tls = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = Path(tmp) / "admin.crt", Path(tmp) / "admin.key"
            cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
            key.write_bytes(base64.b64decode(user["client-key-data"]))
            tls.load_cert_chain(cert, key)
        return cls(name, cluster["server"], tls)

    async def close(self) -> None:
        await self._session.close()

    async def request(self, method: str, path: str, *, body: Any = None,
                      content_type: str | None = None, accept: str | None = None,
                      params: dict[str, str] | None = None,
                      headers: dict[str, str] | None = None) -> Answer:
        data: bytes | None = None
        sent = {"User-Agent": "differential-conformance/1.0", **(headers or {})}
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            sent["Content-Type"] = content_type or "application/json"
        if accept:
            sent["Accept"] = accept
        async with self._session.request(method, self.url + path, data=data, params=params,
                                         headers=sent) as resp:
            text = await resp.text()
            return Answer(resp.status, dict(resp.headers), text, _parsed(text))

    async def watch(self, path: str, params: dict[str, str], *,
                    until: Callable[[list[Json]], bool], within: float,
                    headers: dict[str, str] | None = None) -> Answer:
        """A watch's events until `until(events)` holds, the stream ends or `within` passes."""
        sent = {"User-Agent": "differential-conformance/1.0", **(headers or {})}
        events: list[Json] = []
        async with self._session.get(
                self.url + path, params={"watch": "true", **params}, headers=sent,
                timeout=aiohttp.ClientTimeout(total=within + 5)) as resp:
            if resp.status != 200:
                text = await resp.text()
                return Answer(resp.status, dict(resp.headers), text, _parsed(text))
            try:
                async with asyncio.timeout(within):
                    async for line in resp.content:
                        if line.strip():
                            events.append(json.loads(line))
                            if until(events):
                                break
            except TimeoutError:
                pass
            return Answer(resp.status, dict(resp.headers), "", None, events)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
