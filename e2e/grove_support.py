"""What the Grove and GPU memory service e2e tests share: an operator that takes the Grove
path, and the render tests' GMS fixtures applied in the test's namespace."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml
from e2e_support import EXAMPLES, Env, OperatorProcess

GMS_FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "backends" / "fixtures" / "gms"
GROVE_CRDS = EXAMPLES.parents[1] / "hack" / "crds" / "grove.yaml"


async def on_grove(env: Env, operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    """Grove's CRDs served, then an operator started (it takes the Grove path)."""
    await env.kubectl.run("apply", "-f", str(GROVE_CRDS))
    await env.kubectl.run("wait", "--for=condition=Established", "--timeout=30s",
                          "crd/podcliquesets.grove.io")
    await operators("op")


def gms_fixture(name: str) -> dict[str, Any]:
    """A render test's GMS fixture, without its namespace (the test's is used)."""
    obj: dict[str, Any] = yaml.safe_load((GMS_FIXTURES / name).read_text())
    obj["metadata"].pop("namespace", None)
    return obj


async def apply(env: Env, obj: dict[str, Any]) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(obj))
