"""The peer: the same image change made by the operator as it was before worker generations.

The operator has no switch that turns the rollout logic off (and the benchmark adds none). Its
last commit without worker generations (the newest commit of HEAD's history that has no
`backends/worker_generation.py`) is a way: its product packages are `git archive`d into a
directory and run from there. It rolls each worker's Deployment on its own (the Deployment's
RollingUpdate), as the operator did before issue #28.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MARKER = "backends/worker_generation.py"
PACKAGES = ("api", "backends", "controller", "reconcilers")


def _git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          timeout=60).stdout


def commit_before_generations() -> str | None:
    """The newest commit of HEAD's first-parent history without worker generations (None when
    every one of the last 400 has them)."""
    for commit in _git("rev-list", "--first-parent", "-n", "400", "HEAD").decode().split():
        listed = _git("ls-tree", "--name-only", commit, MARKER).decode().strip()
        if not listed:
            return commit
    return None


def peer_tree(dest: Path, commit: str) -> Path:
    """The product packages of `commit`, unpacked into `dest` (to run with PYTHONPATH=dest)."""
    archive = _git("archive", "--format=tar", commit, *PACKAGES)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest
