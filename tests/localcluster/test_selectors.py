"""Label and field selectors: parsing, the apiserver's error messages, and matching."""

from __future__ import annotations

from typing import Any

import pytest

from hack.localcluster.errors import ApiError
from hack.localcluster.registry import ResourceType
from hack.localcluster.selectors import (
    FieldSelector,
    LabelSelector,
    go_format_float,
    go_quote,
    label_selector_string,
)

Json = dict[str, Any]

KEY_REGEX = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    f"alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    f"validation is '{KEY_REGEX}')"
)
VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def parse_error(text: str) -> str:
    with pytest.raises(ApiError) as info:
        LabelSelector.parse(text)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    return info.value.message


# --- label selectors: forms ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("app=web", "app=web"),
        ("app==web", "app==web"),
        ("app!=web", "app!=web"),
        ("app in (web,api)", "app in (api,web)"),
        ("app notin (web)", "app notin (web)"),
        ("app", "app"),
        ("!app", "!app"),
        ("tier=db, app", "app,tier=db"),
        ("x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"),
        ("example.com/role=worker", "example.com/role=worker"),
        ("a=", "a="),
        ("a in (in, notin)", "a in (in,notin)"),
        ("replicas>2", "replicas>2"),
        ("replicas<10", "replicas<10"),
        ("", ""),
        ("   ", ""),
    ],
)
def test_label_selector_forms_parse_to_canonical_string(text: str, canonical: str) -> None:
    assert str(LabelSelector.parse(text)) == canonical


def test_empty_selector_matches_everything() -> None:
    sel = LabelSelector.parse("")
    assert sel.empty
    assert sel.matches(None)
    assert sel.matches({"a": "b"})
    assert not LabelSelector.parse("a").empty


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app=web", {"app": "api"}, False),
        ("app=web", {}, False),
        ("app==web", {"app": "web"}, True),
        ("app!=web", {"app": "api"}, True),
        ("app!=web", {}, True),
        ("app!=web", {"app": "web"}, False),
        ("app in (web,api)", {"app": "api"}, True),
        ("app in (web,api)", {"app": "db"}, False),
        ("app in (web,api)", {}, False),
        ("app notin (web)", {}, True),
        ("app notin (web)", {"app": "web"}, False),
        ("app", {"app": ""}, True),
        ("app", {"other": "x"}, False),
        ("!app", {}, True),
        ("!app", {"app": "x"}, False),
        ("a=", {"a": ""}, True),
        ("a=", {}, False),
        ("app=web,tier=db", {"app": "web", "tier": "db"}, True),
        ("app=web,tier=db", {"app": "web"}, False),
        ("n>2", {"n": "3"}, True),
        ("n>2", {"n": "2"}, False),
        ("n>2", {"n": "x"}, False),
        ("n<2", {"n": "-5"}, True),
        ("n<2", {}, False),
    ],
)
def test_label_selector_matching(text: str, labels: dict[str, str], expected: bool) -> None:
    assert LabelSelector.parse(text).matches(labels) is expected


def test_requires_exact_match() -> None:
    sel = LabelSelector.parse("app=web,tier in (db),x in (a,b)")
    assert sel.requires_exact_match("app") == "web"
    assert sel.requires_exact_match("tier") == "db"
    assert sel.requires_exact_match("x") is None
    assert sel.requires_exact_match("missing") is None


# --- label selectors: errors -----------------------------------------------------------------


def test_syntax_errors_carry_the_parser_messages() -> None:
    assert parse_error("a b") == (
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
    )
    assert parse_error("a=b c") == "found 'c', expected: ',' or 'end of string'"
    assert parse_error("a,") == "found '', expected: identifier after ','"
    assert parse_error(",a") == "found ',', expected: !, identifier, or 'end of string'"
    assert parse_error("a in b") == "unable to parse requirement: found 'b' expected: '('"
    assert parse_error("a in (b") == "unable to parse requirement: found '', expected: ',' or ')'"
    assert parse_error("a in (b c)") == (
        "unable to parse requirement: found 'c', expected: ',' or ')'"
    )
    assert parse_error("a in (=)") == (
        "unable to parse requirement: found '=', expected: ',', ')' or identifier"
    )
    assert parse_error("a=(") == "unable to parse requirement: found '(', expected: identifier"
    assert parse_error("!!a") == "unable to parse requirement: found '!', expected: identifier"
    assert parse_error("!=a") == "found '!=', expected: !, identifier, or 'end of string'"
    assert parse_error("!a=b") == "found '=', expected: ',' or 'end of string'"


def test_invalid_keys_report_the_nil_field_path() -> None:
    assert parse_error("a/b/c=d") == (
        'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key '
        f"{KEY_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )
    assert parse_error("-a") == (
        f'unable to parse requirement: <nil>: Invalid value: "-a": name part {KEY_MSG}'
    )
    assert parse_error("/a") == (
        'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'
    )
    assert parse_error("Example.com/a") == (
        'unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a '
        "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
        "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    long_key = "k" * 64
    assert parse_error(long_key) == (
        f'unable to parse requirement: <nil>: Invalid value: "{long_key}": '
        "name part must be no more than 63 bytes"
    )
    assert parse_error("a/") == (
        'unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; '
        f"name part {KEY_MSG}"
    )


def test_invalid_values_report_the_values_path() -> None:
    assert parse_error("a=-x") == (
        f'unable to parse requirement: values[0][a]: Invalid value: "-x": {VALUE_MSG}'
    )
    assert parse_error("a in (ok,-bad)") == (
        f'unable to parse requirement: values[0][a]: Invalid value: "-bad": {VALUE_MSG}'
    )
    long_value = "v" * 64
    assert parse_error(f"a={long_value}") == (
        f'unable to parse requirement: values[0][a]: Invalid value: "{long_value}": '
        "must be no more than 63 bytes"
    )
    assert parse_error("n>x") == (
        'unable to parse requirement: values[0]: Invalid value: "x": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    )


def test_go_quote_escapes_like_strconv() -> None:
    assert go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote("tab\there") == '"tab\\there"'
    assert go_quote("\x01") == '"\\x01"'
    assert go_quote("é") == '"é"'


def test_go_format_float() -> None:
    assert go_format_float(1.0) == "1"
    assert go_format_float(1.5) == "1.5"
    assert go_format_float(123456.0) == "123456"
    assert go_format_float(1e6) == "1e+06"
    assert go_format_float(0.0001) == "0.0001"
    assert go_format_float(0.00001) == "1e-05"


# --- metav1.LabelSelector ----------------------------------------------------------------------


def test_label_selector_string_sorts_requirements_and_values() -> None:
    selector = {
        "matchLabels": {"tier": "db", "app": "web"},
        "matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["b", "a"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "owner", "operator": "Exists"},
        ],
    }
    assert label_selector_string(selector) == (
        "app=web,!canary,env notin (prod),owner,tier=db,zone in (a,b)"
    )


def test_label_selector_string_of_empty_and_nil() -> None:
    assert label_selector_string({}) == ""
    assert label_selector_string({"matchLabels": {}}) == ""
    assert label_selector_string(None) == ""


def test_from_label_selector_matching() -> None:
    nothing = LabelSelector.from_label_selector(None)
    assert not nothing.matches({"a": "b"})
    assert not nothing.empty
    everything = LabelSelector.from_label_selector({})
    assert everything.matches({"a": "b"})
    sel = LabelSelector.from_label_selector(
        {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "x", "operator": "Exists"}]}
    )
    assert sel.matches({"app": "web", "x": ""})
    assert not sel.matches({"app": "web"})


def test_label_selector_string_errors() -> None:
    with pytest.raises(ApiError) as info:
        label_selector_string({"matchExpressions": [{"key": "a", "operator": "In"}]})
    assert info.value.message == (
        "values: Invalid value: []string(nil): "
        "for 'in', 'notin' operators, values set can't be empty"
    )
    with pytest.raises(ApiError) as info:
        label_selector_string({"matchExpressions": [{"key": "a", "operator": "Has"}]})
    assert info.value.message == '"Has" is not a valid label selector operator'
    with pytest.raises(ApiError) as info:
        label_selector_string(
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}
        )
    assert info.value.message == (
        'values: Invalid value: []string{"x"}: '
        "values set must be empty for exists and does not exist"
    )
    with pytest.raises(ApiError) as info:
        label_selector_string({"matchLabels": {"-bad": "x"}})
    assert info.value.message == f'key: Invalid value: "-bad": name part {KEY_MSG}'


# --- field selectors ---------------------------------------------------------------------------


def field_error(text: str, kind: str, group: str = "", **kw: Any) -> str:
    with pytest.raises(ApiError) as info:
        FieldSelector.parse(text, kind, group, **kw)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    return info.value.message


POD: Json = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "prod"},
    "spec": {
        "nodeName": "node-a",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "web",
    },
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.5",
        "podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}],
    },
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metadata.name=web-0", True),
        ("metadata.name==web-0", True),
        ("metadata.name!=web-0", False),
        ("metadata.namespace=prod", True),
        ("spec.nodeName=node-a", True),
        ("spec.nodeName=", False),
        ("spec.nodeName!=", True),
        ("spec.host=node-a", True),
        ("spec.restartPolicy=Always", True),
        ("spec.schedulerName=default-scheduler", True),
        ("spec.serviceAccountName=web", True),
        ("spec.hostNetwork=false", True),
        ("status.phase=Running", True),
        ("status.phase!=Running", False),
        ("status.podIP=10.0.0.5", True),
        ("status.podIP=fd00::5", False),
        ("status.nominatedNodeName=", True),
        ("status.podIPs=", True),
        ("status.phase=Running,spec.nodeName=node-a", True),
        ("status.phase=Running,spec.nodeName=node-b", False),
        ("", True),
    ],
)
def test_pod_field_selectors(text: str, expected: bool) -> None:
    assert FieldSelector.parse(text, "Pod", "").matches(POD) is expected


def test_host_network_reads_spec() -> None:
    pod = {**POD, "spec": {**POD["spec"], "hostNetwork": True}}
    assert FieldSelector.parse("spec.hostNetwork=true", "Pod", "").matches(pod)


def test_pod_ip_falls_back_to_singular_field() -> None:
    pod = {**POD, "status": {"podIP": "10.1.1.1"}}
    assert FieldSelector.parse("status.podIP=10.1.1.1", "Pod", "").matches(pod)


def test_unsupported_fields_are_rejected_with_each_kinds_message() -> None:
    assert field_error("foo=bar", "Pod") == "field label not supported: foo"
    assert field_error("metadata.namespace=x", "Node") == (
        "field label not supported: metadata.namespace"
    )
    assert field_error("spec.replicas=1", "Deployment", "apps") == (
        '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
    # apps/v1 registers no conversion for ReplicaSet, so status.replicas is refused.
    assert field_error("status.replicas=0", "ReplicaSet", "apps") == (
        '"status.replicas" is not a known field selector: only "metadata.name", '
        '"metadata.namespace"'
    )
    assert field_error("status.active=1", "Job", "batch") == (
        'field label "status.active" not supported for batchv1.Job'
    )
    assert field_error("spec.color=red", "Widget", "example.com") == (
        "field label not supported: spec.color"
    )


def test_first_failure_in_sorted_term_order_is_reported() -> None:
    assert field_error("zzz=1,aaa=2", "Pod") == "field label not supported: aaa"
    assert field_error("b=1,a", "Pod") == "invalid selector: 'b=1,a'; can't understand 'a'"


def test_field_selector_syntax_and_escaping() -> None:
    assert field_error("metadata.name", "Pod") == (
        "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
    )
    assert field_error("metadata.name=a=b", "Pod") == (
        "invalid field selector: unescaped character in value: 61"
    )
    assert field_error("metadata.name=a\\x", "Pod") == (
        "invalid field selector: invalid escape sequence: \\x"
    )
    assert field_error("metadata.name=a\\", "Pod") == (
        "invalid field selector: invalid escape sequence: \\"
    )
    sel = FieldSelector.parse("metadata.name=a\\,b\\=c", "ConfigMap", "")
    assert sel.requires_exact_match("metadata.name") == "a,b=c"
    assert sel.matches({"metadata": {"name": "a,b=c", "namespace": "x"}})


@pytest.mark.parametrize(
    ("kind", "group", "text", "obj", "expected"),
    [
        ("Node", "", "spec.unschedulable=true", {"spec": {"unschedulable": True}}, True),
        ("Node", "", "spec.unschedulable=false", {"spec": {}}, True),
        ("Namespace", "", "status.phase=Active", {"status": {"phase": "Active"}}, True),
        ("Namespace", "", "status.phase=Terminating", {"status": {"phase": "Active"}}, False),
        ("Secret", "", "type=kubernetes.io/tls", {"type": "kubernetes.io/tls"}, True),
        ("Secret", "", "type!=Opaque", {"type": "Opaque"}, False),
        ("Service", "", "spec.type=ClusterIP", {"spec": {"type": "ClusterIP"}}, True),
        ("Job", "batch", "status.successful=2", {"status": {"succeeded": 2}}, True),
        ("Job", "batch", "status.successful=0", {"status": {}}, True),
        ("ConfigMap", "", "metadata.namespace=ns", {}, True),
    ],
)
def test_kind_specific_fields(
    kind: str, group: str, text: str, obj: Json, expected: bool
) -> None:
    full = {"metadata": {"name": "x", "namespace": "ns"}, **obj}
    assert FieldSelector.parse(text, kind, group).matches(full) is expected


EVENT: Json = {
    "metadata": {"name": "web-0.17a", "namespace": "prod"},
    "involvedObject": {
        "kind": "Pod",
        "namespace": "prod",
        "name": "web-0",
        "uid": "u-1",
        "apiVersion": "v1",
        "resourceVersion": "42",
        "fieldPath": "spec.containers{web}",
    },
    "reason": "BackOff",
    "type": "Warning",
    "source": {"component": "kubelet", "host": "node-a"},
    "reportingComponent": "kubelet",
}


@pytest.mark.parametrize(
    "text",
    [
        "involvedObject.kind=Pod",
        "involvedObject.namespace=prod",
        "involvedObject.name=web-0",
        "involvedObject.uid=u-1",
        "involvedObject.apiVersion=v1",
        "involvedObject.resourceVersion=42",
        "involvedObject.fieldPath=spec.containers{web}",
        "reason=BackOff",
        "reportingComponent=kubelet",
        "source=kubelet",
        "type=Warning",
        "metadata.name=web-0.17a",
    ],
)
def test_core_event_fields(text: str) -> None:
    assert FieldSelector.parse(text, "Event", "").matches(EVENT)


def test_event_source_falls_back_to_reporting_controller() -> None:
    event = {**EVENT, "source": {}, "reportingComponent": "my-operator"}
    assert FieldSelector.parse("source=my-operator", "Event", "").matches(event)


def test_events_k8s_io_labels_map_to_core_fields() -> None:
    event = {
        "metadata": {"name": "e", "namespace": "prod"},
        "regarding": {"kind": "Pod", "name": "web-0"},
        "reportingController": "ctl",
        "type": "Normal",
        "reason": "Created",
    }
    sel = FieldSelector.parse(
        "regarding.name=web-0,reportingController=ctl", "Event", "events.k8s.io"
    )
    assert sel.matches(event)
    assert field_error("involvedObject.name=x", "Event", "events.k8s.io") == (
        "field label not supported: involvedObject.name"
    )


def test_custom_resources_with_selectable_fields() -> None:
    widget = {
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"color": "red", "size": 3, "shiny": True, "nested": {"a": 1}},
    }
    sel = FieldSelector.parse(
        "spec.color=red,spec.size=3,spec.shiny=true",
        "Widget",
        "example.com",
        selectable_fields=[".spec.color", ".spec.size", ".spec.shiny"],
    )
    assert sel.matches(widget)
    assert not FieldSelector.parse(
        "spec.color=blue", "Widget", "example.com", selectable_fields=[".spec.color"]
    ).matches(widget)
    assert FieldSelector.parse(
        "spec.missing=", "Widget", "example.com", selectable_fields=[".spec.missing"]
    ).matches(widget)
    assert FieldSelector.parse("metadata.namespace=ns", "Widget", "example.com").matches(widget)


def test_cluster_scoped_custom_resources_refuse_namespace() -> None:
    assert field_error("metadata.namespace=x", "Gadget", "example.com", namespaced=False) == (
        "field label not supported: metadata.namespace"
    )


def test_for_resource_reads_the_resource_type() -> None:
    rt = ResourceType(
        group="example.com",
        version="v1",
        kind="Gadget",
        plural="gadgets",
        namespaced=False,
        custom=True,
        extra={"selectable_fields": [".spec.color"]},
    )
    sel = FieldSelector.for_resource("spec.color=red", rt)
    assert sel.matches({"metadata": {"name": "g"}, "spec": {"color": "red"}})
    with pytest.raises(ApiError) as info:
        FieldSelector.for_resource("metadata.namespace=x", rt)
    assert info.value.message == "field label not supported: metadata.namespace"


def test_field_selector_string_and_empty() -> None:
    assert FieldSelector.parse("", "Pod", "").empty
    sel = FieldSelector.parse("status.phase!=Running,metadata.name==a", "Pod", "")
    assert str(sel) == "metadata.name=a,status.phase!=Running"
    assert not sel.empty


def test_dotless_groups_are_built_in_even_outside_the_registry() -> None:
    rc = {"metadata": {"name": "rc", "namespace": "ns"}, "status": {"replicas": 2}}
    assert FieldSelector.parse("status.replicas=2", "ReplicationController", "").matches(rc)
    assert field_error("spec.x=1", "ControllerRevision", "apps") == (
        '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
