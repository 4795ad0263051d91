"""A structural check of the Dockerfile (no image can be built here: buildah installs from
Debian, but no base image can be pulled). What hadolint and a build would catch first: a
multi-stage build from the wheel, a non-root numeric user matching the chart, an exec-form
entrypoint of the console script, a build context of the product only."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = {"api", "backends", "controller", "reconcilers"}


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_known_instructions_only() -> None:
    known = {"ARG", "FROM", "ENV", "WORKDIR", "COPY", "RUN", "LABEL", "USER", "EXPOSE",
             "ENTRYPOINT", "CMD"}
    assert {word for word, _ in instructions()} <= known


def test_multi_stage_build_of_the_wheel() -> None:
    ins = instructions()
    froms = [args for word, args in ins if word == "FROM"]
    assert len(froms) == 2 and froms[0].endswith(" AS build")
    # every FROM names a variable or a pinned tag, never `latest`
    assert all(":latest" not in f and (":" in f or "$" in f) for f in froms)
    runs = " ".join(args for word, args in ins if word == "RUN")
    assert "pip wheel" in runs and "--no-deps" in runs
    final = ins[[i for i, (w, _) in enumerate(ins) if w == "FROM"][1]:]
    copies = [args for word, args in final if word == "COPY"]
    assert copies and all(c.startswith("--from=build ") for c in copies)
    assert not [w for w, _ in final if w == "RUN"], "the final stage installs nothing"


def test_copies_only_the_product() -> None:
    build = [args.split()[0] for word, args in instructions()
             if word == "COPY" and not args.startswith("--from")]
    sources = {Path(s).name for s in build} - {"pyproject.toml", "README.md"}
    assert sources == PRODUCT
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert "*" in ignored
    allowed = {line[1:] for line in ignored if line.startswith("!")}
    assert allowed == PRODUCT | {"pyproject.toml", "README.md"}


def test_runs_as_the_charts_non_root_user() -> None:
    users = [args for word, args in instructions() if word == "USER"]
    assert users and users[-1] == "65532:65532"
    values_dir = ROOT / "deploy" / "helm" / "dynamo-operator" / "templates"
    deployment = (values_dir / "deployment.yaml").read_text()
    assert "runAsUser: 65532" in deployment and "runAsGroup: 65532" in deployment


def test_entrypoint_and_ports() -> None:
    ins = dict(instructions())
    assert yaml.safe_load(ins["ENTRYPOINT"]) == ["dynamo-operator"]
    assert set(ins["EXPOSE"].split()) == {"8080", "8081", "9443"}
    env = ins["ENV"]
    assert "PYTHONDONTWRITEBYTECODE=1" in env  # read-only root filesystem
