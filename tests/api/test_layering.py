"""The api room imports only the standard library, attrs and cattrs (ARCHITECTURE.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from hack.layering import imports_of, top_level

API = Path(__file__).resolve().parents[2] / "api"
ALLOWED = {"api", "attrs", "cattrs"} | set(sys.stdlib_module_names)


def test_api_imports_only_attrs_cattrs_and_the_standard_library() -> None:
    found = top_level(imports_of(API))
    assert {(f, m) for f, m in found if m not in ALLOWED} == set()
