"""What the modules of a folder import, for the tests that keep the rooms apart."""

from __future__ import annotations

import ast
from pathlib import Path


def imports_of(folder: Path) -> set[tuple[str, str]]:
    """(file relative to `folder`, absolute module imported) for every import below it;
    relative imports stay inside their package, so they are left out."""
    found = set()
    for path in folder.rglob("*.py"):
        name = str(path.relative_to(folder))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {(name, alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add((name, node.module))
    return found


def top_level(imports: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The same imports, by top-level package only."""
    return {(name, module.split(".")[0]) for name, module in imports}
