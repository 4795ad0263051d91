"""The conversion benchmark's second floor: a webhook that converts nothing.

`python -m hack.bench.conversion.floor_webhook CERT_DIR PORT [METRICS_PORT]` serves `/convert`
with the same server and handler as the operator (`controller.webhook.WebhookServer`,
`controller.conversion_webhook.ConversionWebhook`, the certificate in CERT_DIR) in a process of
its own, but its converter only rewrites each object's apiVersion. A LIST through it costs what
the API server, the HTTPS round trips and the review handling cost, without `api.conversion`
and without the rest of the operator process: the difference to the LIST through the operator
is the operator's own share. With METRICS_PORT its conversion metrics are served there too
(plain HTTP on 127.0.0.1, prometheus_client's server in a thread), to count its reviews.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server

from controller.conversion_webhook import ConversionMetrics, ConversionWebhook
from controller.webhook import TLSConfig, WebhookMetrics, WebhookServer
from reconcilers.operator.conversion_setup import CONVERSION_PATH

Json = dict[str, Any]

__all__ = ["renamed", "serve"]


def renamed(obj: Json, desired: str) -> Json:
    """`obj` as `desired` by its apiVersion alone."""
    return {**obj, "apiVersion": desired}


async def serve(cert_dir: Path, port: int, metrics_port: int | None = None) -> None:
    tls = TLSConfig()
    tls.load((cert_dir / "tls.crt").read_bytes(), (cert_dir / "tls.key").read_bytes())
    registry = CollectorRegistry()
    webhook = ConversionWebhook(ConversionMetrics(registry))
    webhook.register("nvidia.com", renamed)
    server = WebhookServer(tls, WebhookMetrics(registry), host="127.0.0.1", port=port)
    server.route(CONVERSION_PATH, webhook.handle)
    if metrics_port is not None:
        start_http_server(metrics_port, addr="127.0.0.1", registry=registry)
    await server.run()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1]), int(sys.argv[2]),
                      int(sys.argv[3]) if len(sys.argv) > 3 else None))
