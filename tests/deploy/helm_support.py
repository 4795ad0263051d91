"""Running the real helm binary (installed by `make venv`) in tests, against the local cluster."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hack.gen_manifests import helm_binary

ROOT = Path(__file__).resolve().parents[2]
HELM_DIR = ROOT / "deploy" / "helm"
CRD_CHART = HELM_DIR / "dynamo-crds"
OPERATOR_CHART = HELM_DIR / "dynamo-operator"

Json = dict[str, Any]


@dataclass
class Helm:
    """helm with its own config, cache and data folders and one kubeconfig."""

    home: Path
    kubeconfig: Path | None = None
    timeout: float = 120.0

    async def run(self, *args: str) -> tuple[int, str, str]:
        env = {**os.environ, "HOME": str(self.home),
               "HELM_CACHE_HOME": str(self.home / "cache"),
               "HELM_CONFIG_HOME": str(self.home / "config"),
               "HELM_DATA_HOME": str(self.home / "data")}
        if self.kubeconfig is not None:
            env["KUBECONFIG"] = str(self.kubeconfig)
        proc = await asyncio.create_subprocess_exec(
            helm_binary(), *args, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        try:
            async with asyncio.timeout(self.timeout):
                out, err = await proc.communicate()
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        return proc.returncode or 0, out.decode(), err.decode()

    async def __call__(self, *args: str) -> str:
        code, out, err = await self.run(*args)
        if code != 0:
            raise AssertionError(f"helm {' '.join(args)} failed ({code}):\n{err}\n{out}")
        return out


def objects(text: str) -> list[Json]:
    """The objects of a multi-document YAML stream."""
    return [doc for doc in yaml.safe_load_all(text) if doc]


def by_key(docs: list[Json]) -> dict[tuple[str, str, str], Json]:
    return {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d
            for d in docs}


def rules_of(docs: list[Json]) -> Iterator[tuple[str, Json]]:
    """(role name, rule) of every Role and ClusterRole."""
    for doc in docs:
        if doc["kind"] in ("Role", "ClusterRole"):
            for rule in doc.get("rules") or []:
                yield doc["metadata"]["name"], rule
