"""`dynamo-operator render`: the objects of a manifest file as YAML, without a cluster; and
determinism: one input, byte-identical output."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from backend_cases import to_yaml

from backends.render import render_all
from backends.settings import OperatorSettings
from reconcilers.operator.cli import main
from reconcilers.operator.defaulting import created
from reconcilers.operator.version import VERSION

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "tests" / "api" / "manifests"
AGG = MANIFESTS / "dgd-vllm-agg.yaml"
EXAMPLES = ROOT / "deploy" / "examples"


def test_render_prints_every_object_of_every_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "graph.yaml"
    path.write_text(AGG.read_text() + "\n---\n" + (MANIFESTS / "dm-base.yaml").read_text())
    assert main(["render", "-f", str(path)]) == 0
    out = capsys.readouterr().out
    printed = list(yaml.safe_load_all(out))
    # As created: the graph stamped with the operator's origin version.
    expected = render_all(created(d, VERSION) for d in yaml.safe_load_all(path.read_text()))
    assert printed == expected
    assert out.count("\n---\n") + 1 == len(printed) == 9
    assert [(o["kind"], o["metadata"]["name"]) for o in printed][3:6] == [
        ("DynamoComponentDeployment", "vllm-agg-frontend"),
        ("Deployment", "vllm-agg-frontend"),
        ("Service", "vllm-agg-frontend"),
    ]
    assert "&id" not in out


def test_render_reads_stdin_and_renders_grove(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(AGG.read_text()))
    assert main(["render", "--grove", "-f", "-"]) == 0
    kinds = [o["kind"] for o in yaml.safe_load_all(capsys.readouterr().out)]
    assert "PodCliqueSet" in kinds
    assert "Deployment" not in kinds


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "kind: DynamoGraphDeployment\nmetadata: {name: g}\nspec: {services: {}}\n",
            "dynamo-operator render: invalid DynamoGraphDeployment g: "
            "spec.services: must have at least one service\n",
        ),
        (
            "kind: DynamoGraphDeployment\nmetadata: {name: g}\n"
            "spec: {services: {a: {replicas: x}}}\n",
            "dynamo-operator render: invalid DynamoGraphDeployment: "
            "spec.services.a.replicas: expected int, got str\n",
        ),
        (
            "kind: DynamoGraphDeployment\nmetadata: {name: g}\nspec: {services: {W: {}, w: {}}}\n",
            'dynamo-operator render: invalid DynamoGraphDeployment g: spec.services.w: service '
            'keys "W" and "w" differ only in case and would both be DynamoComponentDeployment '
            '"g-w"; rename one of them\n',
        ),
        ("- a\n- b\n", "dynamo-operator render: every YAML document must be a Kubernetes object\n"),
    ],
)
def test_render_reports_manifests_it_cannot_render(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    assert main(["render", "-f", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == message


def test_other_documents_pass_through_and_our_inert_kinds_are_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "llm"}}
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump_all([namespace, yaml.safe_load(AGG.read_text()),
                                        next(yaml.safe_load_all(
                                            (MANIFESTS / "dm-base.yaml").read_text()))]))
    assert main(["render", "-f", str(path)]) == 0
    captured = capsys.readouterr()
    printed = list(yaml.safe_load_all(captured.out))
    assert printed[0] == namespace
    assert "DynamoComponentDeployment" in {o["kind"] for o in printed}
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("dynamo-operator render: skipped DynamoModel ")


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_example_renders(example: str, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["render", "-f", str(EXAMPLES / example)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    # Something printed, or a DGDR (rendered only once profiled) noted as skipped.
    assert list(yaml.safe_load_all(captured.out)) or "skipped" in captured.err


def test_render_reports_a_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "-f", "/nonexistent/graph.yaml"]) == 1
    assert "No such file or directory" in capsys.readouterr().err


def test_output_does_not_depend_on_hash_seeds_or_map_order(tmp_path: Path) -> None:
    manifests = [
        doc
        for path in sorted(MANIFESTS.glob("dgd-*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
    ]
    reordered = []
    for doc in manifests:
        copy = yaml.safe_load(yaml.safe_dump(doc))
        services = copy["spec"]["services"]
        copy["spec"]["services"] = dict(reversed(list(services.items())))
        reordered.append(copy)
    assert to_yaml(render_all(manifests)) == to_yaml(render_all(reordered))

    # Another process, another hash seed: the same bytes.
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump_all(manifests))
    result = subprocess.run(
        [sys.executable, "-m", "reconcilers.operator", "render", "--grove", "-f", str(path)],
        capture_output=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    grove = OperatorSettings(grove_enabled=True)
    stamped = [created(d, VERSION) for d in manifests]
    assert result.stdout.decode() == to_yaml(render_all(stamped, grove))


def test_a_frontend_sidecar_renders_as_on_a_cluster(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A graph is rendered as its create stores it (stamped with the origin version), so its
    frontendSidecar shows; one stamped by an older operator shows what that one renders."""
    graph = yaml.safe_load(AGG.read_text())
    worker = next(s for s in graph["spec"]["services"].values()
                  if s.get("componentType") == "worker")
    worker["frontendSidecar"] = {"image": "nvcr.io/nvidia/ai-dynamo/frontend:1.0.0"}

    def worker_containers(doc: dict[str, object]) -> list[str]:
        path = tmp_path / "graph.yaml"
        path.write_text(yaml.safe_dump(doc))
        assert main(["render", "-f", str(path)]) == 0
        printed = list(yaml.safe_load_all(capsys.readouterr().out))
        [deployment] = [o for o in printed if o["kind"] == "Deployment"
                        and o["spec"]["template"]["metadata"]["labels"].get(
                            "nvidia.com/dynamo-component-type") == "worker"]
        return sorted(c["name"] for c in deployment["spec"]["template"]["spec"]["containers"])

    assert worker_containers(graph) == ["main", "sidecar-frontend"]
    graph["metadata"]["annotations"] = {"nvidia.com/dynamo-operator-origin-version": "0.0.1"}
    assert worker_containers(graph) == ["main"]
