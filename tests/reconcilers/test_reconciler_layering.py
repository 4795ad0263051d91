"""The runtime knows nothing of Dynamo, and each reconciler package stands on the shared
machinery alone (ARCHITECTURE.md): a controller never reaches into another's package."""

from __future__ import annotations

import sys
from pathlib import Path

from hack.layering import imports_of, top_level

ROOT = Path(__file__).resolve().parents[2]
THIRD_PARTY = {"aiohttp", "cryptography", "kubernetes_asyncio", "prometheus_client", "structlog",
               "yaml"}
PRODUCT = {"api", "backends", "controller", "reconcilers"}
KINDS = ("graph", "component", "scaling_adapter", "request", "model", "topology_label")


def test_controller_imports_nothing_of_dynamo() -> None:
    allowed = {"controller"} | THIRD_PARTY | set(sys.stdlib_module_names)
    found = top_level(imports_of(ROOT / "controller"))
    assert {(f, m) for f, m in found if m not in allowed} == set()


def test_each_reconciler_package_imports_only_the_rooms_below_it() -> None:
    for kind in KINDS:
        own = f"reconcilers.{kind}"
        allowed_reconcilers = {own, "reconcilers.machinery"}
        wrong = set()
        for name, module in imports_of(ROOT / "reconcilers" / kind):
            top = module.split(".")[0]
            if top == "reconcilers":
                if not any(module == a or module.startswith(a + ".")
                           for a in allowed_reconcilers):
                    wrong.add((f"{kind}/{name}", module))
            elif top not in PRODUCT | THIRD_PARTY | set(sys.stdlib_module_names):
                wrong.add((f"{kind}/{name}", module))
        assert wrong == set(), kind


def test_the_machinery_serves_every_reconciler_and_knows_none() -> None:
    found = imports_of(ROOT / "reconcilers" / "machinery")
    assert {(f, m) for f, m in found if m.startswith("reconcilers.")
            and not m.startswith("reconcilers.machinery")} == set()


def test_the_product_never_imports_the_test_bed() -> None:
    for room in PRODUCT:
        found = top_level(imports_of(ROOT / room))
        assert {(f, m) for f, m in found if m in {"hack", "tests", "e2e"}} == set(), room
