"""`python -m hack.quickstart --exit`: cluster, CRDs, operator, vllm-agg Ready, clean stop."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from e2e_support import ROOT, example_worker_dcd


async def test_quickstart_exit(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hack.quickstart", "--exit", "--port", "0", "--dir",
        str(tmp_path / "qs"), cwd=ROOT, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 90)
    text = out.decode()
    assert proc.returncode == 0, text
    assert "admission and conversion webhooks: https://127.0.0.1:" in text, text
    assert "deploy/examples/v1beta1/vllm-agg.yaml" in text, text
    assert "dgd/vllm-agg Ready" in text, text
    # a pod of the worker's generation: <graph>-<component>-<worker hash>-...
    worker = example_worker_dcd("v1beta1/vllm-agg", "VllmDecodeWorker")
    assert f"pod/{worker}-" in text, text
    assert "export KUBECONFIG=" in text, text
