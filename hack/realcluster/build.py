"""Build the real control plane once, from Debian's packages: `python -m hack.realcluster.build`.

Fetches the pinned packages of `inputs` through apt (a private configuration, see `debian`),
applies `vendor_fix`, runs upstream's own `make WHAT="cmd/kube-apiserver ..."` offline with
Debian's Go 1.19, and caches kube-apiserver, kube-controller-manager, kube-scheduler and
Debian's etcd under the cache directory named by the inputs' digest. A complete cache entry is
reused as it is; the work tree (about 2 GiB while building) is removed afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from . import debian, inputs, vendor_fix
from .commands import CommandError, run

MAKE_TIMEOUT = 3600.0
BUILD_ENV = "DYNAMO_REALCLUSTER_BUILD"


def disk_use(path: Path) -> int:
    """Bytes allocated on disk under `path`."""
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(directory, name)).st_blocks * 512
    return total


def _mib(size: int) -> str:
    return f"{size / 2**20:.0f} MiB"


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One build at a time per cache root (a second one waits, then finds the entry built)."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _toolchain_env(tools: Path, work: Path) -> dict[str, str]:
    goroot = tools / inputs.GO_ROOT
    libs = [str(p) for p in (tools / "usr" / "lib").glob("*-linux-gnu")]
    return {
        **os.environ,
        "PATH": os.pathsep.join([str(goroot / "bin"), str(tools / "usr" / "bin"),
                                 os.environ.get("PATH", "/usr/bin:/bin")]),
        "LD_LIBRARY_PATH": os.pathsep.join(libs),
        "GOROOT": str(goroot),
        "GOCACHE": str(work / "gocache"),
        **inputs.GO_SETTINGS,
        "HOME": str(work / "home"),
        "TMPDIR": str(work / "tmp"),
        "LC_ALL": "C",
    }


def _fetch(work: Path, log: Path) -> tuple[Path, Path]:
    """Download and unpack everything; the source tree and the tools root."""
    apt = debian.PrivateApt(work / "apt")
    apt.configure()
    apt.update()
    try:
        dsc = apt.download_source(*inputs.SOURCE_PACKAGE, work / "source")
        debs = apt.download(inputs.TOOL_PACKAGES, work / "debs")
    except CommandError as error:
        if "not found" not in str(error) and "Unable to find" not in str(error):
            raise
        raise CommandError(f"{error}\nDebian no longer serves a pinned version: update the"
                           " pins in hack/realcluster/inputs.py") from error
    tools = work / "tools"
    debian.unpack_debs(debs, tools)
    tree = debian.unpack_source(dsc, work / "src")
    with log.open("a") as out:
        out.write(f"fetched {dsc.name} and {len(debs)} packages\n")
    return tree, tools


def _make(tree: Path, tools: Path, work: Path, log: Path) -> None:
    env = _toolchain_env(tools, work)
    for directory in ("home", "tmp"):
        (work / directory).mkdir(exist_ok=True)
    what = " ".join(f"cmd/{name}" for name in inputs.COMPONENTS)
    run(["make", f"WHAT={what}"], timeout=MAKE_TIMEOUT, cwd=tree, env=env, log=log)


def _install(tree: Path, tools: Path, entry: inputs.CachedBuild, manifest: dict[str, object]
             ) -> None:
    """Copy the binaries into a staging directory, then rename it into place."""
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=entry.directory.parent))
    (staging / "bin").mkdir()
    for name in inputs.COMPONENTS:
        shutil.copy2(tree / "_output" / "bin" / name, staging / "bin" / name)
    shutil.copy2(tools / inputs.ETCD_BINARY, staging / "bin" / "etcd")
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if entry.directory.exists():
        shutil.rmtree(entry.directory)
    staging.rename(entry.directory)


def build(entry: inputs.CachedBuild, *, keep_work: bool = False,
          echo: bool = True) -> dict[str, object]:
    """Build into `entry` (replacing whatever is there); the manifest written."""
    root = entry.directory.parent
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    log = work / "build.log"
    if echo:
        print(f"building the real control plane in {work} (log: {log})", flush=True)
    try:
        tree, tools = _fetch(work, log)
        fetched = time.monotonic()
        vendor_fix.apply(tree, tools)
        _make(tree, tools, work, log)
        built = time.monotonic()
        work_size = disk_use(work)
        manifest: dict[str, object] = {
            "kubernetes": inputs.KUBERNETES_VERSION,
            "packages": dict([inputs.SOURCE_PACKAGE, *inputs.TOOL_PACKAGES]),
            "digest": inputs.inputs_digest(),
            "fetch_seconds": round(fetched - started, 1),
            "make_seconds": round(built - fetched, 1),
            "work_tree_bytes": work_size,
        }
        _install(tree, tools, entry, manifest)
        manifest["build_seconds"] = round(time.monotonic() - started, 1)
        manifest["cache_bytes"] = disk_use(entry.directory)
        entry.manifest.write_text(json.dumps(manifest, indent=2) + "\n")
        return manifest
    finally:
        if not keep_work:
            shutil.rmtree(work, ignore_errors=True)


def building_allowed() -> bool:
    """False when DYNAMO_REALCLUSTER_BUILD=0: use a cached build or nothing."""
    return os.environ.get(BUILD_ENV, "1").strip().lower() not in ("0", "no", "false", "off")


def ensure_built(*, allow_build: bool | None = None, echo: bool = False
                 ) -> inputs.CachedBuild | None:
    """The cache entry for the current inputs, built first if missing and building is allowed;
    None when it is missing and building is not allowed."""
    entry = inputs.cached_build()
    if entry.complete():
        return entry
    if not (building_allowed() if allow_build is None else allow_build):
        return None
    with _locked(entry.directory.parent):
        if not entry.complete():
            build(entry, echo=echo)
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.realcluster.build",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--force", action="store_true", help="rebuild even when cached")
    parser.add_argument("--keep-work", action="store_true",
                        help="keep the work tree (source, toolchain, Go cache) for inspection")
    parser.add_argument("--print-path", action="store_true",
                        help="only print the cache entry's directory (and whether it is built)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    entry = inputs.cached_build()
    if args.print_path:
        print(entry.directory, "built" if entry.complete() else "missing")
        return 0
    with _locked(entry.directory.parent):
        if entry.complete() and not args.force:
            manifest = json.loads(entry.manifest.read_text())
            print(f"cached: {entry.directory} ({_mib(disk_use(entry.directory))}; built in"
                  f" {manifest.get('build_seconds', '?')} s)")
            return 0
        manifest = build(entry, keep_work=args.keep_work)
    print(f"built: {entry.directory}")
    print(f"build time: {manifest['build_seconds']} s (fetch {manifest['fetch_seconds']} s,"
          f" make {manifest['make_seconds']} s)")
    print(f"disk use: cache {_mib(int(str(manifest['cache_bytes'])))},"
          f" work tree at its largest {_mib(int(str(manifest['work_tree_bytes'])))} (removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
