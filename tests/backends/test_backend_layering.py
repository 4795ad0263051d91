"""The backends room imports only the api room and the standard library (ARCHITECTURE.md): it is
pure, with no I/O and no asyncio."""

from __future__ import annotations

import sys
from pathlib import Path

from hack.layering import imports_of, top_level

BACKENDS = Path(__file__).resolve().parents[2] / "backends"
ALLOWED = {"api", "backends"} | set(sys.stdlib_module_names)
FORBIDDEN = {"asyncio", "socket", "subprocess", "urllib", "http", "threading"}


def test_backends_import_only_api_and_the_standard_library() -> None:
    found = top_level(imports_of(BACKENDS))
    assert {(f, m) for f, m in found if m not in ALLOWED or m in FORBIDDEN} == set()
