"""The field values a field selector matches against, as the registries' GetAttrs compute them.

`status.podIP` is the first of `status.podIPs`, booleans print as `true`/`false`, numbers as Go
prints them, and a missing value is the empty string. events.k8s.io/v1 Events expose the core
Event's field names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..go_format import go_v

Json = dict[str, Any]

__all__ = ["object_fields"]


def _get(obj: Any, *path: str) -> Any:
    cur = obj
    for key in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(key)
    return cur


def _text(value: Any) -> str:
    """fmt.Sprint of a decoded JSON value, the way field values are stringified; "" when absent."""
    return "" if value is None else go_v(value)


def _event_fields(obj: Json) -> dict[str, str]:
    # events.k8s.io/v1 objects carry the same data under other names; both map to core labels.
    involved: Json = {}
    for name in ("involvedObject", "regarding"):
        candidate = obj.get(name)
        if isinstance(candidate, dict):
            involved = candidate
            break
    reporting = obj.get("reportingComponent")
    if reporting is None:
        reporting = obj.get("reportingController")
    source = _get(obj, "source", "component")
    if source is None:
        source = _get(obj, "deprecatedSource", "component")
    source_text = _text(source) or _text(reporting)
    return {
        "involvedObject.kind": _text(involved.get("kind")),
        "involvedObject.namespace": _text(involved.get("namespace")),
        "involvedObject.name": _text(involved.get("name")),
        "involvedObject.uid": _text(involved.get("uid")),
        "involvedObject.apiVersion": _text(involved.get("apiVersion")),
        "involvedObject.resourceVersion": _text(involved.get("resourceVersion")),
        "involvedObject.fieldPath": _text(involved.get("fieldPath")),
        "reason": _text(obj.get("reason")),
        "reportingComponent": _text(reporting),
        "source": source_text,
        "type": _text(obj.get("type")),
    }


def _selectable_value(obj: Json, path: str) -> str:
    # A CRD selectableField's value: the single JSONPath result, "" when absent.
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return ""
        cur = cur[part]
    if isinstance(cur, (dict, list)):
        return ""
    return _text(cur)


def object_fields(
    obj: Json,
    kind: str,
    group: str,
    *,
    custom: bool = False,
    namespaced: bool = True,
    selectable_fields: Iterable[str] = (),
) -> dict[str, str]:
    """The field set the registry's GetAttrs exposes for field-selector matching."""
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": _text(meta.get("name"))}
    if namespaced:
        fields["metadata.namespace"] = _text(meta.get("namespace"))
    if custom:
        for path in selectable_fields:
            label = path.lstrip(".")
            fields[label] = _selectable_value(obj, label)
        return fields
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    key = (group, kind)
    if key == ("", "Pod"):
        pod_ips = status.get("podIPs") or []
        pod_ip = ""
        if pod_ips and isinstance(pod_ips[0], dict):
            pod_ip = _text(pod_ips[0].get("ip"))
        elif status.get("podIP"):
            pod_ip = _text(status.get("podIP"))
        fields.update(
            {
                "spec.nodeName": _text(spec.get("nodeName")),
                "spec.restartPolicy": _text(spec.get("restartPolicy")),
                "spec.schedulerName": _text(spec.get("schedulerName")),
                "spec.serviceAccountName": _text(spec.get("serviceAccountName")),
                "spec.hostNetwork": "true" if spec.get("hostNetwork") is True else "false",
                "status.phase": _text(status.get("phase")),
                "status.podIP": pod_ip,
                "status.nominatedNodeName": _text(status.get("nominatedNodeName")),
            }
        )
    elif key == ("", "Node"):
        fields["spec.unschedulable"] = "true" if spec.get("unschedulable") is True else "false"
    elif key == ("", "Namespace"):
        fields["status.phase"] = _text(status.get("phase"))
        fields["name"] = _text(meta.get("name"))
    elif key == ("", "Secret"):
        fields["type"] = _text(obj.get("type"))
    elif key == ("", "Service"):
        fields["spec.clusterIP"] = _text(spec.get("clusterIP"))
        fields["spec.type"] = _text(spec.get("type"))
    elif key == ("", "ReplicationController"):
        fields["status.replicas"] = str(int(status.get("replicas") or 0))
    elif key in (("", "Event"), ("events.k8s.io", "Event")):
        fields.update(_event_fields(obj))
    elif key == ("batch", "Job"):
        fields["status.successful"] = str(int(status.get("succeeded") or 0))
    elif key == ("apps", "ReplicaSet"):
        fields["status.replicas"] = str(int(status.get("replicas") or 0))
    elif key == ("certificates.k8s.io", "CertificateSigningRequest"):
        fields["spec.signerName"] = _text(spec.get("signerName"))
    return fields
