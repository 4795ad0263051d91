"""The operator process loads kubernetes_asyncio's transport without its generated client,
and that transport still talks to a real API server. Each case runs in a fresh interpreter:
this test process has imported the whole package already."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from hack.localcluster.server import LocalCluster

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_operator_entry_point_skips_the_generated_client() -> None:
    result = _run("""
import contextlib, json, sys
from reconcilers.operator.cli import main
with contextlib.redirect_stdout(sys.stderr), contextlib.suppress(SystemExit):
    main(["--help"])
print(json.dumps({"modules": sorted(m for m in sys.modules if m.startswith("kubernetes_asyncio"))}))
""")
    modules = result["modules"]
    assert isinstance(modules, list)
    assert "kubernetes_asyncio.client.api_client" in modules
    assert "kubernetes_asyncio.config.kube_config" in modules
    assert not [m for m in modules if m.startswith(("kubernetes_asyncio.client.models.",
                                                    "kubernetes_asyncio.client.api."))]


async def test_the_lean_transport_lists_and_reports_errors(cluster: LocalCluster,
                                                           kubeconfig: Path) -> None:
    # Off the event loop: the local cluster serves from this test's loop.
    result = await asyncio.to_thread(_run, f"""
import asyncio, json
from controller import lean_imports
assert lean_imports.install()
from controller.client import KubeClient
from controller.errors import ApiError
from controller.resource import Resource

async def main():
    kube = await KubeClient.connect({str(kubeconfig)!r})
    try:
        namespaces = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
        names = [n["metadata"]["name"] for n in (await kube.list(namespaces))["items"]]
        try:
            await kube.get(namespaces, None, "no-such-namespace")
            code = None
        except ApiError as err:
            code = err.code
        return {{"names": names, "code": code}}
    finally:
        await kube.close()

print(json.dumps(asyncio.run(main())))
""")
    assert "default" in result["names"]  # type: ignore[operator]
    assert result["code"] == 404


def test_install_does_nothing_once_the_package_is_imported() -> None:
    from controller import lean_imports

    assert "kubernetes_asyncio" in sys.modules
    assert lean_imports.install() is False
