"""The one source fix: newer reflect2 and json-iterator in Kubernetes 1.20's vendor/.

Vendored `github.com/modern-go/reflect2` v1.0.1 reads Go's runtime map internals as they were
before Go 1.18; built with a newer Go, kube-apiserver dies with `fatal error: fault` in
`runtime.mapiterinit` on the first custom-resource write. reflect2 v1.0.2 (and json-iterator
v1.1.12, which goes with it) fixed that. Both come from Debian's Go source packages, and
go.mod and vendor/modules.txt are kept consistent with the versions they now hold.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from .inputs import VENDOR_REPLACEMENTS

# module path -> (version vendored by Kubernetes 1.20, version Debian ships)
REPLACEMENTS = VENDOR_REPLACEMENTS

GOCODE = Path("usr/share/gocode/src")


def _is_source(path: Path) -> bool:
    """The files `go mod vendor` keeps of a package: its non-test sources and go.mod/go.sum."""
    if not path.is_file() or path.name.endswith("_test.go"):
        return False
    return path.suffix in (".go", ".s") or path.name in ("go.mod", "go.sum")


def replace_module(tree: Path, tools: Path, module: str) -> None:
    """Swap the vendored package's sources for Debian's (top-level package only, as vendored;
    LICENSE and build files of the vendored copy stay)."""
    vendored = tree / "vendor" / module
    debian = tools / GOCODE / module
    if not vendored.is_dir() or not debian.is_dir():
        raise RuntimeError(f"{module}: missing {vendored if not vendored.is_dir() else debian}")
    for old in vendored.iterdir():
        if _is_source(old):
            old.unlink()
    for new in debian.iterdir():
        if _is_source(new):
            shutil.copyfile(new, vendored / new.name)


def bump_versions(text: str) -> str:
    """go.mod or vendor/modules.txt with the replaced modules' versions updated."""
    for module, (old, new) in REPLACEMENTS.items():
        text, count = re.subn(rf"({re.escape(module)}) {re.escape(old)}(?=\s|$)",
                              rf"\1 {new}", text, flags=re.MULTILINE)
        if count == 0:
            raise RuntimeError(f"{module} {old} not found: the vendored versions changed")
    return text


def apply(tree: Path, tools: Path) -> None:
    """Replace the modules in `tree` (a Kubernetes source tree) from `tools` (unpacked debs)."""
    for module in REPLACEMENTS:
        replace_module(tree, tools, module)
    for name in ("go.mod", "vendor/modules.txt"):
        path = tree / name
        path.write_text(bump_versions(path.read_text()))
