"""The api room imports only the standard library, attrs and cattrs (DESIGN.md)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

API = Path(__file__).resolve().parents[2] / "api"
ALLOWED = {"api", "attrs", "cattrs"} | set(sys.stdlib_module_names)


def test_api_imports_only_attrs_cattrs_and_the_standard_library() -> None:
    found = set()
    for path in API.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {(path.name, a.name.split(".")[0]) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add((path.name, node.module.split(".")[0]))
    assert {(f, m) for f, m in found if m not in ALLOWED} == set()
