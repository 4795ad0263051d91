"""How the cluster subcommands (`diff`, `rollout`) reach a live cluster, as `kubectl` does.

`--kubeconfig` first, then `$KUBECONFIG`, then the in-cluster service account, then
`~/.kube/config` (`controller.client.load_configuration`, the operator's own order);
`--context` picks a context; the namespace is `-n`, else the context's, else the pod's own,
else `default`. `read_context` gives the reconcilers' view of one namespace (the operator's
cache, built as the operator builds it, read-only), for code that renders as a reconcile does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import yaml
from kubernetes_asyncio.config.config_exception import ConfigException

from backends.settings import OperatorSettings
from controller.cache import Cache
from controller.client import KubeClient
from controller.log_config import configure_logging
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.pod_problems import index_pods
from reconcilers.operator.process import client_config
from reconcilers.operator.registry import cache_label_selectors, cache_transforms

__all__ = ["CLUSTER_ERRORS", "ClusterError", "add_cluster_flags", "connect", "namespace_of",
           "read_context"]

_POD_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class ClusterError(Exception):
    """No cluster to talk to: a kubeconfig that cannot be read or used."""


#: What a subcommand reports as "cannot reach the cluster" (exit status 2), not a traceback.
CLUSTER_ERRORS: tuple[type[BaseException], ...] = (ClusterError, aiohttp.ClientError,
                                                   TimeoutError)


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    """`--kubeconfig`, `--context` and `-n/--namespace`, as kubectl spells them."""
    parser.add_argument("--kubeconfig", type=Path, default=None,
                        help="kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
    parser.add_argument("--context", default=None, help="kubeconfig context to use")
    parser.add_argument("-n", "--namespace", default=None,
                        help="namespace (default: the context's, else default)")


async def connect(options: argparse.Namespace) -> KubeClient:
    """A client of the cluster the flags name, found as the operator finds its own. Logs
    (the API server's warnings) go to stderr, warnings and worse only: stdout is the
    command's."""
    configure_logging("warning", "console")
    config = client_config(qps=None)
    config.user_agent = config.field_manager = "dynamo-operator-cli"
    try:
        return await KubeClient.connect(options.kubeconfig, config, context=options.context)
    except (ConfigException, OSError) as error:
        raise ClusterError(f"no usable kubeconfig: {error}") from None


def namespace_of(options: argparse.Namespace) -> str:
    """`-n`, else the kubeconfig context's namespace, else the pod's own, else `default`."""
    if options.namespace:
        return str(options.namespace)
    path = options.kubeconfig
    if path is None and os.environ.get("KUBECONFIG"):
        path = Path(os.environ["KUBECONFIG"].split(os.pathsep)[0])
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        with contextlib.suppress(OSError):
            return _POD_NAMESPACE.read_text(encoding="utf-8").strip() or "default"
        return "default"
    path = path or Path.home() / ".kube" / "config"
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return "default"
    wanted = options.context or config.get("current-context")
    for entry in config.get("contexts") or []:
        if isinstance(entry, dict) and entry.get("name") == wanted:
            return str((entry.get("context") or {}).get("namespace") or "default")
    return "default"


@contextlib.asynccontextmanager
async def read_context(client: KubeClient, namespace: str,
                       settings: OperatorSettings) -> AsyncIterator[OperatorContext]:
    """The reconcilers' context over one namespace: the operator's cache (same transforms,
    selectors and pod index), running while the block runs. Nothing here writes."""
    cache = Cache(client, namespace=namespace, by_object=cache_transforms(),
                  label_selectors=cache_label_selectors())
    index_pods(cache)
    task = asyncio.create_task(cache.run(), name="cli cache")
    try:
        yield OperatorContext(client, cache, settings, namespace=namespace)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
