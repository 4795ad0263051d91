"""What the webhook tests share: a small v1alpha1 graph, one the webhook refuses, and waiting
until the operator's webhooks serve (admission and conversion)."""

from __future__ import annotations

import json
from typing import Any

from e2e_support import Env, eventually

#: With a short graph name, more than the 45 characters Grove object names leave: only the
#: webhook catches it (the CRD schema cannot).
LONG_SERVICE = "AServiceNameThatIsFarTooLongForGroveObjectNames"


def graph(name: str = "web", service_name: str = "Frontend", **service: Any) -> str:
    return json.dumps({
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "vllm", "services": {service_name: {
            "componentType": "frontend", "replicas": 1,
            "extraPodSpec": {"mainContainer": {
                "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0"}},
            **service}}}})


def bad_graph(name: str) -> str:
    return graph(name, LONG_SERVICE)


async def serving(env: Env) -> None:
    """Wait until the operator's configuration is in place and its webhooks answer, each
    with a server-side dry run, so nothing is created meanwhile: the validating webhook
    refusing a bad graph, then a good `v1alpha1` graph converted to the stored `v1beta1`
    (the CRDs' conversion caBundle is written apart from the webhook configuration's)."""

    async def answered() -> bool:
        code, err = await env.k_result("apply", "--dry-run=server", "-f", "-",
                                       stdin=bad_graph("probe"))
        return code != 0 and "admission webhook" in err

    async def converted() -> bool:
        code, _ = await env.k_result("apply", "--dry-run=server", "-f", "-",
                                     stdin=graph("probe"))
        return code == 0

    await eventually(answered, what="the webhook answering")
    await eventually(converted, within=30, what="the conversion webhook answering")
