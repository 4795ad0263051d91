"""`dynamo-operator convert`: manifests moved between nvidia.com/v1alpha1 and v1beta1 offline,
and `render` of either version printing the same children, byte for byte; the v1beta1 forms of
the examples are what the command writes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reconcilers.operator.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "deploy" / "examples"
#: v1beta1 examples with no v1alpha1 original: intent-based requests as upstream writes them
#: (tests/deploy/test_request_examples.py checks them).
NATIVE = sorted((EXAMPLES / "v1beta1").glob("dgdr-intent-*.yaml"))
V1BETA1 = sorted(set((EXAMPLES / "v1beta1").glob("*.yaml")) - set(NATIVE))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def documents(text: str) -> list[object]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def test_every_example_of_our_kinds_has_its_v1beta1_form() -> None:
    ours = {p.name for p in EXAMPLES.glob("*.yaml")
            if any((d or {}).get("apiVersion") == "nvidia.com/v1alpha1"
                   for d in yaml.safe_load_all(p.read_text()))}
    assert ours == {p.name for p in V1BETA1}
    assert len(ours) >= 15


@pytest.mark.parametrize("example", V1BETA1, ids=lambda p: p.name)
def test_v1beta1_example_is_the_converted_one_and_renders_the_same(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    original = EXAMPLES / example.name
    converted = run(capsys, "convert", "-f", str(original))
    assert documents(converted) == documents(example.read_text()), (
        f"run `dynamo-operator convert -f {original.relative_to(ROOT)}`")
    versions = {str(d.get("apiVersion")) for d in documents(converted) if isinstance(d, dict)}
    assert {v for v in versions if v.startswith("nvidia.com/")} == {"nvidia.com/v1beta1"}
    # Back again: the input, whole.
    back = run(capsys, "convert", "-f", str(example), "--to", "v1alpha1")
    assert documents(back) == documents(original.read_text())
    # The same children from either version, byte for byte.
    assert run(capsys, "render", "-f", str(example)) == run(capsys, "render", "-f",
                                                                str(original))


def test_documents_of_other_kinds_and_of_the_target_version_pass_unchanged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mixed.yaml"
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    hub = documents((EXAMPLES / "v1beta1" / "vllm-agg.yaml").read_text())[0]
    path.write_text(yaml.safe_dump_all([namespace, hub]))
    assert documents(run(capsys, "convert", "-f", str(path))) == [namespace, hub]


def test_bad_input_is_one_line_and_exit_1(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("- just\n- a list\n")
    assert main(["convert", "-f", str(path)]) == 1
    assert capsys.readouterr().err.startswith("dynamo-operator convert: every YAML document")
    path.write_text(yaml.safe_dump({"apiVersion": "nvidia.com/v1alpha1", "kind": "Gadget",
                                    "metadata": {"name": "g"}}))
    assert main(["convert", "-f", str(path)]) == 1
    assert "cannot convert kind 'Gadget'" in capsys.readouterr().err
    assert main(["convert", "-f", str(tmp_path / "missing.yaml")]) == 1
