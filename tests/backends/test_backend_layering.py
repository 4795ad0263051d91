"""The backends room imports only the api room and the standard library (DESIGN.md): it is
pure, with no I/O and no asyncio."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

BACKENDS = Path(__file__).resolve().parents[2] / "backends"
ALLOWED = {"api", "backends"} | set(sys.stdlib_module_names)
FORBIDDEN = {"asyncio", "socket", "subprocess", "urllib", "http", "threading"}


def test_backends_import_only_api_and_the_standard_library() -> None:
    found = set()
    for path in BACKENDS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {(path.name, a.name.split(".")[0]) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add((path.name, node.module.split(".")[0]))
    assert {(f, m) for f, m in found if m not in ALLOWED or m in FORBIDDEN} == set()
