"""kubectl describe and explain: built-in kinds and the Widget custom resource."""

from __future__ import annotations

import re

import pytest
from kubectl_support import deployment, manifest, pod, widget

from hack.localcluster.testing import Kubectl

pytestmark = pytest.mark.kubectl


def _fields(out: str) -> dict[str, str]:
    """`Key:  value` lines of describe output at the top level (no indentation)."""
    found: dict[str, str] = {}
    for line in out.splitlines():
        m = re.fullmatch(r"([A-Z][\w -]*):\s*(.*)", line)
        if m:
            found.setdefault(m.group(1), m.group(2).strip())
    return found


async def test_describe_pod_and_deployment(kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=manifest(pod("p1"), deployment("web")))
    await kubectl("label", "pod", "p1", "tier=front")
    out = await kubectl("describe", "pod", "p1")
    top = _fields(out)
    assert top["Name"] == "p1" and top["Namespace"] == "default"
    assert top["Node"] == "<none>"  # nothing schedules it
    assert top["Status"] == "Pending"
    assert top["QoS Class"] == "BestEffort"
    assert top["Events"] == "<none>"
    # Admission fills these on a real cluster too.
    assert top["Service Account"] == "default"
    assert top["Priority"] == "0"
    assert re.search(r"^Labels:\s+app=p1\n\s+tier=front$", out, re.M)
    assert re.search(r"^Annotations:\s+<none>$", out, re.M)  # last-applied is not shown
    assert re.search(r"^Containers:\n  app:\n    Image:\s+nginx:1\.25$", out, re.M)

    out = await kubectl("describe", "deployment", "web")
    top = _fields(out)
    assert top["Name"] == "web" and top["Selector"] == "app=web"
    assert top["Replicas"] == "2 desired | 0 updated | 0 total | 0 available | 0 unavailable"
    assert top["StrategyType"] == "RollingUpdate"
    assert top["RollingUpdateStrategy"] == "25% max unavailable, 25% max surge"
    assert re.search(r"^Pod Template:\n  Labels:\s+app=web\n  Containers:\n   app:\n"
                     r"    Image:\s+nginx:1\.25\n    Port:\s+80/TCP$", out, re.M)
    # Several at once, by label; each block starts with its Name.
    out = await kubectl("describe", "pods,deployments", "-l", "app")
    assert [line for line in out.splitlines() if line.startswith("Name:")] == [
        "Name:             p1", "Name:                   web"]


async def test_describe_custom_resource(widgets: Kubectl) -> None:
    kubectl = widgets
    await kubectl("apply", "-f", "-", stdin=manifest(widget("w1", size="small", color="red")))
    await kubectl("patch", "wg", "w1", "--subresource=status", "--type=merge",
                  "-p", '{"status":{"phase":"Ready","replicas":1}}')
    out = await kubectl("describe", "widget", "w1")
    top = _fields(out)
    assert top["Name"] == "w1" and top["Namespace"] == "default"
    assert top["API Version"] == "example.com/v1" and top["Kind"] == "Widget"
    assert top["Labels"] == "<none>" and top["Annotations"] == "<none>"
    assert top["Events"] == "<none>"
    # The generic describer prints the object's fields title-cased, metadata minus
    # managedFields.
    assert re.search(r"^Metadata:\n  Creation Timestamp:\s+\S+Z\n  Generation:\s+1\n"
                     r"  Resource Version:\s+\d+\n  UID:\s+[0-9a-f-]{36}\n", out, re.M)
    assert re.search(r"^Spec:\n  Color:\s+red\n  Replicas:\s+1\n  Size:\s+small\n"
                     r"Status:\n  Phase:\s+Ready\n  Replicas:\s+1\n", out, re.M)
    assert "Managed Fields" not in out
    assert await kubectl("describe", "wgt") == out  # by short name, all of them
    result = await kubectl.run("describe", "wg", "nope")
    assert result.code == 1
    assert result.stderr == 'Error from server (NotFound): widgets.example.com "nope" not found\n'


async def test_explain_builtin_and_custom_fields(widgets: Kubectl) -> None:
    kubectl = widgets
    out = await kubectl("explain", "deployment.spec.replicas")
    assert out.startswith("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\n"
                          "FIELD: replicas <integer>\n")
    assert "Number of desired pods." in out

    out = await kubectl("explain", "pods.spec.containers")
    assert "FIELD: containers <[]Container>" in out
    assert re.search(r"^  image\t<string>$", out, re.M)
    assert re.search(r"^  name\t<string> -required-$", out, re.M)

    out = await kubectl("explain", "widgets")
    assert out.startswith("GROUP:      example.com\nKIND:       Widget\nVERSION:    v1\n\n"
                          "DESCRIPTION:\n    A Widget is a sample custom resource.\n")
    assert re.search(r"^  spec\t<Object>\n    The desired state of the widget\.$", out, re.M)
    assert re.search(r"^  metadata\t<ObjectMeta>$", out, re.M)

    out = await kubectl("explain", "wg.spec.size")
    assert out == ("GROUP:      example.com\nKIND:       Widget\nVERSION:    v1\n\n"
                   "FIELD: size <string>\nENUM:\n    small\n    medium\n    large\n\n"
                   "DESCRIPTION:\n    How big the widget is.\n    \n\n")
    out = await kubectl("explain", "widgets.spec", "--recursive")
    assert re.search(r"^  size\t<string> -required-$", out, re.M)
    assert re.search(r"^  tags\t<\[\]string>$", out, re.M)

    result = await kubectl.run("explain", "widgets.spec.nope")
    assert result.code == 1
    assert result.stderr == 'error: field "nope" does not exist\n'
