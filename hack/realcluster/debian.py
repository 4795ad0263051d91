"""Debian packages through apt, with a private configuration: nothing of the system changes.

The private configuration reuses the mirrors the machine's own apt sources name (so no host is
written here), asks for bookworm's suites whatever release the machine runs, and adds
`deb-src` so that `apt-get source` works. Its lists and cache live in a directory of ours.
Binary packages are fetched with `apt-get download` and unpacked with `dpkg-deb -x`, never
installed.
"""

from __future__ import annotations

import getpass
import os
import re
from pathlib import Path

from .commands import run

RELEASE = "bookworm"
SYSTEM_SOURCES = Path("/etc/apt/sources.list.d")
SYSTEM_SOURCE_LIST = Path("/etc/apt/sources.list")
APT_TIMEOUT = 600.0


def _codename() -> str:
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return RELEASE


def _retarget(suites: str, codename: str) -> str:
    """`trixie trixie-updates` -> `bookworm bookworm-updates` (unchanged on bookworm)."""
    return re.sub(rf"\b{re.escape(codename)}(?=$|[-\s/])", RELEASE, suites)


def deb822_with_sources(text: str, codename: str) -> str:
    """The deb822 stanzas of type `deb`, as `deb deb-src` stanzas for bookworm."""
    stanzas = []
    for stanza in re.split(r"\n\s*\n", text.strip()):
        fields = [line for line in stanza.splitlines() if not line.startswith("#")]
        types = next((f.split(":", 1)[1].split() for f in fields
                      if f.lower().startswith("types:")), [])
        if "deb" not in types or any(f.lower().startswith("enabled: no") for f in fields):
            continue
        out = []
        for line in fields:
            key = line.split(":", 1)[0].lower()
            if key == "types":
                line = "Types: deb deb-src"
            elif key == "suites":
                line = "Suites: " + _retarget(line.split(":", 1)[1].strip(), codename)
            out.append(line)
        stanzas.append("\n".join(out))
    return "\n\n".join(stanzas) + "\n" if stanzas else ""


def one_line_with_sources(text: str, codename: str) -> str:
    """The `deb ...` lines of a sources.list, each also as `deb-src ...`, for bookworm."""
    lines = []
    for line in text.splitlines():
        if line.strip().startswith("deb "):
            line = _retarget(line.strip(), codename)
            lines += [line, "deb-src" + line[3:]]
    return "\n".join(lines) + "\n" if lines else ""


class PrivateApt:
    """apt-get with its own sources, lists and cache under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = root / "apt.conf"

    def configure(self) -> None:
        codename = _codename()
        parts = self.root / "sources.list.d"
        for directory in (parts, self.root / "preferences.d", self.root / "lists" / "partial",
                          self.root / "cache" / "archives" / "partial"):
            directory.mkdir(parents=True, exist_ok=True)
        found = False
        if SYSTEM_SOURCES.is_dir():
            for source in sorted(SYSTEM_SOURCES.glob("*.sources")):
                text = deb822_with_sources(source.read_text(), codename)
                (parts / source.name).write_text(text)
                found = found or bool(text)
        one_line = (one_line_with_sources(SYSTEM_SOURCE_LIST.read_text(), codename)
                    if SYSTEM_SOURCE_LIST.exists() else "")
        for source in sorted(SYSTEM_SOURCES.glob("*.list")) if SYSTEM_SOURCES.is_dir() else []:
            one_line += one_line_with_sources(source.read_text(), codename)
        (self.root / "sources.list").write_text(one_line)
        if not (found or one_line):
            raise RuntimeError("no Debian mirror found in the system's apt sources")
        self.config.write_text("".join(f'{key} "{value}";\n' for key, value in (
            ("Dir::Etc::sourcelist", self.root / "sources.list"),
            ("Dir::Etc::sourceparts", parts),
            ("Dir::Etc::preferences", "/dev/null"),
            ("Dir::Etc::preferencesparts", self.root / "preferences.d"),
            ("Dir::State::Lists", self.root / "lists"),
            ("Dir::Cache", self.root / "cache"),
            ("APT::Sandbox::User", getpass.getuser()),
        )))

    def _env(self) -> dict[str, str]:
        return {**os.environ, "APT_CONFIG": str(self.config), "LC_ALL": "C"}

    def update(self) -> None:
        run(["apt-get", "update", "-q"], timeout=APT_TIMEOUT, env=self._env())

    def download(self, packages: tuple[tuple[str, str], ...], dest: Path) -> list[Path]:
        """`apt-get download NAME=VERSION ...` into `dest`; the .deb files fetched."""
        dest.mkdir(parents=True, exist_ok=True)
        run(["apt-get", "download", "-q", *(f"{n}={v}" for n, v in packages)],
            timeout=APT_TIMEOUT, cwd=dest, env=self._env())
        return sorted(dest.glob("*.deb"))

    def download_source(self, name: str, version: str, dest: Path) -> Path:
        """`apt-get source --download-only` (hashes checked by apt); the .dsc file."""
        dest.mkdir(parents=True, exist_ok=True)
        run(["apt-get", "source", "--download-only", "-q", f"{name}={version}"],
            timeout=APT_TIMEOUT, cwd=dest, env=self._env())
        return next(dest.glob("*.dsc"))


def unpack_debs(debs: list[Path], dest: Path) -> None:
    """dpkg-deb -x each package into `dest` (a private root, not the system's)."""
    dest.mkdir(parents=True, exist_ok=True)
    for deb in debs:
        run(["dpkg-deb", "-x", deb, dest], timeout=300)


def unpack_source(dsc: Path, dest: Path) -> Path:
    """The upstream tarball plus debian/ and its patches applied in order; the tree's root."""
    directory = dsc.parent
    orig = next(directory.glob("*.orig.tar.*"))
    debian = next(directory.glob("*.debian.tar.*"))
    dest.mkdir(parents=True, exist_ok=True)
    run(["tar", "-xf", orig, "-C", dest], timeout=600)
    tops = [path for path in dest.iterdir() if path.is_dir()]
    if len(tops) != 1:
        raise RuntimeError(f"{orig.name}: expected one top directory, found {tops}")
    tree = tops[0]
    run(["tar", "-xf", debian, "-C", tree], timeout=120)
    series = tree / "debian" / "patches" / "series"
    for line in series.read_text().splitlines() if series.exists() else []:
        words = line.split("#", 1)[0].split()
        if words:
            run(["patch", "-p1", "-s", "--no-backup-if-mismatch", "-i",
                 tree / "debian" / "patches" / words[0]], timeout=120, cwd=tree)
    return tree
