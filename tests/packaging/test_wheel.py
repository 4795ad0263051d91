"""The shipped package: the wheel holds the product (api, backends, controller, reconcilers) and
nothing of the test bed (hack/, tests/, e2e/), and once installed away from the checkout its
`dynamo-operator` command runs on its own.

The wheel is built from a copy of the checkout, so a stale `build/` in the checkout cannot leak
into it and the build writes nothing into the checkout. The fresh virtualenv gets the third-party
dependencies through PYTHONPATH pointing at this interpreter's site-packages: PYTHONPATH entries
do not run `.pth` files, so the editable install of the checkout stays out of it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("api", "backends", "controller", "reconcilers")
NOT_SHIPPED = ("hack", "tests", "e2e")
EXAMPLE = REPO / "deploy" / "examples" / "vllm-agg.yaml"
TIMEOUT = 120


def run(cmd: Sequence[str | Path], *, cwd: Path,
        env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)


def project_version() -> str:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert isinstance(version, str)
    return version


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout as it is (hack/, tests/ and e2e/ included), less caches and builds."""
    src = tmp_path_factory.mktemp("source") / "dynamo-operator"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".*_cache",
        ".hypothesis", ".localcluster"))
    return src


@pytest.fixture(scope="module")
def wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    done = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "--no-input", "-w", out, source], cwd=out)
    assert done.returncode == 0, done.stdout + done.stderr
    [built] = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed and nothing else."""
    root = tmp_path_factory.mktemp("venv")
    done = run([sys.executable, "-m", "venv", "--without-pip", root], cwd=root)
    assert done.returncode == 0, done.stderr
    done = run([sys.executable, "-m", "pip", "--python", root / "bin" / "python", "install",
                "--no-deps", "--no-index", "--no-input", wheel], cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty working directory away from the checkout, so the checkout is not on sys.path."""
    return tmp_path_factory.mktemp("outside")


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    """This interpreter's site-packages for the third-party dependencies, and no checkout."""
    paths = sysconfig.get_paths()
    site = dict.fromkeys([paths["purelib"], paths["platlib"]])
    environ = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    return {**environ, "PYTHONPATH": os.pathsep.join(site), "PYTHONNOUSERSITE": "1",
            "PYTHONDONTWRITEBYTECODE": "1"}


def test_the_wheel_holds_the_product_and_nothing_of_the_test_bed(wheel: Path,
                                                                source: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names}
    dist_info = f"dynamo_operator-{project_version()}.dist-info"
    assert top == {*PRODUCT, dist_info}, sorted(top)
    assert not [n for n in names if n.split("/", 1)[0] in NOT_SHIPPED]
    # Every module of the product, subpackages included, and no stray bytecode.
    modules = {p.relative_to(source).as_posix()
               for package in PRODUCT for p in (source / package).rglob("*.py")}
    assert modules - set(names) == set()
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    archive = zipfile.ZipFile(wheel)
    entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    assert "dynamo-operator = reconcilers.operator.cli:main" in entry_points
    metadata = archive.read(f"{dist_info}/METADATA").decode()
    assert f"\nVersion: {project_version()}\n" in metadata


def test_the_installed_command_runs_away_from_the_checkout(venv: Path, outside: Path,
                                                           env: dict[str, str]) -> None:
    operator = venv / "bin" / "dynamo-operator"
    done = run([operator, "--help"], cwd=outside, env=env)
    assert done.returncode == 0, done.stderr
    assert "usage: dynamo-operator" in done.stdout
    assert "render -f FILE" in done.stdout

    done = run([venv / "bin" / "python", "-m", "reconcilers.operator", "--help"],
               cwd=outside, env=env)
    assert done.returncode == 0, done.stderr
    assert "usage: dynamo-operator" in done.stdout


def test_the_installed_command_renders_an_example(venv: Path, outside: Path,
                                                  env: dict[str, str]) -> None:
    done = run([venv / "bin" / "dynamo-operator", "render", "-f", EXAMPLE], cwd=outside, env=env)
    assert done.returncode == 0, done.stderr
    kinds = [line.removeprefix("kind: ") for line in done.stdout.splitlines()
             if line.startswith("kind: ")]
    assert {"DynamoComponentDeployment", "Deployment", "Service"} <= set(kinds), kinds
    assert "name: vllm-agg-frontend" in done.stdout


def test_the_product_comes_from_the_wheel_and_hack_is_not_there(venv: Path, outside: Path,
                                                                env: dict[str, str]) -> None:
    python = venv / "bin" / "python"
    done = run([python, "-c", "import reconcilers, sys; print(reconcilers.__file__)"],
               cwd=outside, env=env)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(venv), done.stdout
    for package in NOT_SHIPPED:
        done = run([python, "-c", f"import {package}"], cwd=outside, env=env)
        assert done.returncode != 0, f"{package} is importable from the installed wheel"
        assert f"No module named '{package}'" in done.stderr, done.stderr
