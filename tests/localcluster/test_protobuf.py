"""Protobuf request bodies: the wire format, the message table, and kubectl's typed clients.

kubectl's generators (`kubectl create namespace|deployment|secret ...`) send built-in kinds as
`application/vnd.kubernetes.protobuf`. The kubectl tests check, per generator, that
  1. the body kubectl sent decodes to exactly what `--dry-run=client -o json` prints, and
  2. the stored object equals a twin created from that JSON through the JSON path.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hack.localcluster import tls
from hack.localcluster.errors import ApiError
from hack.localcluster.protobuf import decode_body, decode_message, decode_object, message_for
from hack.localcluster.protobuf.messages import KINDS, MESSAGES, TABLE
from hack.localcluster.protobuf.schema import SchemaError, parse_message, parse_table
from hack.localcluster.protobuf.wire import (
    FIXED32,
    FIXED64,
    START_GROUP,
    WireError,
    build_envelope,
    bytes_field,
    encode_varint,
    iter_records,
    key,
    parse_envelope,
    read_varint,
    to_signed,
    varint_field,
)
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl

Json = dict[str, Any]


# --- wire format ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31 - 1, 2**63 - 1])
def test_varint_round_trip(value: int) -> None:
    encoded = encode_varint(value)
    assert read_varint(encoded, 0) == (value, len(encoded))


def test_negative_numbers_are_ten_byte_varints() -> None:
    encoded = encode_varint(-1)
    assert len(encoded) == 10
    raw, _ = read_varint(encoded, 0)
    assert to_signed(raw) == -1
    assert to_signed(raw, 32) == -1
    assert to_signed(read_varint(encode_varint(-5), 0)[0], 32) == -5


def test_truncated_varint_is_an_error() -> None:
    with pytest.raises(WireError):
        read_varint(b"\x80\x80", 0)


def test_records_of_every_wire_type() -> None:
    group = key(9, START_GROUP) + varint_field(1, 5) + key(9, 4)
    data = (varint_field(1, 150) + bytes_field(2, "hi")
            + key(3, FIXED64) + (7).to_bytes(8, "little")
            + key(4, FIXED32) + (9).to_bytes(4, "little") + group + varint_field(5, 1))
    records = [(r.number, r.wire_type, r.value) for r in iter_records(data)]
    assert records == [(1, 0, 150), (2, 2, b"hi"), (3, 1, 7), (4, 5, 9), (5, 0, 1)]


def test_length_past_the_end_is_an_error() -> None:
    with pytest.raises(WireError, match="runs past"):
        list(iter_records(b"\x12\x05ab"))


def test_envelope_round_trip() -> None:
    body = build_envelope("apps/v1", "Deployment", b"\x0a\x00")
    assert body.startswith(b"k8s\x00")
    envelope = parse_envelope(body)
    assert (envelope.api_version, envelope.kind, envelope.raw) == ("apps/v1", "Deployment",
                                                                   b"\x0a\x00")
    with pytest.raises(WireError, match="magic"):
        parse_envelope(b'{"kind": "Deployment"}')


# --- the message table ---------------------------------------------------------------------------


def test_table_parses_and_every_kind_has_a_message() -> None:
    assert parse_table(TABLE).keys() == MESSAGES.keys()
    for name in KINDS.values():
        assert name in MESSAGES
    assert message_for("apps/v1", "DeleteOptions") == "meta.DeleteOptions"
    assert message_for("example.com/v1", "Widget") is None


@pytest.mark.parametrize("spec", ["1 name", "x name string", "1 a string; 1 b string",
                                  "1 a []core.Thing^", "1 a string^"])
def test_malformed_table_entries(spec: str) -> None:
    with pytest.raises(SchemaError):
        parse_message("test.Bad", spec)


def test_unknown_message_reference() -> None:
    with pytest.raises(SchemaError, match="unknown message"):
        parse_table({"test.A": "1 b test.Missing"})


# --- decoding hand-built messages ----------------------------------------------------------------


def _msg(*parts: bytes) -> bytes:
    return b"".join(parts)


def _entry(number: int, k: str, value: bytes) -> bytes:
    """A map entry: {1: key, 2: value}, value already encoded as field 2."""
    return bytes_field(number, bytes_field(1, k) + value)


def _meta(name: str, **labels: str) -> bytes:
    # gogo writes every non-pointer scalar, zero or not: these must not appear in the JSON.
    zeros = _msg(bytes_field(2, ""), bytes_field(3, ""), bytes_field(6, ""), varint_field(7, 0),
                 bytes_field(8, b""))
    return _msg(bytes_field(1, name), zeros,
                *(_entry(11, k, bytes_field(2, v)) for k, v in labels.items()))


def _int_or_string(value: int | str) -> bytes:
    if isinstance(value, str):
        return _msg(varint_field(1, 1), varint_field(2, 0), bytes_field(3, value))
    return _msg(varint_field(1, 0), varint_field(2, value), bytes_field(3, ""))


def test_zero_scalars_drop_unless_pointer_or_required() -> None:
    spec = _msg(varint_field(1, 0), varint_field(5, 0), varint_field(7, 0),
                bytes_field(4, bytes_field(1, "")))
    raw = _msg(bytes_field(1, _meta("web", app="web")), bytes_field(2, spec), bytes_field(3, b""))
    assert decode_body(build_envelope("apps/v1", "Deployment", raw)) == {
        "kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        # replicas is *int32: a zero that was set stays; minReadySeconds/paused are omitempty;
        # selector is a pointer without omitempty, so unset it is null.
        "spec": {"replicas": 0, "strategy": {}, "selector": None},
        "status": {},
    }


def test_required_zero_fields_and_int_or_string() -> None:
    port = _msg(bytes_field(1, ""), bytes_field(2, "TCP"), varint_field(3, 0),
                bytes_field(4, _int_or_string("http")), varint_field(5, 0))
    port2 = _msg(varint_field(3, 443), bytes_field(4, _int_or_string(8443)))
    spec = _msg(bytes_field(1, port), bytes_field(1, port2), _entry(2, "app", bytes_field(2, "x")))
    obj = decode_message(spec, "core.ServiceSpec")
    assert obj == {
        "ports": [{"protocol": "TCP", "port": 0, "targetPort": "http"},
                  {"port": 443, "targetPort": 8443}],
        "selector": {"app": "x"},
    }


def test_bytes_quantities_and_times() -> None:
    secret = _msg(bytes_field(1, _meta("s")), _entry(2, "k", bytes_field(2, b"\x00\xffv")),
                  bytes_field(3, "Opaque"))
    assert decode_message(secret, "core.Secret") == {
        "metadata": {"name": "s"}, "data": {"k": base64.b64encode(b"\x00\xffv").decode()},
        "type": "Opaque"}
    quota = _entry(1, "cpu", bytes_field(2, bytes_field(1, "500m")))
    assert decode_message(quota, "core.ResourceQuotaSpec") == {"hard": {"cpu": "500m"}}
    stamp = _msg(varint_field(1, 1_700_000_000), varint_field(2, 5_000))
    meta = _msg(bytes_field(1, "x"), bytes_field(8, stamp), bytes_field(9, b""))
    assert decode_message(meta, "meta.ObjectMeta") == {
        "name": "x", "creationTimestamp": "2023-11-14T22:13:20Z"}


def test_inline_messages_merge_into_the_parent() -> None:
    probe = _msg(bytes_field(1, bytes_field(2, _msg(bytes_field(1, "/healthz"),
                                                     bytes_field(2, _int_or_string(8080))))),
                 varint_field(2, 3))
    assert decode_message(probe, "core.Probe") == {
        "httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 3}
    volume = _msg(bytes_field(1, "cfg"),
                  bytes_field(2, bytes_field(19, _msg(bytes_field(1, bytes_field(1, "cm")),
                                                      varint_field(3, 0o644)))))
    assert decode_message(volume, "core.Volume") == {
        "name": "cfg", "configMap": {"name": "cm", "defaultMode": 0o644}}


def test_packed_and_unpacked_repeated_integers() -> None:
    packed = bytes_field(4, encode_varint(1000) + encode_varint(2000))
    unpacked = varint_field(4, 3000)
    assert decode_message(packed + unpacked, "core.PodSecurityContext") == {
        "supplementalGroups": [1000, 2000, 3000]}
    negative = varint_field(2, -1 & 0xFFFFFFFFFFFFFFFF)
    assert decode_message(negative, "core.PodSecurityContext") == {"runAsUser": -1}


def test_fields_without_omitempty_are_null_when_absent() -> None:
    # ClusterRole.rules is `json:"rules"`: an aggregated role sends none, JSON says null.
    raw = _msg(bytes_field(1, _meta("agg")),
               bytes_field(3, bytes_field(1, _entry(1, "pb", bytes_field(2, "yes")))))
    assert decode_message(raw, "rbac.ClusterRole") == {
        "metadata": {"name": "agg"}, "rules": None,
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"pb": "yes"}}]}}


def test_unknown_fields_are_skipped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    raw = _msg(bytes_field(1, _meta("foo")), bytes_field(99, b"\x08\x01"), varint_field(98, 7))
    with caplog.at_level(logging.WARNING, logger="hack.localcluster.protobuf.decode"):
        obj = decode_object(build_envelope("v1", "Namespace", raw))
    assert obj == {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "foo"}}
    assert "unknown field 99 of core.Namespace" in caplog.text
    assert "unknown field 98 of core.Namespace" in caplog.text


def test_delete_options() -> None:
    raw = _msg(varint_field(1, 0), bytes_field(2, bytes_field(1, "uid-1")),
               bytes_field(4, "Foreground"), bytes_field(5, "All"))
    assert decode_body(build_envelope("v1", "DeleteOptions", raw)) == {
        "kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
        "preconditions": {"uid": "uid-1"}, "propagationPolicy": "Foreground", "dryRun": ["All"]}


def test_unknown_kinds_are_unsupported_and_garbage_is_a_bad_request() -> None:
    with pytest.raises(ApiError) as err:
        decode_body(build_envelope("example.com/v1", "Widget", b""))
    assert err.value.code == 415
    with pytest.raises(ApiError) as err:
        decode_body(build_envelope("v1", "Namespace", b"\x0a\x05ab"))
    assert err.value.code == 400
    with pytest.raises(ApiError) as err:
        decode_body(build_envelope("v1", "Namespace", varint_field(1, 3)))
    assert err.value.code == 400


# --- kubectl -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """A `kubectl create` generator call and the object it makes."""

    args: tuple[str, ...]
    resource: str
    name: str
    #: group, version, plural: checked against the registry (some kinds are not served).
    gvr: tuple[str, str, str]


def _case(args: str, resource: str, name: str, gvr: tuple[str, str, str]) -> Case:
    """`args` separated by `|` (values may hold spaces)."""
    return Case(tuple(args.split("|")), resource, name, gvr)


CASES: dict[str, Case] = {
    "namespace": _case("namespace|pb-ns", "namespaces", "pb-ns", ("", "v1", "namespaces")),
    "configmap": _case("configmap|cm|--from-literal=a=b|--from-file=bin=$FILES/bin.dat"
                       "|--from-file=$FILES/text.txt", "configmaps", "cm",
                       ("", "v1", "configmaps")),
    "secret-generic": _case("secret|generic|s|--from-literal=k=v|--type=Opaque", "secrets", "s",
                            ("", "v1", "secrets")),
    "secret-tls": _case("secret|tls|t|--cert=$FILES/tls.crt|--key=$FILES/tls.key", "secrets",
                        "t", ("", "v1", "secrets")),
    "secret-docker-registry": _case(
        "secret|docker-registry|d|--docker-username=u|--docker-password=p"
        "|--docker-server=registry.example.com|--docker-email=e@example.com", "secrets", "d",
        ("", "v1", "secrets")),
    "serviceaccount": _case("serviceaccount|sa", "serviceaccounts", "sa",
                            ("", "v1", "serviceaccounts")),
    "deployment": _case("deployment|web|--image=nginx|--replicas=0|--port=80", "deployments",
                        "web", ("apps", "v1", "deployments")),
    "deployment-command": _case("deployment|cmd|--image=busybox|--|sleep|3600", "deployments",
                                "cmd", ("apps", "v1", "deployments")),
    "job": _case("job|j|--image=busybox|--|echo|hi", "jobs", "j", ("batch", "v1", "jobs")),
    "cronjob": _case("cronjob|cj|--image=busybox|--schedule=*/5 * * * *|--restart=OnFailure"
                     "|--|echo|hi", "cronjobs", "cj", ("batch", "v1", "cronjobs")),
    "service-clusterip": _case("service|clusterip|s1|--tcp=80:8080|--tcp=443", "services", "s1",
                               ("", "v1", "services")),
    "service-headless": _case("service|clusterip|s1h|--clusterip=None", "services", "s1h",
                              ("", "v1", "services")),
    "service-nodeport": _case("service|nodeport|s2|--tcp=80:8080|--node-port=30080", "services",
                              "s2", ("", "v1", "services")),
    "service-loadbalancer": _case("service|loadbalancer|s3|--tcp=80:8080", "services", "s3",
                                  ("", "v1", "services")),
    "service-externalname": _case("service|externalname|s4|--external-name=example.com",
                                  "services", "s4", ("", "v1", "services")),
    "role": _case("role|r|--verb=get,list|--resource=pods,deployments.apps|--resource-name=x",
                  "roles", "r", ("rbac.authorization.k8s.io", "v1", "roles")),
    "rolebinding": _case("rolebinding|rb|--role=r|--user=u|--group=g|--serviceaccount=default:sa",
                         "rolebindings", "rb", ("rbac.authorization.k8s.io", "v1", "rolebindings")),
    "clusterrole": _case("clusterrole|pb-cr|--verb=get|--resource=pods|--non-resource-url=/logs/*"
                         , "clusterroles", "pb-cr",
                         ("rbac.authorization.k8s.io", "v1", "clusterroles")),
    "clusterrole-aggregated": _case("clusterrole|pb-agg|--aggregation-rule=pb=yes",
                                    "clusterroles", "pb-agg",
                                    ("rbac.authorization.k8s.io", "v1", "clusterroles")),
    "clusterrolebinding": _case("clusterrolebinding|pb-crb|--clusterrole=view|--user=u"
                                "|--serviceaccount=default:sa", "clusterrolebindings", "pb-crb",
                                ("rbac.authorization.k8s.io", "v1", "clusterrolebindings")),
    "priorityclass": _case("priorityclass|pb-pc|--value=1000|--description=tests"
                           "|--preemption-policy=Never", "priorityclasses", "pb-pc",
                           ("scheduling.k8s.io", "v1", "priorityclasses")),
    "poddisruptionbudget": _case("poddisruptionbudget|pdb|--selector=app=x|--min-available=50%",
                                 "poddisruptionbudgets", "pdb",
                                 ("policy", "v1", "poddisruptionbudgets")),
    "poddisruptionbudget-max": _case("poddisruptionbudget|pdb2|--selector=app=x"
                                     "|--max-unavailable=1", "poddisruptionbudgets", "pdb2",
                                     ("policy", "v1", "poddisruptionbudgets")),
    "quota": _case("quota|q|--hard=cpu=1,memory=1G,pods=2|--scopes=BestEffort",
                   "resourcequotas", "q", ("", "v1", "resourcequotas")),
    "ingress": _case("ingress|ing|--rule=foo.com/bar=svc1:8080,tls=my-cert|--class=default"
                     "|--default-backend=svc:http|--annotation=a=b", "ingresses", "ing",
                     ("networking.k8s.io", "v1", "ingresses")),
}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    directory = tmp_path / "files"
    directory.mkdir()
    certs = tls.generate()
    (directory / "tls.crt").write_bytes(certs.cert_pem)
    (directory / "tls.key").write_bytes(certs.key_pem)
    (directory / "bin.dat").write_bytes(bytes(range(256)))
    (directory / "text.txt").write_text("hello\n")
    return directory


def _with_flags(args: tuple[str, ...], *flags: str) -> list[str]:
    """Insert flags before a `--` command, where kubectl still reads them as flags."""
    cut = args.index("--") if "--" in args else len(args)
    return [*args[:cut], *flags, *args[cut:]]


def _request_bodies(stderr: str) -> list[bytes]:
    """The request bodies kubectl logged at -v=10 as hex dumps."""
    bodies: list[bytes] = []
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if '"Request Body" body=<' not in line:
            continue
        data = bytearray()
        for dump in lines[i + 1:]:
            match = re.match(r"\s*[0-9a-f]{8}\s+((?:[0-9a-f]{2}\s+)+)\s*\|", dump)
            if not match:
                break
            data += bytes.fromhex(match.group(1).replace(" ", ""))
        bodies.append(bytes(data))
    return bodies


def _comparable(obj: Json, sent: Json) -> Json:
    """A stored object without what differs between two creations from the same body."""
    # The object's uid also shows up in generated labels and selectors (a Job's controller-uid).
    obj = json.loads(json.dumps(obj).replace(obj["metadata"]["uid"], "<uid>"))
    meta = obj["metadata"]
    for field in ("uid", "resourceVersion", "creationTimestamp"):
        meta.pop(field, None)
    for entry in meta.get("managedFields", []):
        entry.pop("time", None)
    if obj["kind"] == "Service":  # allocated by the server unless the body asked for them
        spec, asked = obj["spec"], sent.get("spec", {})
        for field in ("clusterIP", "clusterIPs", "healthCheckNodePort"):
            if field not in asked:
                spec.pop(field, None)
        for port, asked_port in zip(spec.get("ports", []), asked.get("ports", []), strict=True):
            if "nodePort" not in asked_port:
                port.pop("nodePort", None)
    return obj


@pytest.mark.kubectl
@pytest.mark.parametrize("case_id", list(CASES))
async def test_kubectl_create_generator(case_id: str, kubectl: Kubectl, cluster: LocalCluster,
                                        files: Path) -> None:
    case = CASES[case_id]
    args = tuple(a.replace("$FILES", str(files)) for a in case.args)
    dry = json.loads(await kubectl("create", *_with_flags(args, "--dry-run=client", "-o",
                                                           "json")))

    result = await kubectl.run("create", *_with_flags(args, "-v=10"))
    bodies = [b for b in _request_bodies(result.stderr) if b.startswith(b"k8s\x00")]
    assert bodies, "kubectl sent no protobuf body"
    assert decode_object(bodies[-1]) == dry

    if cluster.registry.get(*case.gvr) is None:
        # Not served by this cluster: the protobuf body was still read, the URL was not found.
        assert result.code != 0
        assert "could not find the requested resource" in result.stderr
        return
    assert result.code == 0, result.stderr
    created = json.loads(await kubectl("get", case.resource, case.name, "-o", "json"))

    # The same object again, through the JSON path: kubectl create -f sends JSON.
    await kubectl("delete", case.resource, case.name, "--wait=true")
    await kubectl("create", "-f", "-", stdin=json.dumps(dry))
    via_json = json.loads(await kubectl("get", case.resource, case.name, "-o", "json"))
    assert _comparable(created, dry) == _comparable(via_json, dry)


@pytest.mark.kubectl
async def test_kubectl_run_and_expose(kubectl: Kubectl) -> None:
    # Both build unstructured objects and send them as JSON; they work the same either way.
    await kubectl("create", "deployment", "web", "--image=nginx", "--port=80")
    dry = json.loads(await kubectl("run", "pod1", "--image=nginx", "--port=80",
                                   "--dry-run=client", "-o", "json"))
    await kubectl("run", "pod1", "--image=nginx", "--port=80")
    pod = json.loads(await kubectl("get", "pod", "pod1", "-o", "json"))
    assert pod["spec"]["containers"][0]["image"] == dry["spec"]["containers"][0]["image"]
    assert pod["metadata"]["labels"] == dry["metadata"]["labels"]

    await kubectl("expose", "deployment", "web", "--port=8080", "--target-port=80")
    svc = json.loads(await kubectl("get", "service", "web", "-o", "json"))
    assert svc["spec"]["ports"][0]["port"] == 8080
    assert svc["spec"]["ports"][0]["targetPort"] == 80
    assert svc["spec"]["selector"] == {"app": "web"}


@pytest.mark.kubectl
async def test_kubectl_drain_deletes_with_protobuf_delete_options(kubectl: Kubectl) -> None:
    # drain's typed client sends DeleteOptions as protobuf; a grace period of 0 (a pointer that
    # was set to zero) must survive decoding, or the pods would only start terminating.
    await kubectl("create", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))
    await kubectl("create", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}}))
    result = await kubectl.run("drain", "n1", "--disable-eviction", "--force",
                               "--grace-period=0", "--timeout=20s", "-v=8")
    assert result.code == 0, result.stderr
    assert "Content-Type: application/vnd.kubernetes.protobuf" in result.stderr
    assert (await kubectl.run("get", "pod", "p1")).code != 0
