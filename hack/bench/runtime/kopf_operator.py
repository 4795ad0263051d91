"""The same benchmark operator written the usual kopf way: an on-create handler that creates
the ConfigMap through kubernetes_asyncio, kopf's defaults otherwise (standalone, one
namespace).

Run as `python -m hack.bench.runtime.kopf_operator KUBECONFIG NAMESPACE`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config

from .common import GROUP, PLURAL, VERSION, child_config_map

# kopf is an optional dependency (the `bench` extra); imported by name so the type checker
# does not need it installed.
kopf: Any = importlib.import_module("kopf")


async def main(kubeconfig: Path, namespace: str) -> None:
    os.environ["KUBECONFIG"] = str(kubeconfig)
    logging.basicConfig(level=logging.WARNING)
    configuration = k8s.Configuration()
    await k8s_config.load_kube_config(config_file=str(kubeconfig),
                                      client_configuration=configuration)
    api = k8s.ApiClient(configuration=configuration)
    api.user_agent = "kopf-bench-handler"
    core = k8s.CoreV1Api(api)
    registry = kopf.OperatorRegistry()

    @kopf.on.create(GROUP, VERSION, PLURAL, registry=registry)  # type: ignore[untyped-decorator]
    async def create_child(body: Any, **_: Any) -> None:
        owner = {"metadata": dict(body["metadata"]), "spec": dict(body.get("spec") or {})}
        child: Any = child_config_map(owner)  # the generated client takes plain dicts too
        try:
            await core.create_namespaced_config_map(namespace, child)
        except k8s.ApiException as err:
            if err.status != 409:
                raise

    @kopf.on.login(registry=registry)  # type: ignore[untyped-decorator]
    async def login(**kwargs: Any) -> Any:
        return kopf.login_with_kubeconfig(**kwargs)

    try:
        await kopf.operator(registry=registry, standalone=True, namespaces=[namespace],
                            clusterwide=False)
    finally:
        await api.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
