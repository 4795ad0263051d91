"""What the real control plane is built from, and where the built binaries are cached.

The inputs are Debian packages, pinned by exact version, the vendor replacements, the Go
settings and targets of the build, and a revision number for whatever else the recipe does.
Their digest names the cache directory, so a cache lookup needs no network and a change of any
input builds anew (a cosmetic edit of the build code does not):
`${XDG_CACHE_HOME:-~/.cache}/dynamo-operator/realcluster/<version>-<digest>/bin/`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

KUBERNETES_VERSION = "v1.20.2"

# The Debian source package with the complete upstream tree (vendor/ included).
SOURCE_PACKAGE = ("kubernetes", "1.20.5+really1.20.2-1.1+deb12u1")

# Binary packages, unpacked with dpkg-deb -x into a private directory (never installed).
TOOL_PACKAGES: tuple[tuple[str, str], ...] = (
    ("golang-1.19-go", "1.19.8-2"),
    ("golang-1.19-src", "1.19.8-2"),
    ("rsync", "3.5.0+ds1-0+deb12u1"),
    ("libpopt0", "1.19+dfsg-1"),
    # Go sources that replace the vendored copies crashing under Go >= 1.18 (see vendor_fix).
    ("golang-github-modern-go-reflect2-dev", "1.0.2-2"),
    ("golang-github-json-iterator-go-dev", "1.1.12-1"),
    ("etcd-server", "3.4.23-4+b4"),
)

GO_ROOT = "usr/lib/go-1.19"
ETCD_BINARY = "usr/bin/etcd"

# What `make WHAT=...` builds, and what the cache holds in bin/.
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
BINARIES = (*COMPONENTS, "etcd")

# Vendored modules replaced by Debian's sources (see vendor_fix): module -> (old, new).
VENDOR_REPLACEMENTS = {
    "github.com/modern-go/reflect2": ("v1.0.1", "v1.0.2"),
    "github.com/json-iterator/go": ("v1.1.10", "v1.1.12"),
}

# Go settings of the build: offline, from vendor/ only, static binaries (as Debian builds them).
GO_SETTINGS = {"GOPROXY": "off", "GOFLAGS": "-mod=vendor", "GOTOOLCHAIN": "local",
               "CGO_ENABLED": "0"}

# Bump when the recipe changes in a way that the values above do not show.
RECIPE_REVISION = 1


@dataclass(frozen=True)
class CachedBuild:
    """One cache entry: a directory with bin/ and manifest.json."""

    directory: Path

    @property
    def bin_dir(self) -> Path:
        return self.directory / "bin"

    @property
    def manifest(self) -> Path:
        return self.directory / "manifest.json"

    def binary(self, name: str) -> Path:
        return self.bin_dir / name

    def complete(self) -> bool:
        """True when every binary and the manifest are there (written last, atomically)."""
        return self.manifest.exists() and all(
            os.access(self.binary(name), os.X_OK) for name in BINARIES)


def cache_root() -> Path:
    """`${XDG_CACHE_HOME:-~/.cache}/dynamo-operator/realcluster`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dynamo-operator" / "realcluster"


def recipe() -> dict[str, object]:
    """Everything the built binaries depend on, as plain data."""
    return {"kubernetes": KUBERNETES_VERSION, "source": SOURCE_PACKAGE,
            "packages": TOOL_PACKAGES, "components": COMPONENTS,
            "vendor": VENDOR_REPLACEMENTS, "go": GO_SETTINGS, "revision": RECIPE_REVISION}


def inputs_digest() -> str:
    """A short SHA-256 of the recipe."""
    text = json.dumps(recipe(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cached_build(root: Path | None = None) -> CachedBuild:
    """The cache entry for the current inputs (it may not exist yet)."""
    return CachedBuild((root or cache_root()) / f"{KUBERNETES_VERSION}-{inputs_digest()}")
