"""An earlier operator for the upgrade tests: the product packages of an earlier commit,
`git archive`d into a folder, run as `python -m reconcilers.operator` from there
(`OperatorProcess(tree=...)`), against the current CRDs and test bed.

`previous_operator_commits` are the commits before the newest changes to the product code,
newest first, so a test of an upgrade from "the previous operator" keeps meaning that as
history moves. Commits in between are not all working operators (a change may land in two
commits, the caller before the callee), so a test takes the next one when the first shows a
bug (`shows_a_bug`: a traceback in its log, which a working operator never writes). It needs
the history (a full clone); a shallow clone without it skips the test.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest
from e2e_support import ROOT

#: The packages that make the operator (the wheel's); the rest of the tree is tooling.
PRODUCT = ("api", "backends", "controller", "reconcilers")


def git(*args: str) -> bytes:
    """git in this checkout; its stdout."""
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          timeout=60).stdout


def previous_operator_commits(count: int = 3) -> list[str]:
    """Up to `count` earlier operators, newest first: the first parent of the newest commit
    that changed the product code, then the first parent of the newest product change before
    that one, and so on. Skips the test without that history."""
    found: list[str] = []
    start = "HEAD"
    try:
        while len(found) < count:
            newest = git("log", "-n1", "--format=%H", start, "--", *PRODUCT).decode().strip()
            if not newest:
                break
            parent = git("rev-list", "-n1", "--first-parent", "--skip=1",
                         newest).decode().strip()
            if not parent:
                break
            found.append(parent)
            start = parent
    except subprocess.CalledProcessError:
        pytest.skip("no git history of the product code here (a shallow clone?)")
    if not found:
        pytest.skip("no commit before the newest product change in this clone")
    return found


def shows_a_bug(log: Path) -> bool:
    """Whether an operator's log holds a traceback (a bug: transient errors log none)."""
    return log.exists() and "Traceback (most recent call last)" in log.read_text(
        errors="replace")


def operator_tree(commit: str, dest: Path) -> Path:
    """The product packages of `commit`, unpacked into `dest`, installed as that release: the
    operator reads its version from the package metadata (and stamps graphs with it), which
    would otherwise be this checkout's."""
    archive = git("archive", "--format=tar", commit, *PRODUCT)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    version = tomllib.loads(git("show", f"{commit}:pyproject.toml").decode())["project"]["version"]
    metadata = dest / f"dynamo_operator-{version}.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: dynamo-operator\nVersion: {version}\n")
    return dest
