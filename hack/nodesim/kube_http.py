"""A blocking HTTP client of an API server, from a kubeconfig: JSON in, JSON out.

For code that must write synchronously (the in-process simulation's controllers reconcile in
plain functions), from a thread of its own. One keep-alive connection, opened again when the
server closes it. The kubeconfig's current context: the server, its CA, and a client
certificate or a bearer token.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import yaml

Json = dict[str, Any]


def _context(cluster: Json, user: Json) -> ssl.SSLContext:
    ca = cluster.get("certificate-authority-data")
    if ca:
        context = ssl.create_default_context(cadata=base64.b64decode(ca).decode())
    elif cluster.get("certificate-authority"):
        context = ssl.create_default_context(cafile=cluster["certificate-authority"])
    else:
        context = ssl.create_default_context()
    cert, key = user.get("client-certificate-data"), user.get("client-key-data")
    if cert and key:
        # load_cert_chain reads files only: a private directory, removed once loaded.
        with tempfile.TemporaryDirectory(prefix="kube-http-") as tmp:
            cert_path, key_path = Path(tmp) / "client.crt", Path(tmp) / "client.key"
            cert_path.write_bytes(base64.b64decode(cert))
            key_path.write_bytes(base64.b64decode(key))
            context.load_cert_chain(cert_path, key_path)
    elif user.get("client-certificate") and user.get("client-key"):
        context.load_cert_chain(user["client-certificate"], user["client-key"])
    return context


class KubeHttp:
    """Blocking requests to the API server of a kubeconfig's current context."""

    def __init__(self, kubeconfig: Path, user_agent: str, timeout: float = 15.0) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        current = config.get("current-context")
        context = next(c["context"] for c in config["contexts"]
                       if c["name"] == current or current is None)
        cluster = next(c["cluster"] for c in config["clusters"]
                       if c["name"] == context["cluster"])
        user: Json = next((u["user"] for u in config.get("users") or ()
                     if u["name"] == context.get("user")), {})
        url = urlsplit(cluster["server"])
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443
        self.ssl = _context(cluster, user)
        self.headers = {"User-Agent": user_agent, "Accept": "application/json"}
        if user.get("token"):
            self.headers["Authorization"] = f"Bearer {user['token']}"
        self.timeout = timeout
        self._connection: http.client.HTTPSConnection | None = None

    def request(self, method: str, path: str, body: Json | None = None,
                query: dict[str, str] | None = None,
                content_type: str = "application/json") -> tuple[int, Json]:
        """The status code and the decoded JSON body ({} when there is none)."""
        if query:
            path = f"{path}?{urlencode(query)}"
        data = json.dumps(body).encode() if body is not None else None
        headers = {**self.headers, **({"Content-Type": content_type} if data else {})}
        for attempt in (1, 2):
            connection = self._connection or http.client.HTTPSConnection(
                self.host, self.port, context=self.ssl, timeout=self.timeout)
            self._connection = connection
            try:
                connection.request(method, path, body=data, headers=headers)
                response = connection.getresponse()
                raw = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # the server closed the idle connection: once more on a new one
                self.close()
                if attempt == 2:
                    raise
                continue
            try:
                decoded = json.loads(raw) if raw else {}
            except ValueError:
                decoded = {"message": raw.decode(errors="replace")}
            return response.status, decoded if isinstance(decoded, dict) else {}
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
