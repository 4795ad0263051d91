"""kubectl get (tables, wide, yaml, jsonpath, watch, categories, errors), api-resources,
label, annotate and version, compared with what a real cluster prints."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from kubectl_support import AGE, Background, deployment, manifest, pod, table, widget

from hack.localcluster.discovery import SERVER_VERSION
from hack.localcluster.testing import Kubectl

pytestmark = pytest.mark.kubectl


async def _two_widgets(kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=manifest(
        widget("w1", size="small", replicas=2), widget("w2", size="large")))
    await kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge",
                  "-p", '{"status":{"phase":"Ready"}}')


async def test_get_custom_resources_with_printer_columns(widgets: Kubectl) -> None:
    kubectl = widgets
    await _two_widgets(kubectl)
    rows = table(await kubectl("get", "widgets"))
    assert rows[0] == ["NAME", "SIZE", "REPLICAS", "AGE"]  # Phase has priority 1
    assert [r[:3] for r in rows[1:]] == [["w1", "small", "2"], ["w2", "large", "1"]]
    assert all(AGE.fullmatch(r[3]) for r in rows[1:])

    rows = table(await kubectl("get", "widgets", "-o", "wide"))
    assert rows[0] == ["NAME", "SIZE", "REPLICAS", "PHASE", "AGE"]
    assert rows[1][:4] == ["w1", "small", "2", "Ready"]
    # An empty cell is blank, so w2 splits into one field fewer.
    assert rows[2][:3] == ["w2", "large", "1"] and len(rows[2]) == 4

    # Every name of the resource reaches the same objects.
    for name in ("widget", "wg", "wgt", "widgets.example.com", "widgets.v1.example.com",
                 "gadgets"):
        assert await kubectl("get", name, "-o", "name") == \
            "widget.example.com/w1\nwidget.example.com/w2\n", name
    [row] = table(await kubectl("get", "wg", "w2", "--no-headers"))
    assert row[:3] == ["w2", "large", "1"] and AGE.fullmatch(row[3])
    assert await kubectl("get", "wg", "-l", "missing=label") == ""


async def test_get_output_formats(widgets: Kubectl) -> None:
    kubectl = widgets
    await _two_widgets(kubectl)
    doc = yaml.safe_load(await kubectl("get", "wg", "w1", "-o", "yaml"))
    assert doc["apiVersion"] == "example.com/v1" and doc["kind"] == "Widget"
    assert doc["spec"] == {"size": "small", "replicas": 2}
    assert doc["status"] == {"phase": "Ready"}
    meta = doc["metadata"]
    assert set(meta) == {"creationTimestamp", "generation", "name", "namespace",
                         "resourceVersion", "uid", "annotations"}  # no managedFields
    assert meta["generation"] == 1

    listed = yaml.safe_load(await kubectl("get", "wg", "-o", "yaml"))
    assert listed["kind"] == "List" and listed["apiVersion"] == "v1"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["w1", "w2"]
    assert all(i["kind"] == "Widget" for i in listed["items"])

    assert await kubectl("get", "wg", "-o",
                         "jsonpath={range .items[*]}{.metadata.name}={.spec.size}{'\\n'}{end}") \
        == "w1=small\nw2=large\n"
    assert await kubectl("get", "wg", "w1", "-o", "jsonpath={.status.phase}") == "Ready"
    assert table(await kubectl("get", "wg", "-o",
                               "custom-columns=N:.metadata.name,R:.spec.replicas")) == [
        ["N", "R"], ["w1", "2"], ["w2", "1"]]
    assert json.loads(await kubectl("get", "wg", "w2", "-o", "json"))["spec"]["replicas"] == 1


async def test_get_watch_prints_changes(widgets: Kubectl) -> None:
    kubectl = widgets
    await kubectl("apply", "-f", "-", stdin=manifest(widget("w1", size="small")))
    async with Background(kubectl, "get", "widgets", "--watch", "--output-watch-events") as w:
        assert table(await w.line()) == [["EVENT", "NAME", "SIZE", "REPLICAS", "AGE"]]
        first = table(await w.line())[0]
        assert first[:4] == ["ADDED", "w1", "small", "1"]
        await kubectl("scale", "widget", "w1", "--replicas=3")
        assert table(await w.line())[0][:4] == ["MODIFIED", "w1", "small", "3"]
        await kubectl("apply", "-f", "-", stdin=manifest(widget("w2", size="medium")))
        assert table(await w.line())[0][:4] == ["ADDED", "w2", "medium", "1"]
        await kubectl("delete", "widget", "w1")
        assert table(await w.line())[0][:4] == ["DELETED", "w1", "small", "3"]

    # A plain watch of one object: no header repeated, one line per change.
    async with Background(kubectl, "get", "wg", "w2", "-w", "-o", "name") as w:
        assert await w.line() == "widget.example.com/w2"
        await kubectl("label", "wg", "w2", "x=y")
        assert await w.line() == "widget.example.com/w2"


async def test_get_of_a_missing_object(widgets: Kubectl) -> None:
    kubectl = widgets
    for args, message in [
        (("pods", "nope"), 'Error from server (NotFound): pods "nope" not found\n'),
        (("deploy", "nope"),
         'Error from server (NotFound): deployments.apps "nope" not found\n'),
        (("wg", "nope"), 'Error from server (NotFound): widgets.example.com "nope" not found\n'),
        (("ns", "nope"), 'Error from server (NotFound): namespaces "nope" not found\n'),
        # kubectl looks the namespace up after a NotFound and reports it when it is missing.
        (("pods", "nope", "-n", "elsewhere"),
         'Error from server (NotFound): namespaces "elsewhere" not found\n'),
        (("nosuchkind",), 'error: the server doesn\'t have a resource type "nosuchkind"\n'),
    ]:
        result = await kubectl.run("get", *args)
        assert (result.code, result.stdout, result.stderr) == (1, "", message), args
    # --ignore-not-found turns it into success with no output.
    assert await kubectl("get", "pods", "nope", "--ignore-not-found") == ""
    result = await kubectl.run("get", "pods")
    assert (result.code, result.stdout) == (0, "")
    assert result.stderr == "No resources found in default namespace.\n"


async def test_get_all_and_a_category(widgets: Kubectl) -> None:
    kubectl = widgets
    assert await kubectl("create", "namespace", "shop") == "namespace/shop created\n"
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    await kubectl("apply", "-n", "shop", "-f", "-", stdin=manifest(
        pod("p1"), service, deployment("web"), widget("w1", size="small")))
    out = await kubectl("get", "all", "-n", "shop")
    blocks = [table(b) for b in out.strip().split("\n\n")]
    assert [b[0] for b in blocks] == [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"],
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
    ]
    assert blocks[0][1][:4] == ["pod/p1", "0/1", "Pending", "0"]
    svc = blocks[1][1]
    assert svc[:2] == ["service/web", "ClusterIP"] and svc[3:5] == ["<none>", "80/TCP"]
    assert blocks[2][1][:4] == ["deployment.apps/web", "0/2", "0", "0"]
    out = await kubectl("get", "all", "-n", "shop", "-o", "wide")
    assert [table(b)[0] for b in out.strip().split("\n\n")] == [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
         "READINESS GATES"],
        ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"],
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
    ]
    # Widgets are not in "all" but in their own category.
    header, row = table(await kubectl("get", "gadgets", "-n", "shop"))
    assert header == ["NAME", "SIZE", "REPLICAS", "AGE"]
    assert row[:3] == ["w1", "small", "1"] and AGE.fullmatch(row[3])
    out = await kubectl("get", "gadgets,deployments", "-n", "shop", "-o", "name")
    assert out == "widget.example.com/w1\ndeployment.apps/web\n"


async def test_api_resources(widgets: Kubectl) -> None:
    kubectl = widgets
    # Discovery from scratch takes two requests: kubectl asks /api and /apis for aggregated
    # discovery (apidiscovery.k8s.io/v2) and needs no per-group-version documents.
    fresh = kubectl.cache_dir.parent / "fresh-cache"
    result = await kubectl.run("api-resources", f"--cache-dir={fresh}", "-v=6")
    requested = re.findall(r'"Response" verb="GET" url="https://[^/]+(/[^"?]*)', result.stderr)
    assert requested == ["/api", "/apis"]
    assert "widgets" in result.stdout

    out = await kubectl("api-resources", "--api-group=example.com")
    assert table(out) == [["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
                          ["widgets", "wg,wgt", "example.com/v1", "true", "Widget"]]
    out = await kubectl("api-resources", "--api-group=example.com", "-o", "wide")
    assert table(out)[1] == ["widgets", "wg,wgt", "example.com/v1", "true", "Widget",
                             "create,delete,deletecollection,get,list,patch,update,watch",
                             "gadgets"]
    assert await kubectl("api-resources", "--categories=gadgets", "-o", "name") == \
        "widgets.example.com\n"
    rows = table(await kubectl("api-resources", "--namespaced=false", "--no-headers"))
    crd = next(r for r in rows if r[0] == "customresourcedefinitions")
    assert crd == ["customresourcedefinitions", "crd,crds", "apiextensions.k8s.io/v1",
                   "false", "CustomResourceDefinition"]
    assert "widgets" not in [r[0] for r in rows]
    names = (await kubectl("api-resources", "--categories=all", "-o", "name")).split()
    assert {"pods", "services", "deployments.apps", "replicasets.apps",
            "statefulsets.apps", "daemonsets.apps", "jobs.batch"} <= set(names)
    assert await kubectl("api-versions") == "".join(
        f"{gv}\n" for gv in sorted((await kubectl("api-versions")).split()))
    assert "example.com/v1" in (await kubectl("api-versions")).split()


async def test_label_and_annotate(widgets: Kubectl) -> None:
    kubectl = widgets
    await kubectl("apply", "-f", "-", stdin=manifest(widget("w1", size="small"),
                                                     widget("w2", size="small")))
    assert await kubectl("label", "wg", "w1", "team=a") == "widget.example.com/w1 labeled\n"
    result = await kubectl.run("label", "wg", "w1", "team=b")
    assert result.code == 1
    assert result.stderr == "error: 'team' already has a value (a), and --overwrite is false\n"
    assert await kubectl("label", "wg", "w1", "team=b", "--overwrite") == \
        "widget.example.com/w1 labeled\n"
    assert await kubectl("get", "wg", "-l", "team=b", "-o", "name") == "widget.example.com/w1\n"
    assert await kubectl("get", "wg", "-l", "team!=b", "-o", "name") == "widget.example.com/w2\n"
    rows = table(await kubectl("get", "wg", "-L", "team"))
    assert rows[0] == ["NAME", "SIZE", "REPLICAS", "AGE", "TEAM"]
    assert rows[1][-1] == "b"
    assert await kubectl("label", "wg", "w1", "team-") == "widget.example.com/w1 unlabeled\n"
    assert await kubectl("label", "wg", "--all", "tier=x") == (
        "widget.example.com/w1 labeled\nwidget.example.com/w2 labeled\n")

    assert await kubectl("annotate", "wg", "w1", "note=hello world") == \
        "widget.example.com/w1 annotated\n"
    assert await kubectl("get", "wg", "w1", "-o", "jsonpath={.metadata.annotations.note}") == \
        "hello world"
    assert await kubectl("annotate", "wg", "w1", "note-") == "widget.example.com/w1 annotated\n"
    assert await kubectl("get", "wg", "w1", "-o", "jsonpath={.metadata.annotations.note}") \
        == ""
    # The labels show where describe and `--show-labels` put them.
    rows = table(await kubectl("get", "wg", "--show-labels"))
    assert rows[0][-1] == "LABELS" and rows[1][-1] == "tier=x"


async def test_version_and_raw_version(kubectl: Kubectl) -> None:
    raw = await kubectl("get", "--raw", "/version")
    assert json.loads(raw) == SERVER_VERSION
    assert raw.startswith('{\n  "major": "1",\n  "minor": "37",\n')  # indented like the real one
    out = await kubectl("version")
    lines = out.splitlines()
    assert lines[0].startswith("Client Version: v1.37.")
    assert lines[2] == f"Server Version: {SERVER_VERSION['gitVersion']}"
    assert "WARNING" not in out  # no version skew warning
    versions = json.loads(await kubectl("version", "-o", "json"))
    assert versions["serverVersion"]["gitVersion"] == SERVER_VERSION["gitVersion"]
    assert versions["serverVersion"]["minor"] == "37"
