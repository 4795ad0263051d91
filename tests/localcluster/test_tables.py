"""Server-side Table printing: JSONPath, CRD columns, the default convertor, built-in printers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hack.localcluster.errors import ApiError
from hack.localcluster.registry import BUILTIN_TYPES, PrinterColumn, ResourceType
from hack.localcluster.tables import (
    JSONPath,
    JSONPathError,
    check_include_object,
    human_duration,
    jsonpath,
    parse_time,
    to_table,
)

Json = dict[str, Any]

NOW = datetime(2025, 3, 10, 12, 0, 0, tzinfo=UTC)
BUILTIN = {(rt.group, rt.kind): rt for rt in BUILTIN_TYPES}


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, **extra: Any) -> Json:
    return {"name": name, "namespace": "default", "creationTimestamp": ago(minutes=5), **extra}


def table(group: str, kind: str, *objects: Json, **kw: Any) -> Json:
    return to_table(BUILTIN[(group, kind)], list(objects), now=NOW, **kw)


def cells(group: str, kind: str, obj: Json) -> list[Any]:
    row = table(group, kind, obj)["rows"][0]
    assert isinstance(row["cells"], list)
    return row["cells"]


def headers(t: Json) -> list[tuple[str, str, int]]:
    return [(c["name"], c["type"], c["priority"]) for c in t["columnDefinitions"]]


# --- durations and timestamps ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (timedelta(seconds=-3), "<invalid>"),
        (timedelta(seconds=-1), "0s"),
        (timedelta(0), "0s"),
        (timedelta(seconds=1), "1s"),
        (timedelta(seconds=70), "70s"),
        (timedelta(seconds=119), "119s"),
        (timedelta(seconds=120), "2m"),
        (timedelta(seconds=190), "3m10s"),
        (timedelta(minutes=9, seconds=59), "9m59s"),
        (timedelta(minutes=10, seconds=30), "10m"),
        (timedelta(minutes=70), "70m"),
        (timedelta(hours=3), "3h"),
        (timedelta(hours=3, minutes=12), "3h12m"),
        (timedelta(hours=8, minutes=30), "8h"),
        (timedelta(hours=47), "47h"),
        (timedelta(hours=49), "2d1h"),
        (timedelta(days=3), "3d"),
        (timedelta(days=8, hours=2), "8d"),
        (timedelta(days=367), "367d"),
        (timedelta(days=365 * 2, hours=25), "2y1d"),
        (timedelta(days=365 * 3), "3y"),
        (timedelta(days=365 * 8, hours=2), "8y"),
    ],
)
def test_human_duration(delta: timedelta, expected: str) -> None:
    assert human_duration(delta) == expected


def test_parse_time() -> None:
    assert parse_time("2025-03-10T12:00:00Z") == NOW
    assert parse_time("2025-03-10T14:00:00+02:00") == NOW
    assert parse_time("2025-03-10T12:00:00.123456Z") == NOW.replace(microsecond=123456)
    assert parse_time("0001-01-01T00:00:00Z") is None
    assert parse_time("2025-03-10") is None
    assert parse_time("2025-13-10T12:00:00Z") is None
    assert parse_time(None) is None


# --- JSONPath ----------------------------------------------------------------------------------

DOC: Json = {
    "metadata": {"name": "w", "labels": {"app.kubernetes.io/name": "web", "tier": "db"}},
    "spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}, {"port": 8080}]},
    "status": {
        "conditions": [
            {"type": "Available", "status": "False", "count": 1},
            {"type": "Ready", "status": "True", "count": 5},
            {"type": "Progressing", "status": "True"},
        ],
        "nested": {"deep": {"port": 9}},
    },
}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (".spec.replicas", [3]),
        ("{.spec.replicas}", [3]),
        ("$.spec.replicas", [3]),
        (".metadata.name", ["w"]),
        (".spec.missing", []),
        (".missing.deeper.still", []),
        (".spec.ports[0].port", [80]),
        (".spec.ports[-1].port", [8080]),
        (".spec.ports[*].port", [80, 443, 8080]),
        (".spec.ports[0:2].port", [80, 443]),
        (".spec.ports[::2].port", [80, 8080]),
        (".spec.ports[1:].port", [443, 8080]),
        (".spec.ports[5].port", []),
        (".spec.replicas[0]", []),
        (".status.conditions[?(@.type==\"Ready\")].status", ["True"]),
        (".status.conditions[?(@.type=='Ready')].status", ["True"]),
        (".status.conditions[?(@.status!=\"True\")].type", ["Available"]),
        (".status.conditions[?(@.count>2)].type", ["Ready"]),
        (".status.conditions[?(@.count<2)].type", ["Available"]),
        (".status.conditions[?(@.count)].type", ["Available", "Ready"]),
        (".status.conditions[?(@.type==\"Nope\")].status", []),
        (".metadata.labels['app.kubernetes.io/name']", ["web"]),
        (".metadata.labels.app\\.kubernetes\\.io/name", ["web"]),
        (".metadata.labels.*", ["web", "db"]),
        ("..port", [80, 443, 8080, 9]),
        (".status..port", [9]),
    ],
)
def test_jsonpath(expr: str, expected: list[Any]) -> None:
    assert jsonpath(DOC, expr) == expected


def test_jsonpath_comparison_of_mixed_types_fails_the_whole_path() -> None:
    assert jsonpath(DOC, '.status.conditions[?(@.count=="1")].type') == []


@pytest.mark.parametrize("expr", ["spec.replicas", ".spec[", ".a[x]", ".a[?(@.b==)]"])
def test_jsonpath_rejects_malformed_expressions(expr: str) -> None:
    with pytest.raises(JSONPathError):
        JSONPath(expr)


# --- custom resources ----------------------------------------------------------------------------


def widget_type(columns: tuple[PrinterColumn, ...] = ()) -> ResourceType:
    return ResourceType(
        group="example.com",
        version="v1",
        kind="Widget",
        plural="widgets",
        namespaced=True,
        custom=True,
        printer_columns=columns,
    )


WIDGET_COLUMNS = (
    PrinterColumn("Replicas", "integer", ".spec.replicas", "Desired replicas"),
    PrinterColumn("Ready", "string", '.status.conditions[?(@.type=="Ready")].status'),
    PrinterColumn("Ratio", "number", ".spec.ratio", priority=1),
    PrinterColumn("Paused", "boolean", ".spec.paused", priority=1),
    PrinterColumn("Ports", "string", ".spec.ports[*]", priority=1),
    PrinterColumn("Selector", "string", ".spec.selector", priority=1),
    PrinterColumn("Started", "date", ".status.startTime"),
    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
)

WIDGET: Json = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {
        "name": "w1",
        "namespace": "default",
        "creationTimestamp": ago(days=2, hours=3),
        "resourceVersion": "7",
    },
    "spec": {
        "replicas": 3.0,
        "ratio": 2,
        "paused": False,
        "ports": [80, 443],
        "selector": {"matchLabels": {"b": "2", "a": "<1>"}},
    },
    "status": {
        "startTime": ago(minutes=3, seconds=10),
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def test_crd_table_columns_and_cells() -> None:
    rt = widget_type(WIDGET_COLUMNS)
    t = to_table(rt, [WIDGET], now=NOW, list_metadata={"resourceVersion": "9"})
    assert t["kind"] == "Table"
    assert t["apiVersion"] == "meta.k8s.io/v1"
    assert t["metadata"] == {"resourceVersion": "9"}
    assert headers(t) == [
        ("Name", "string", 0),
        ("Replicas", "integer", 0),
        ("Ready", "string", 0),
        ("Ratio", "number", 1),
        ("Paused", "boolean", 1),
        ("Ports", "string", 1),
        ("Selector", "string", 1),
        ("Started", "date", 0),
        ("Age", "date", 0),
    ]
    defs = t["columnDefinitions"]
    assert defs[0]["format"] == "name"
    assert defs[1]["description"] == "Desired replicas"
    assert defs[2]["description"] == (
        "Custom resource definition column (in JSONPath format): "
        '.status.conditions[?(@.type=="Ready")].status'
    )
    row = t["rows"][0]
    assert row["cells"] == [
        "w1",
        3,
        "True",
        2.0,
        False,
        "80",
        '{"matchLabels":{"a":"\\u003c1\\u003e","b":"2"}}',
        "3m10s",
        "2d3h",
    ]
    assert isinstance(row["cells"][1], int)
    assert row["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": WIDGET["metadata"],
    }


def test_crd_cells_for_missing_and_mistyped_values() -> None:
    obj = {
        "metadata": {"name": "w2"},
        "spec": {"replicas": "three", "paused": "yes", "ratio": None},
        "status": {"startTime": "yesterday"},
    }
    row = to_table(widget_type(WIDGET_COLUMNS), [obj], now=NOW)["rows"][0]
    assert row["cells"] == ["w2", None, None, None, None, None, None, "<invalid>", None]


def test_crd_string_column_renders_json_null_as_no_value() -> None:
    rt = widget_type((PrinterColumn("Owner", "string", ".spec.owner"),))
    obj = {"metadata": {"name": "w"}, "spec": {"owner": None}}
    assert to_table(rt, [obj], now=NOW)["rows"][0]["cells"] == ["w", "<no value>"]


def test_crd_without_printer_columns_gets_name_and_age() -> None:
    t = to_table(widget_type(), [WIDGET], now=NOW)
    assert headers(t) == [("Name", "string", 0), ("Age", "date", 0)]
    assert t["columnDefinitions"][1]["description"].startswith("CreationTimestamp is a timestamp")
    assert t["rows"][0]["cells"] == ["w1", "2d3h"]


def test_include_object_modes() -> None:
    rt = widget_type()
    assert to_table(rt, [WIDGET], now=NOW, include_object="Object")["rows"][0]["object"] == WIDGET
    assert to_table(rt, [WIDGET], now=NOW, include_object="None")["rows"][0]["object"] is None
    partial = to_table(rt, [WIDGET], now=NOW, include_object="")["rows"][0]["object"]
    assert partial["kind"] == "PartialObjectMetadata"
    beta = to_table(rt, [WIDGET], now=NOW, group_version="meta.k8s.io/v1beta1")
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"
    assert beta["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"


def test_invalid_include_object_is_a_bad_request() -> None:
    with pytest.raises(ApiError) as info:
        check_include_object("Everything")
    assert info.value.code == 400
    assert info.value.message == (
        'Unable to convert to Table as requested: includeObject: Invalid value: "Everything": '
        "must be 'Metadata', 'Object', 'None', or empty"
    )
    with pytest.raises(ApiError):
        to_table(widget_type(), [], include_object="all")


def test_no_headers_and_empty_lists() -> None:
    t = to_table(widget_type(), [], now=NOW, no_headers=True)
    assert t["columnDefinitions"] is None
    assert t["rows"] == []
    assert table("", "Pod")["rows"] == []


# --- default convertor ---------------------------------------------------------------------------


def test_kinds_without_printers_get_name_and_created_at() -> None:
    role = {"metadata": {"name": "reader", "creationTimestamp": "2025-03-10T14:00:00+02:00"}}
    t = table("rbac.authorization.k8s.io", "Role", role)
    assert headers(t) == [("Name", "string", 0), ("Created At", "date", 0)]
    assert t["rows"][0]["cells"] == ["reader", "2025-03-10T12:00:00Z"]
    crd = table("apiextensions.k8s.io", "CustomResourceDefinition", {"metadata": {"name": "x"}})
    assert crd["rows"][0]["cells"] == ["x", "0001-01-01T00:00:00Z"]
    assert table("rbac.authorization.k8s.io", "ClusterRole")["rows"] is None


# --- pods --------------------------------------------------------------------------------------


def container_status(
    name: str,
    *,
    ready: bool = False,
    state: Json | None = None,
    restarts: int = 0,
    last_finished: str | None = None,
    started: bool | None = None,
) -> Json:
    status: Json = {
        "name": name,
        "ready": ready,
        "restartCount": restarts,
        "state": state if state is not None else {"running": {"startedAt": ago(minutes=4)}},
        "lastState": {},
    }
    if last_finished is not None:
        status["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": last_finished}}
    if started is not None:
        status["started"] = started
    return status


def pod(
    statuses: list[Json],
    *,
    phase: str = "Running",
    containers: int = 0,
    init: list[Json] | None = None,
    init_statuses: list[Json] | None = None,
    **status_extra: Any,
) -> Json:
    count = containers or len(statuses)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta("web-0"),
        "spec": {
            "containers": [{"name": f"c{i}", "image": "nginx"} for i in range(count)],
            "initContainers": init or [],
            "nodeName": "node-a",
        },
        "status": {
            "phase": phase,
            "podIP": "10.0.0.7",
            "podIPs": [{"ip": "10.0.0.7"}],
            "containerStatuses": statuses,
            "initContainerStatuses": init_statuses or [],
            **status_extra,
        },
    }


def test_pod_columns() -> None:
    t = table("", "Pod")
    assert headers(t) == [
        ("Name", "string", 0),
        ("Ready", "string", 0),
        ("Status", "string", 0),
        ("Restarts", "string", 0),
        ("Age", "string", 0),
        ("IP", "string", 1),
        ("Node", "string", 1),
        ("Nominated Node", "string", 1),
        ("Readiness Gates", "string", 1),
    ]


def test_running_pod() -> None:
    p = pod([container_status("c0", ready=True), container_status("c1", ready=True)])
    assert cells("", "Pod", p) == [
        "web-0",
        "2/2",
        "Running",
        "0",
        "5m",
        "10.0.0.7",
        "node-a",
        "<none>",
        "<none>",
    ]


def test_crash_looping_pod_shows_waiting_reason_and_last_restart() -> None:
    p = pod(
        [
            container_status("c0", ready=True),
            container_status(
                "c1",
                state={"waiting": {"reason": "CrashLoopBackOff"}},
                restarts=4,
                last_finished=ago(seconds=90),
            ),
        ]
    )
    assert cells("", "Pod", p)[1:4] == ["1/2", "CrashLoopBackOff", "4 (90s ago)"]


def test_pending_pod_without_statuses() -> None:
    p = pod([], phase="Pending", containers=1)
    del p["spec"]["nodeName"]
    p["status"] = {"phase": "Pending"}
    assert cells("", "Pod", p) == [
        "web-0",
        "0/1",
        "Pending",
        "0",
        "5m",
        "<none>",
        "<none>",
        "<none>",
        "<none>",
    ]


def test_container_creating_and_terminated_reasons() -> None:
    creating = pod([container_status("c0", state={"waiting": {"reason": "ContainerCreating"}})])
    assert cells("", "Pod", creating)[2] == "ContainerCreating"
    killed = pod([container_status("c0", state={"terminated": {"exitCode": 137, "signal": 9}})])
    assert cells("", "Pod", killed)[2] == "Signal:9"
    exited = pod([container_status("c0", state={"terminated": {"exitCode": 2}})])
    assert cells("", "Pod", exited)[2] == "ExitCode:2"
    oom_state = {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}
    oom = pod([container_status("c0", state=oom_state)])
    assert cells("", "Pod", oom)[2] == "OOMKilled"


def test_succeeded_and_failed_pods_carry_completed_row_condition() -> None:
    done = pod(
        [container_status("c0", state={"terminated": {"exitCode": 0, "reason": "Completed"}})],
        phase="Succeeded",
    )
    row = table("", "Pod", done)["rows"][0]
    assert row["cells"][1:3] == ["0/1", "Completed"]
    assert row["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]
    failed = pod([container_status("c0", state={"terminated": {"exitCode": 1, "reason": "Error"}})],
                 phase="Failed")
    row = table("", "Pod", failed)["rows"][0]
    assert row["cells"][2] == "Error"
    assert row["conditions"][0]["reason"] == "Failed"
    running = table("", "Pod", pod([container_status("c0", ready=True)]))["rows"][0]
    assert "conditions" not in running


def test_completed_container_next_to_running_one() -> None:
    p = pod(
        [
            container_status("c0", state={"terminated": {"exitCode": 0, "reason": "Completed"}}),
            container_status("c1", ready=True),
        ]
    )
    assert cells("", "Pod", p)[2] == "NotReady"
    p["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert cells("", "Pod", p)[2] == "Running"


def test_terminating_and_node_lost_pods() -> None:
    p = pod([container_status("c0", ready=True)])
    p["metadata"]["deletionTimestamp"] = ago(seconds=5)
    assert cells("", "Pod", p)[2] == "Terminating"
    p["status"]["reason"] = "NodeLost"
    assert cells("", "Pod", p)[2] == "Unknown"
    done = pod([], phase="Succeeded", containers=1)
    done["metadata"]["deletionTimestamp"] = ago(seconds=5)
    assert cells("", "Pod", done)[2] == "Succeeded"


def test_scheduling_gated_and_evicted_pods() -> None:
    gated = pod([], phase="Pending", containers=1,
                conditions=[{"type": "PodScheduled", "status": "False",
                             "reason": "SchedulingGated"}])
    assert cells("", "Pod", gated)[2] == "SchedulingGated"
    evicted = pod([], phase="Failed", containers=1, reason="Evicted")
    assert cells("", "Pod", evicted)[2] == "Evicted"


def test_init_container_progress() -> None:
    init = [{"name": "i0", "image": "busybox"}, {"name": "i1", "image": "busybox"}]
    waiting = {"waiting": {"reason": "PodInitializing"}}
    running = pod(
        [container_status("c0", state=waiting)],
        phase="Pending",
        init=init,
        init_statuses=[
            container_status("i0", state={"terminated": {"exitCode": 0, "reason": "Completed"}}),
            container_status("i1"),
        ],
    )
    assert cells("", "Pod", running)[1:3] == ["0/1", "Init:1/2"]
    crashing = pod(
        [container_status("c0", state=waiting)],
        phase="Pending",
        init=init,
        init_statuses=[
            container_status(
                "i0",
                state={"waiting": {"reason": "CrashLoopBackOff"}},
                restarts=3,
                last_finished=ago(minutes=1),
            ),
            container_status("i1", state=waiting),
        ],
    )
    assert cells("", "Pod", crashing)[1:4] == ["0/1", "Init:CrashLoopBackOff", "3 (60s ago)"]
    failed = pod(
        [container_status("c0", state=waiting)],
        phase="Pending",
        init=init,
        init_statuses=[
            container_status("i0", state={"terminated": {"exitCode": 1, "reason": "Error"}}),
        ],
    )
    assert cells("", "Pod", failed)[2] == "Init:Error"
    code = pod(
        [container_status("c0", state=waiting)],
        phase="Pending",
        init=init,
        init_statuses=[container_status("i0", state={"terminated": {"exitCode": 3}})],
    )
    assert cells("", "Pod", code)[2] == "Init:ExitCode:3"


def test_sidecar_init_containers_count_towards_ready() -> None:
    init = [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}]
    p = pod(
        [container_status("c0", ready=True)],
        init=init,
        init_statuses=[
            container_status(
                "proxy", ready=True, started=True, restarts=2, last_finished=ago(hours=1)
            )
        ],
        conditions=[{"type": "Initialized", "status": "True"}],
    )
    assert cells("", "Pod", p)[1:4] == ["2/2", "Running", "2 (60m ago)"]


def test_readiness_gates() -> None:
    p = pod([container_status("c0", ready=True)])
    p["spec"]["readinessGates"] = [
        {"conditionType": "example.com/lb"},
        {"conditionType": "example.com/dns"},
    ]
    p["status"]["conditions"] = [
        {"type": "example.com/lb", "status": "True"},
        {"type": "example.com/dns", "status": "False"},
    ]
    p["status"]["nominatedNodeName"] = "node-b"
    assert cells("", "Pod", p)[5:] == ["10.0.0.7", "node-a", "node-b", "1/2"]


# --- workloads ---------------------------------------------------------------------------------

TEMPLATE: Json = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "containers": [
            {"name": "web", "image": "nginx:1.27"},
            {"name": "proxy", "image": "envoy:v1"},
        ]
    },
}


def test_deployment() -> None:
    deployment = {
        "metadata": meta("web"),
        "spec": {
            "replicas": 3,
            "selector": {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
            },
            "template": TEMPLATE,
        },
        "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }
    t = table("apps", "Deployment", deployment)
    assert headers(t) == [
        ("Name", "string", 0),
        ("Ready", "string", 0),
        ("Up-to-date", "string", 0),
        ("Available", "string", 0),
        ("Age", "string", 0),
        ("Containers", "string", 1),
        ("Images", "string", 1),
        ("Selector", "string", 1),
    ]
    assert t["rows"][0]["cells"] == [
        "web",
        "2/3",
        3,
        2,
        "5m",
        "web,proxy",
        "nginx:1.27,envoy:v1",
        "app=web,tier in (a,b)",
    ]
    fresh = {"metadata": meta("new"), "spec": {"replicas": 0, "template": TEMPLATE}, "status": {}}
    assert cells("apps", "Deployment", fresh)[1:4] == ["0/0", 0, 0]


def test_replicaset_statefulset_daemonset() -> None:
    rs = {
        "metadata": meta("web-abc"),
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
        "status": {"replicas": 2, "readyReplicas": 1},
    }
    assert cells("apps", "ReplicaSet", rs) == [
        "web-abc", 2, 2, 1, "5m", "web,proxy", "nginx:1.27,envoy:v1", "app=web"
    ]
    sts = {"metadata": meta("db"), "spec": {"replicas": 3, "template": TEMPLATE},
           "status": {"readyReplicas": 3}}
    assert cells("apps", "StatefulSet", sts) == [
        "db", "3/3", "5m", "web,proxy", "nginx:1.27,envoy:v1"
    ]
    ds = {
        "metadata": meta("agent"),
        "spec": {
            "selector": {},
            "template": {"spec": {"containers": [{"name": "a", "image": "agent:1"}],
                                  "nodeSelector": {"os": "linux", "arch": "amd64"}}},
        },
        "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                   "updatedNumberScheduled": 3, "numberAvailable": 2},
    }
    assert cells("apps", "DaemonSet", ds) == [
        "agent", 3, 3, 2, 3, 2, "arch=amd64,os=linux", "5m", "a", "agent:1", "<none>"
    ]


def job(status: Json, **spec: Any) -> Json:
    return {
        "metadata": meta("migrate"),
        "spec": {
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
            "template": {"spec": {"containers": [{"name": "m", "image": "migrate:2"}]}},
            **spec,
        },
        "status": status,
    }


def test_jobs() -> None:
    t = table("batch", "Job", job({}))
    assert headers(t) == [
        ("Name", "string", 0),
        ("Status", "string", 0),
        ("Completions", "string", 0),
        ("Duration", "string", 0),
        ("Age", "string", 0),
        ("Containers", "string", 1),
        ("Images", "string", 1),
        ("Selector", "string", 1),
    ]
    complete = job(
        {
            "succeeded": 1,
            "startTime": ago(minutes=5),
            "completionTime": ago(minutes=4, seconds=18),
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True"},
                {"type": "Complete", "status": "True"},
            ],
        },
        completions=1,
        parallelism=1,
    )
    assert cells("batch", "Job", complete) == [
        "migrate",
        "Complete",
        "1/1",
        "42s",
        "5m",
        "m",
        "migrate:2",
        "batch.kubernetes.io/controller-uid=u1",
    ]
    running = job({"active": 2, "startTime": ago(minutes=3, seconds=20)}, parallelism=4)
    assert cells("batch", "Job", running)[1:4] == ["Running", "0/1 of 4", "3m20s"]
    assert cells("batch", "Job", job({}, completions=5))[1:4] == ["Running", "0/5", ""]
    suspended = job({"conditions": [{"type": "Suspended", "status": "True"}]}, completions=1)
    assert cells("batch", "Job", suspended)[1] == "Suspended"
    failed = job({"conditions": [{"type": "Failed", "status": "True"}]}, completions=1)
    assert cells("batch", "Job", failed)[1] == "Failed"
    deleting = job({}, completions=1)
    deleting["metadata"]["deletionTimestamp"] = ago(seconds=1)
    assert cells("batch", "Job", deleting)[1] == "Terminating"


# --- networking ----------------------------------------------------------------------------------


def service(spec: Json, status: Json | None = None) -> Json:
    return {"metadata": meta("web"), "spec": spec, "status": status or {}}


def test_services() -> None:
    t = table("", "Service", service({"type": "ClusterIP"}))
    assert headers(t) == [
        ("Name", "string", 0),
        ("Type", "string", 0),
        ("Cluster-IP", "string", 0),
        ("External-IP", "string", 0),
        ("Port(s)", "string", 0),
        ("Age", "string", 0),
        ("Selector", "string", 1),
    ]
    cluster_ip = service(
        {
            "type": "ClusterIP",
            "clusterIP": "10.96.0.10",
            "clusterIPs": ["10.96.0.10"],
            "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
            "selector": {"k8s-app": "dns"},
        }
    )
    assert cells("", "Service", cluster_ip) == [
        "web", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "5m", "k8s-app=dns"
    ]
    node_port = service(
        {"type": "NodePort", "clusterIPs": ["10.96.1.1"], "externalIPs": ["1.2.3.4"],
         "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}
    )
    assert cells("", "Service", node_port)[1:5] == [
        "NodePort", "10.96.1.1", "1.2.3.4", "80:30080/TCP"
    ]
    pending = service({"type": "LoadBalancer", "clusterIPs": ["10.96.2.2"],
                       "ports": [{"port": 443, "nodePort": 31443, "protocol": "TCP"}]})
    assert cells("", "Service", pending)[3] == "<pending>"
    assigned = service(
        {"type": "LoadBalancer", "clusterIPs": ["10.96.2.2"]},
        {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"},
                                      {"hostname": "a-very-long-name.elb.example.com"}]}},
    )
    assert cells("", "Service", assigned)[3:5] == [
        "203.0.113.9,a-very-long-name.elb.example.com", "<none>"
    ]
    headless = service({"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]})
    assert cells("", "Service", headless)[2:5] == ["None", "<none>", "<none>"]
    external = service({"type": "ExternalName", "externalName": "db.example.com"})
    assert cells("", "Service", external)[1:4] == ["ExternalName", "<none>", "db.example.com"]
    assert cells("", "Service", external)[6] == "<none>"


def test_endpoints_and_slices() -> None:
    endpoints = {
        "metadata": meta("web"),
        "subsets": [
            {
                "addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}, {"ip": "fd00::3"}],
                "ports": [{"port": 80}, {"port": 443}],
            }
        ],
    }
    assert cells("", "Endpoints", endpoints) == [
        "web", "10.0.0.1:80,10.0.0.2:80,[fd00::3]:80 + 3 more...", "5m"
    ]
    assert cells("", "Endpoints", {"metadata": meta("none")})[1] == "<none>"
    slice_ = {
        "metadata": meta("web-abc"),
        "addressType": "IPv4",
        "ports": [{"port": 80, "name": "http"}, {"name": "metrics"}],
        "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}],
    }
    assert cells("discovery.k8s.io", "EndpointSlice", slice_) == [
        "web-abc", "IPv4", "80,metrics", "10.0.0.1,10.0.0.2", "5m"
    ]
    empty = {"metadata": meta("e"), "addressType": "IPv4"}
    assert cells("discovery.k8s.io", "EndpointSlice", empty)[2:4] == ["<unset>", "<unset>"]


def test_ingress() -> None:
    ingress = {
        "metadata": meta("web"),
        "spec": {
            "ingressClassName": "nginx",
            "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}],
            "tls": [{"hosts": ["a.example.com"]}],
        },
        "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.1"}]}},
    }
    t = table("networking.k8s.io", "Ingress", ingress)
    assert [h[0] for h in headers(t)] == ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    assert t["rows"][0]["cells"] == [
        "web", "nginx", "a.example.com,b.example.com", "203.0.113.1", "80, 443", "5m"
    ]
    bare = {"metadata": meta("any"), "spec": {"rules": [{}]}}
    assert cells("networking.k8s.io", "Ingress", bare)[1:5] == ["<none>", "*", "", "80"]


# --- cluster and config objects ----------------------------------------------------------------


def test_nodes() -> None:
    node = {
        "metadata": {
            "name": "cp-1",
            "creationTimestamp": ago(days=11),
            "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "etcd"},
        },
        "spec": {},
        "status": {
            "conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": "True"},
            ],
            "addresses": [
                {"type": "InternalIP", "address": "172.18.0.2"},
                {"type": "Hostname", "address": "cp-1"},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.33.1",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "kernelVersion": "6.8.0",
                "containerRuntimeVersion": "containerd://2.1.1",
            },
        },
    }
    t = table("", "Node", node)
    assert [h[0] for h in headers(t)] == [
        "Name", "Status", "Roles", "Age", "Version",
        "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime",
    ]
    assert t["rows"][0]["cells"] == [
        "cp-1",
        "Ready",
        "control-plane,etcd",
        "11d",
        "v1.33.1",
        "172.18.0.2",
        "<none>",
        "Debian GNU/Linux 12 (bookworm)",
        "6.8.0",
        "containerd://2.1.1",
    ]
    cordoned = {"metadata": {"name": "w"}, "spec": {"unschedulable": True},
                "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}
    assert cells("", "Node", cordoned)[1:5] == [
        "NotReady,SchedulingDisabled", "<none>", "<unknown>", ""
    ]
    assert cells("", "Node", {"metadata": {"name": "n"}})[1] == "Unknown"
    assert cells("", "Node", {"metadata": {"name": "n"}})[7:] == ["<unknown>"] * 3


def test_namespace_configmap_secret_serviceaccount() -> None:
    ns = {"metadata": meta("prod"), "status": {"phase": "Active"}}
    assert table("", "Namespace", ns)["rows"][0]["cells"] == ["prod", "Active", "5m"]
    assert [h[0] for h in headers(table("", "Namespace"))] == ["Name", "Status", "Age"]
    cm = {"metadata": meta("conf"), "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}
    assert cells("", "ConfigMap", cm) == ["conf", 3, "5m"]
    secret = {"metadata": meta("tls"), "type": "kubernetes.io/tls",
              "data": {"tls.crt": "", "tls.key": ""}}
    assert cells("", "Secret", secret) == ["tls", "kubernetes.io/tls", 2, "5m"]
    assert cells("", "Secret", {"metadata": meta("empty")}) == ["empty", "Opaque", 0, "5m"]
    sa = {"metadata": meta("default"), "secrets": [{"name": "token"}]}
    assert cells("", "ServiceAccount", sa) == ["default", 1, "5m"]


def test_persistent_volume_claims() -> None:
    bound = {
        "metadata": meta("data"),
        "spec": {
            "storageClassName": "standard",
            "volumeName": "pvc-123",
            "volumeMode": "Filesystem",
            "resources": {"requests": {"storage": "1Gi"}},
        },
        "status": {"phase": "Bound", "capacity": {"storage": "2Gi"},
                   "accessModes": ["ReadWriteMany", "ReadWriteOnce"]},
    }
    t = table("", "PersistentVolumeClaim", bound)
    assert [h[0] for h in headers(t)] == [
        "Name", "Status", "Volume", "Capacity", "Access Modes",
        "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode",
    ]
    assert t["rows"][0]["cells"] == [
        "data", "Bound", "pvc-123", "2Gi", "RWO,RWX", "standard", "<unset>", "5m", "Filesystem"
    ]
    beta_class = {"volume.beta.kubernetes.io/storage-class": "old"}
    pending = {"metadata": meta("p", annotations=beta_class),
               "spec": {"storageClassName": "standard"}, "status": {"phase": "Pending"}}
    assert cells("", "PersistentVolumeClaim", pending) == [
        "p", "Pending", "", "", "", "old", "<unset>", "5m", "<unset>"
    ]


def test_events() -> None:
    event = {
        "metadata": meta("web-0.17f"),
        "involvedObject": {"kind": "Pod", "name": "web-0", "fieldPath": "spec.containers{web}"},
        "reason": "BackOff",
        "message": "Back-off restarting failed container\n",
        "source": {"component": "kubelet", "host": "node-a"},
        "firstTimestamp": ago(hours=1),
        "lastTimestamp": ago(seconds=30),
        "count": 12,
        "type": "Warning",
    }
    t = table("", "Event", event)
    assert headers(t) == [
        ("Last Seen", "string", 0),
        ("Type", "string", 0),
        ("Reason", "string", 0),
        ("Object", "string", 0),
        ("Subobject", "string", 1),
        ("Source", "string", 1),
        ("Message", "string", 0),
        ("First Seen", "string", 1),
        ("Count", "string", 1),
        ("Name", "string", 1),
    ]
    assert t["rows"][0]["cells"] == [
        "30s",
        "Warning",
        "BackOff",
        "pod/web-0",
        "spec.containers{web}",
        "kubelet, node-a",
        "Back-off restarting failed container",
        "60m",
        12,
        "web-0.17f",
    ]
    singleton = {
        "metadata": meta("e2"),
        "involvedObject": {"kind": "Node"},
        "reason": "Started",
        "eventTime": ago(minutes=2),
        "reportingComponent": "my-operator",
        "reportingInstance": "pod-1",
        "type": "Normal",
    }
    assert cells("", "Event", singleton)[:9] == [
        "2m", "Normal", "Started", "node", "", "my-operator, pod-1", "", "2m", 1
    ]
    series = {**singleton, "series": {"count": 7, "lastObservedTime": ago(seconds=10)}}
    assert cells("", "Event", series)[0] == "10s"
    assert cells("", "Event", series)[8] == 7


def test_events_k8s_io_events_print_like_core_ones() -> None:
    event = {
        "metadata": meta("e"),
        "regarding": {"kind": "Deployment", "name": "web"},
        "reason": "ScalingReplicaSet",
        "note": "Scaled up replica set web-abc to 3",
        "reportingController": "deployment-controller",
        "eventTime": ago(minutes=1),
        "type": "Normal",
    }
    assert cells("events.k8s.io", "Event", event)[:7] == [
        "60s",
        "Normal",
        "ScalingReplicaSet",
        "deployment/web",
        "",
        "deployment-controller",
        "Scaled up replica set web-abc to 3",
    ]


def test_leases_and_hpas() -> None:
    lease = {"metadata": meta("leader"), "spec": {"holderIdentity": "pod-1_abc"}}
    t = table("coordination.k8s.io", "Lease", lease)
    assert [h[0] for h in headers(t)] == ["Name", "Holder", "Age"]
    assert t["rows"][0]["cells"] == ["leader", "pod-1_abc", "5m"]
    assert cells("coordination.k8s.io", "Lease", {"metadata": meta("free")})[1] == ""
    hpa = {
        "metadata": meta("web"),
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "minReplicas": 2,
            "maxReplicas": 10,
            "metrics": [
                {"type": "Resource",
                 "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                        "averageUtilization": 80}}},
                {"type": "Pods",
                 "pods": {"metric": {"name": "qps"},
                          "target": {"type": "AverageValue", "averageValue": "100"}}},
                {"type": "Resource",
                 "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                           "averageValue": "1Gi"}}},
            ],
        },
        "status": {
            "currentReplicas": 3,
            "currentMetrics": [
                {"type": "Resource",
                 "resource": {"name": "cpu", "current": {"averageUtilization": 45,
                                                         "averageValue": "90m"}}},
            ],
        },
    }
    t = table("autoscaling", "HorizontalPodAutoscaler", hpa)
    assert [h[0] for h in headers(t)] == [
        "Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"
    ]
    assert t["rows"][0]["cells"] == [
        "web", "Deployment/web", "cpu: 45%/80%, <unknown>/100 + 1 more...", "2", 10, 3, "5m"
    ]
    bare = {"metadata": meta("b"), "spec": {"scaleTargetRef": {"kind": "StatefulSet", "name": "db"},
                                            "maxReplicas": 4}}
    assert cells("autoscaling", "HorizontalPodAutoscaler", bare)[1:6] == [
        "StatefulSet/db", "<none>", "<unset>", 4, 0
    ]
    v1 = {"metadata": meta("v1"), "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"},
                                           "maxReplicas": 3, "targetCPUUtilizationPercentage": 50},
          "status": {"currentCPUUtilizationPercentage": 12, "currentReplicas": 1}}
    assert cells("autoscaling", "HorizontalPodAutoscaler", v1)[2] == "cpu: 12%/50%"


def test_rbac_bindings_and_storage_classes() -> None:
    binding = {
        "metadata": meta("read"),
        "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"},
        "subjects": [
            {"kind": "User", "name": "alice"},
            {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "ci", "namespace": "tools"},
        ],
    }
    t = table("rbac.authorization.k8s.io", "RoleBinding", binding)
    assert headers(t)[3:] == [("Users", "string", 1), ("Groups", "string", 1),
                              ("ServiceAccounts", "string", 1)]
    assert t["rows"][0]["cells"] == ["read", "ClusterRole/view", "5m", "alice", "devs", "tools/ci"]
    sc = {
        "metadata": meta(
            "standard", annotations={"storageclass.kubernetes.io/is-default-class": "true"}
        ),
        "provisioner": "rancher.io/local-path",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    assert cells("storage.k8s.io", "StorageClass", sc) == [
        "standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", False, "5m"
    ]


def test_rows_carry_partial_object_metadata_by_default() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("c"), "data": {"k": "v"}}
    t = table("", "ConfigMap", obj, list_metadata={"resourceVersion": "12", "continue": "abc"})
    assert t["metadata"] == {"resourceVersion": "12", "continue": "abc"}
    assert t["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj["metadata"],
    }
    assert t["rows"][0]["object"]["metadata"] is not obj["metadata"]
