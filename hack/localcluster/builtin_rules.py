"""Registry strategies of built-in kinds: defaulting, status reset, validation, immutable fields.

Each function takes the resource type and JSON objects; the operations layer calls them in the
same order kube-apiserver's registry does (prepare, default, validate).
"""

from __future__ import annotations

import base64
import copy
import ipaddress
import itertools
from typing import Any

from . import (
    api_service_validation,
    certificate_requests,
    config_data_rules,
    crd_approval,
    crds,
    dra_validation,
    rbac_object_rules,
    replication_controllers,
)
from .admission import configuration_validation
from .errors import Cause, forbidden, invalid, required, unsupported
from .metadata_rules import name_errors
from .name_validation import dns1123_label_errors
from .registry import ResourceType
from .resource_requirements import resource_errors

Json = dict[str, Any]

_IMMUTABLE = "field is immutable"

#: Built-in kinds that carry metadata.generation (bumped on spec changes).
GENERATION_KINDS = {
    "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod",
    "HorizontalPodAutoscaler", "PodDisruptionBudget", "Ingress", "CustomResourceDefinition",
    "NetworkPolicy", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
    "ReplicationController",
}
#: Kinds whose status a create request cannot set.
_STATUS_RESET_ON_CREATE = {
    "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Service",
    "PersistentVolumeClaim", "CustomResourceDefinition", "HorizontalPodAutoscaler",
    "PodDisruptionBudget", "Ingress", "Namespace", "Pod", "ReplicationController",
}


class ClusterIPAllocator:
    """Hands out Service cluster IPs from 10.96.0.0/16, as the service IP allocator does."""

    def __init__(self) -> None:
        self._used: set[str] = {"10.96.0.1"}
        self._next = itertools.count(10)

    def allocate(self) -> str:
        for n in self._next:
            ip = str(ipaddress.IPv4Address("10.96.0.0") + n)
            if ip not in self._used:
                self._used.add(ip)
                return ip
        raise RuntimeError("unreachable")

    def claim(self, ip: str) -> None:
        self._used.add(ip)

    def release(self, ip: str) -> None:
        self._used.discard(ip)


def prepare_for_create(rt: ResourceType, obj: Json) -> None:
    """Reset what a create may not set and fill server-owned fields."""
    if rt.custom:
        return
    if rt.kind in _STATUS_RESET_ON_CREATE:
        obj.pop("status", None)
    if rt.kind == "Namespace":
        obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
        obj["status"] = {"phase": "Active"}
    elif rt.kind == "Pod":
        _default_new_pod(obj)
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj)}
    elif rt.kind == "PersistentVolumeClaim":
        obj["status"] = {"phase": "Pending"}
    elif rt.kind == "Service":
        obj["status"] = {"loadBalancer": {}}
    elif rt.kind == "Deployment":
        obj["status"] = {}
    elif rt.kind == replication_controllers.KIND:
        obj["status"] = {"replicas": 0}
        replication_controllers.apply_defaults(obj)
    elif rt.group == dra_validation.GROUP:
        # Defaults come with decoding in kube-apiserver, so before validation.
        dra_validation.apply_defaults(rt.kind, obj)
        dra_validation.prepare_for_create(rt.kind, obj)


def _default_new_pod(pod: Json) -> None:
    """The defaults a new pod gets besides admission (`admission.pods`): service links on, and
    requests defaulted from limits (SetDefaults_Pod)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("enableServiceLinks", True)
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") if isinstance(container, dict) else None
            if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
                requests = resources.setdefault("requests", {})
                for name, value in resources["limits"].items():
                    requests.setdefault(name, value)


def prepare_for_update(rt: ResourceType, obj: Json, old: Json) -> None:
    """Keep what the server allocated when an update leaves it out, as the Service registry
    does for cluster IPs and node ports (so a client may PUT a spec it built from scratch)."""
    if rt.kind == replication_controllers.KIND and not rt.custom:
        replication_controllers.apply_defaults(obj)
    if rt.group == dra_validation.GROUP and not rt.custom:
        dra_validation.apply_defaults(rt.kind, obj)
    if rt.kind != "Service":
        return
    spec, old_spec = obj.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
        return
    if spec.get("clusterIP") in (None, "") and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    old_ports = {(p.get("name"), p.get("port")): p.get("nodePort")
                 for p in old_spec.get("ports") or [] if isinstance(p, dict)}
    for port in spec.get("ports") or []:
        if isinstance(port, dict) and not port.get("nodePort"):
            node_port = old_ports.get((port.get("name"), port.get("port")))
            if node_port and spec.get("type") in ("NodePort", "LoadBalancer"):
                port["nodePort"] = node_port


def apply_defaults(rt: ResourceType, obj: Json, cluster_ips: ClusterIPAllocator) -> None:
    """The defaulting functions of k8s.io/api for the fields operators compare against."""
    if rt.custom:
        return
    spec = obj.get("spec")
    if rt.kind == "Secret":
        _default_secret(obj)
    if rt.kind in ("ConfigMap", "Secret") and not rt.group:
        config_data_rules.drop_empty(obj)
    if rt.kind in rbac_object_rules.BINDING_KINDS and rt.group == rbac_object_rules.GROUP:
        rbac_object_rules.apply_defaults(obj)
    if rt.kind == "CustomResourceDefinition":
        crds.apply_crd_defaults(obj)
    elif rt.kind == "Service" and isinstance(spec, dict):
        _default_service(spec, cluster_ips)
    elif rt.kind == "Deployment" and isinstance(spec, dict):
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            strategy["type"] = "RollingUpdate"
            ru = strategy.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", "25%")
            ru.setdefault("maxSurge", "25%")
        _default_template(spec.get("template"))
    elif rt.kind in ("ReplicaSet", "StatefulSet", "DaemonSet") and isinstance(spec, dict):
        if rt.kind != "DaemonSet":
            spec.setdefault("replicas", 1)
        if rt.kind == "StatefulSet":
            _default_statefulset(spec)
        _default_template(spec.get("template"))
    elif rt.kind == "Job" and isinstance(spec, dict):
        spec.setdefault("parallelism", 1)
        spec.setdefault("completions", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
        template = spec.get("template")
        if isinstance(template, dict):
            # Jobs get a generated selector and matching labels unless manualSelector is set.
            uid = obj["metadata"].get("uid", "")
            name = obj["metadata"].get("name", "")
            if not spec.get("manualSelector"):
                labels = {"batch.kubernetes.io/controller-uid": uid,
                          "batch.kubernetes.io/job-name": name,
                          "controller-uid": uid, "job-name": name}
                spec.setdefault("selector", {"matchLabels": {
                    "batch.kubernetes.io/controller-uid": uid}})
                tmeta = template.setdefault("metadata", {})
                tmeta["labels"] = {**(tmeta.get("labels") or {}), **labels}
        _default_template(template)
    elif rt.kind == "Pod" and isinstance(spec, dict):
        _default_pod_spec(spec)
    elif rt.kind == "PersistentVolumeClaim" and isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")


def _default_secret(obj: Json) -> None:
    """stringData is write-only: its entries overwrite data's (base64-encoded); type defaults."""
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        obj["data"] = {**(data if isinstance(data, dict) else {}),
                       **{k: base64.b64encode(str(v).encode()).decode()
                          for k, v in string_data.items()}}


def _default_service(spec: Json, cluster_ips: ClusterIPAllocator) -> None:
    stype = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if stype != "ExternalName":
        if spec.get("clusterIP") in (None, ""):
            ip = cluster_ips.allocate()
            spec["clusterIP"] = ip
        elif spec["clusterIP"] != "None":
            cluster_ips.claim(spec["clusterIP"])
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "targetPort" not in port and "port" in port:
                port["targetPort"] = port["port"]


def _default_statefulset(spec: Json) -> None:
    """SetDefaults_StatefulSet (apps/v1): the policies `kubectl rollout status` reads."""
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            strategy.setdefault("rollingUpdate", {})
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            rolling.setdefault("partition", 0)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(policy, dict):
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")


def _default_template(template: Any) -> None:
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        _default_pod_spec(template["spec"])


def _default_pod_spec(spec: Json) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            container.setdefault("terminationMessagePath", "/dev/termination-log")
            container.setdefault("terminationMessagePolicy", "File")
            container.setdefault("resources", {})
            image = str(container.get("image", ""))
            tag = image.rsplit("/", 1)[-1]
            pulls_latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
            container.setdefault("imagePullPolicy", "Always" if pulls_latest else "IfNotPresent")
            for port in container.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def _qos_class(pod: Json) -> str:
    containers = (pod.get("spec") or {}).get("containers") or []
    requests_any = limits_all = False
    guaranteed = bool(containers)
    for c in containers:
        res = c.get("resources") or {} if isinstance(c, dict) else {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        requests_any = requests_any or bool(req) or bool(lim)
        limits_all = bool(lim.get("cpu")) and bool(lim.get("memory"))
        if not limits_all or any(req.get(k, lim.get(k)) != lim.get(k) for k in lim):
            guaranteed = False
    if guaranteed:
        return "Guaranteed"
    return "Burstable" if requests_any else "BestEffort"


def validation_errors(rt: ResourceType, obj: Json, old: Json | None) -> list[Cause]:
    """Spec validation of the built-in kinds that matter to operators, and immutable fields."""
    if rt.custom:
        return []
    spec = obj.get("spec")
    errors: list[Cause] = []
    if rt.kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        errors.extend(_workload_errors(spec, rt.kind))
        if old is not None and (old.get("spec") or {}).get("selector") != (spec or {}).get(
                "selector"):
            errors.append(invalid("spec.selector", (spec or {}).get("selector"), _IMMUTABLE))
    elif rt.kind == "Pod":
        errors.extend(_pod_spec_errors(spec, "spec"))
    elif rt.kind == "Job":
        template = (spec or {}).get("template") if isinstance(spec, dict) else None
        if not isinstance(template, dict):
            errors.append(required("spec.template"))
        else:
            errors.extend(_pod_spec_errors(template.get("spec"), "spec.template.spec"))
            policy = (template.get("spec") or {}).get("restartPolicy")
            if policy not in ("OnFailure", "Never"):
                errors.append(Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{policy}": supported values: "OnFailure", "Never"',
                    "spec.template.spec.restartPolicy"))
        if old is not None and (old.get("spec") or {}).get("template") != (spec or {}).get(
                "template"):
            errors.append(invalid("spec.template", (spec or {}).get("template"), _IMMUTABLE))
    elif rt.kind == "Service" and isinstance(spec, dict):
        errors.extend(_service_errors(spec, old))
    elif rt.kind == "PersistentVolumeClaim" and old is not None:
        new_spec, old_spec = _pvc_comparable_specs(obj, old)
        if new_spec != old_spec:
            errors.append(forbidden(
                "spec", "spec is immutable after creation except resources.requests and"
                " volumeAttributesClassName for bound claims"))
    elif rt.kind == "CustomResourceDefinition":
        errors.extend(crds.validation_errors(obj, old))
        errors.extend(crd_approval.validation_errors(obj, old))
    elif rt.kind == replication_controllers.KIND:
        errors.extend(replication_controllers.validation_errors(obj, _pod_spec_errors))
    elif rt.kind == certificate_requests.KIND:
        errors.extend(certificate_requests.validation_errors(obj, old))
    elif rt.kind == api_service_validation.KIND:
        errors.extend(api_service_validation.validation_errors(obj))
    elif rt.kind in configuration_validation.KINDS and rt.group == "admissionregistration.k8s.io":
        errors.extend(configuration_validation.validation_errors(rt.kind, obj, old))
    elif rt.kind in ("ConfigMap", "Secret") and not rt.group:
        errors.extend(config_data_rules.validation_errors(rt.kind, obj, old))
    elif rt.group == rbac_object_rules.GROUP:
        errors.extend(rbac_object_rules.validation_errors(rt.kind, obj, old))
    elif rt.group == dra_validation.GROUP:
        errors.extend(dra_validation.validation_errors(rt.kind, obj, old))
    elif rt.kind == "CSIStorageCapacity":  # ValidateClassName of storageClassName
        errors.extend(name_errors("StorageClass", str(obj.get("storageClassName") or ""),
                                  "storageClassName"))
    return errors


def _pvc_comparable_specs(obj: Json, old: Json) -> tuple[Json, Json]:
    """The parts of a claim's spec an update may not change: everything but a first
    volumeName (the binder sets it) and, once the claim is Bound, the storage request."""
    new_spec = copy.deepcopy(obj.get("spec") or {})
    old_spec = copy.deepcopy(old.get("spec") or {})
    if not old_spec.get("volumeName"):
        new_spec.pop("volumeName", None)
        old_spec.pop("volumeName", None)
    if (obj.get("status") or {}).get("phase") == "Bound":
        for spec in (new_spec, old_spec):
            requests = (spec.get("resources") or {}).get("requests")
            if isinstance(requests, dict):
                requests.pop("storage", None)
    return new_spec, old_spec


def _go_string_map(value: Json) -> str:
    """Go's %#v of a map[string]string (keys sorted, as fmt prints maps)."""
    return "map[string]string{" + ", ".join(
        f'"{k}":"{value[k]}"' for k in sorted(value)) + "}"


def _go_int_or_string(value: Any) -> str:
    if isinstance(value, str):
        return f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"{value}"}}'
    return f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}'


def _strategy_errors(strategy: Any) -> list[Cause]:
    """ValidateDeploymentStrategy, after the defaults (RollingUpdate's 25%/25%)."""
    if not isinstance(strategy, dict):
        return []
    kind = strategy.get("type") or "RollingUpdate"  # SetDefaults_Deployment
    if kind not in ("Recreate", "RollingUpdate"):
        pointer = ("(*apps.RollingUpdateDeployment)(nil)" if strategy.get("rollingUpdate") is None
                   else "(*apps.RollingUpdateDeployment)(0xc000010000)")
        shown = f'apps.DeploymentStrategy{{Type:"{kind}", RollingUpdate:{pointer}}}'
        return [Cause("FieldValueNotSupported", f"Unsupported value: {shown}: supported values:"
                      ' "Recreate", "RollingUpdate"', "spec.strategy")]
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable")
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit() and int(
            value[:-1]) > 100:
        return [Cause("FieldValueInvalid", f"Invalid value: {_go_int_or_string(value)}: must"
                      " not be greater than 100%", "spec.strategy.rollingUpdate.maxUnavailable")]
    return []


def _workload_errors(spec: Any, kind: str = "Deployment") -> list[Cause]:
    if not isinstance(spec, dict):
        return [required("spec")]
    errors: list[Cause] = []
    selector = spec.get("selector")
    template: Json = spec["template"] if isinstance(spec.get("template"), dict) else {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    mismatch = Cause("FieldValueInvalid", f"Invalid value: {_go_string_map(labels)}: `selector`"
                     " does not match template `labels`", "spec.template.metadata.labels")
    if not selector:
        errors.append(required("spec.selector"))
        errors.append(mismatch)  # a missing selector selects nothing
    elif isinstance(selector, dict):
        match = selector.get("matchLabels") or {}
        if not match and not selector.get("matchExpressions"):
            errors.append(invalid("spec.selector", selector,
                                  "empty selector is invalid for deployment"))
        elif any(labels.get(k) != v for k, v in match.items()):
            errors.append(mismatch)
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        errors.append(invalid("spec.replicas", replicas,
                              "must be greater than or equal to 0"))
    template_spec = template.get("spec")
    errors.extend(_pod_spec_errors(template_spec, "spec.template.spec"))
    policy = (template_spec or {}).get("restartPolicy", "Always") if isinstance(
        template_spec, dict) else "Always"
    if policy != "Always":
        errors.append(unsupported("spec.template.spec.restartPolicy", policy, ["Always"]))
    if kind == "Deployment":
        history = spec.get("revisionHistoryLimit")
        if isinstance(history, int) and history < 0:
            errors.append(invalid("spec.revisionHistoryLimit", history,
                                  "must be greater than or equal to 0"))
        errors.extend(_strategy_errors(spec.get("strategy")))
    return errors


def _pod_spec_errors(spec: Any, path: str) -> list[Cause]:
    if not isinstance(spec, dict):
        return [required(path)]
    errors: list[Cause] = []
    containers = spec.get("containers")
    if not containers:
        errors.append(required(f"{path}.containers"))
        return errors
    seen: set[str] = set()
    for i, c in enumerate(containers):
        cpath = f"{path}.containers[{i}]"
        if not isinstance(c, dict):
            errors.append(invalid(cpath, c, "must be an object"))
            continue
        name = c.get("name")
        bad_name = dns1123_label_errors(name) if isinstance(name, str) and name else []
        if not name:
            errors.append(required(f"{cpath}.name"))
        elif bad_name:
            errors.extend(invalid(f"{cpath}.name", name, m) for m in bad_name)
        elif name in seen:
            errors.append(Cause("FieldValueDuplicate", f'Duplicate value: "{name}"',
                                f"{cpath}.name"))
        else:
            seen.add(name)
        if not c.get("image"):
            errors.append(required(f"{cpath}.image"))
        for j, port in enumerate(c.get("ports") or []):
            number = port.get("containerPort") if isinstance(port, dict) else None
            if isinstance(number, int) and not 1 <= number <= 65535:
                errors.append(invalid(f"{cpath}.ports[{j}].containerPort", number,
                                      _PORT_RANGE))
        for j, env in enumerate(c.get("env") or []):
            if isinstance(env, dict) and not env.get("name"):
                errors.append(required(f"{cpath}.env[{j}].name"))
        errors.extend(resource_errors(c.get("resources"), f"{cpath}.resources"))
    errors.extend(dra_validation.pod_claim_errors(spec, path))
    return errors


def _service_errors(spec: Json, old: Json | None) -> list[Cause]:
    errors: list[Cause] = []
    old_spec = (old or {}).get("spec") or {}
    if old is not None and old_spec.get("clusterIP") not in (None, "") and spec.get(
            "clusterIP") != old_spec.get("clusterIP") and spec.get("type") != "ExternalName":
        errors.append(invalid("spec.clusterIPs[0]", spec.get("clusterIP"),
                              "may not change once set"))
    ports = spec.get("ports") or []
    if not ports and spec.get("clusterIP") != "None" and spec.get("type") != "ExternalName":
        errors.append(required("spec.ports"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        path = f"spec.ports[{i}]"
        name = port.get("name")
        if len(ports) > 1 and not name:
            errors.append(required(f"{path}.name"))
        elif isinstance(name, str) and name:
            errors.extend(invalid(f"{path}.name", name, m) for m in dns1123_label_errors(name))
            if name in names:
                errors.append(Cause("FieldValueDuplicate", f'Duplicate value: "{name}"',
                                    f"{path}.name"))
            names.add(name)
        number = port.get("port")
        if not isinstance(number, int):
            errors.append(required(f"{path}.port"))
            continue
        if not 1 <= number <= 65535:
            errors.append(invalid(f"{path}.port", number, _PORT_RANGE))
        target = port.get("targetPort", number)  # defaulted to the port
        if isinstance(target, int) and not 1 <= target <= 65535:
            errors.append(invalid(f"{path}.targetPort", target, _PORT_RANGE))
    kind = spec.get("type", "ClusterIP")
    if kind not in _SERVICE_TYPES:
        errors.append(unsupported("spec.type", kind, list(_SERVICE_TYPES)))
    return errors


_PORT_RANGE = "must be between 1 and 65535, inclusive"
_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
