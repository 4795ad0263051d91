"""The resource types the local API server serves: built-in kinds plus those CRDs add.

A `ResourceType` is one served (group, version, plural). The registry answers the lookups the
HTTP layer, discovery, OpenAPI and kubectl need: by URL segment, by kind, by short name.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)
#: The verbs of kinds only ever created, never stored: the answer is computed from the
#: request (reviews).
CREATE_ONLY = ("create",)
Json = dict[str, Any]


@dataclass(frozen=True)
class ScaleSubresource:
    """Where a resource keeps the replica fields its `/scale` subresource exposes."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None


@dataclass(frozen=True)
class PrinterColumn:
    """An additionalPrinterColumns entry of a CRD, or a built-in kind's table column."""

    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


@dataclass(frozen=True)
class ResourceType:
    """One served resource: the facts discovery reports and storage keys on."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    has_status: bool = False
    scale: ScaleSubresource | None = None
    #: openAPIV3Schema of a CRD version (structural); None for built-in kinds.
    schema: Json | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    #: True for kinds defined by a CustomResourceDefinition.
    custom: bool = False
    #: The version objects are stored in; other served versions convert to it (CRDs: None strategy).
    storage_version: str = ""
    #: The `Warning` a request to this version earns (a CRD version marked deprecated).
    deprecation_warning: str | None = None
    #: Extra subresources served for built-in kinds (pods/log, ...), for discovery only.
    extra_subresources: tuple[str, ...] = ()
    #: A pod-like kind whose objects are immutable in parts (handled by validation).
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def stored_as(self) -> tuple[str, str]:
        """The storage key of this resource: (group, plural), shared by all its versions."""
        return (self.group, self.plural)


def _b(
    group: str,
    version: str,
    kind: str,
    plural: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    status: bool = False,
    scale: bool = False,
    verbs: tuple[str, ...] = ALL_VERBS,
    extra_subresources: tuple[str, ...] = (),
) -> ResourceType:
    return ResourceType(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        namespaced=namespaced,
        short_names=short,
        categories=categories,
        verbs=verbs,
        has_status=status,
        scale=ScaleSubresource(label_selector_path=".status.selector") if scale else None,
        storage_version=version,
        extra_subresources=extra_subresources,
    )


_ALL = ("all",)
BUILTIN_TYPES: tuple[ResourceType, ...] = (
    _b("", "v1", "Namespace", "namespaces", namespaced=False, short=("ns",), status=True,
       verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    _b("", "v1", "Pod", "pods", short=("po",), categories=_ALL, status=True,
       extra_subresources=("attach", "binding", "eviction", "exec", "log", "portforward")),
    _b("", "v1", "Service", "services", short=("svc",), categories=_ALL, status=True,
       verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")),
    _b("", "v1", "Endpoints", "endpoints", short=("ep",)),
    _b("", "v1", "ConfigMap", "configmaps", short=("cm",)),
    _b("", "v1", "Secret", "secrets"),
    _b("", "v1", "ServiceAccount", "serviceaccounts", short=("sa",)),
    _b("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", short=("pvc",), status=True),
    _b("", "v1", "PersistentVolume", "persistentvolumes", namespaced=False, short=("pv",),
       status=True),
    _b("", "v1", "Node", "nodes", namespaced=False, short=("no",), status=True),
    _b("", "v1", "Event", "events", short=("ev",)),
    _b("events.k8s.io", "v1", "Event", "events", short=("ev",)),
    _b("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
    _b("apps", "v1", "Deployment", "deployments", short=("deploy",), categories=_ALL,
       status=True, scale=True),
    _b("apps", "v1", "ReplicaSet", "replicasets", short=("rs",), categories=_ALL, status=True,
       scale=True),
    _b("apps", "v1", "StatefulSet", "statefulsets", short=("sts",), categories=_ALL,
       status=True, scale=True),
    _b("apps", "v1", "DaemonSet", "daemonsets", short=("ds",), categories=_ALL, status=True),
    _b("apps", "v1", "ControllerRevision", "controllerrevisions"),
    _b("batch", "v1", "Job", "jobs", categories=_ALL, status=True),
    _b("batch", "v1", "CronJob", "cronjobs", short=("cj",), categories=_ALL, status=True),
    _b("", "v1", "ResourceQuota", "resourcequotas", short=("quota",), status=True),
    _b("", "v1", "LimitRange", "limitranges", short=("limits",)),
    _b("", "v1", "PodTemplate", "podtemplates"),
    _b("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", short=("netpol",)),
    _b("coordination.k8s.io", "v1", "Lease", "leases"),
    _b("networking.k8s.io", "v1", "Ingress", "ingresses", short=("ing",), status=True),
    _b("networking.k8s.io", "v1", "IngressClass", "ingressclasses", namespaced=False),
    _b("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    _b("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
    _b("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False),
    _b("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
       namespaced=False),
    _b("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
       short=("hpa",), categories=_ALL, status=True),
    _b("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
       short=("hpa",), categories=_ALL, status=True),
    _b("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", short=("pdb",),
       status=True),
    _b("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
       "validatingwebhookconfigurations", namespaced=False),
    _b("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
       "mutatingwebhookconfigurations", namespaced=False),
    _b("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
       namespaced=False, short=("crd", "crds"), status=True),
    _b("storage.k8s.io", "v1", "StorageClass", "storageclasses", namespaced=False,
       short=("sc",)),
    _b("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", namespaced=False,
       short=("pc",)),
    _b("", "v1", "ReplicationController", "replicationcontrollers", short=("rc",),
       categories=_ALL, status=True, scale=True),
    _b("apiregistration.k8s.io", "v1", "APIService", "apiservices", namespaced=False,
       categories=("api-extensions",), status=True),
    _b("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests",
       namespaced=False, short=("csr",), status=True, extra_subresources=("approval",)),
    _b("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities"),
    # Dynamic Resource Allocation (resource.k8s.io/v1, GA in 1.34): `dra_validation`.
    _b("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", namespaced=False),
    _b("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", status=True),
    _b("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates"),
    _b("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", namespaced=False),
    *(_b(group, "v1", kind, plural, namespaced=namespaced, verbs=CREATE_ONLY)
      for group, kind, plural, namespaced in (
          ("authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews", False),
          ("authentication.k8s.io", "TokenReview", "tokenreviews", False),
          ("authorization.k8s.io", "LocalSubjectAccessReview", "localsubjectaccessreviews",
           True),
          ("authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
           False),
          ("authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False),
          ("authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews", False))),
)

#: Preferred version of each built-in group (the first listed in discovery).
PREFERRED_VERSIONS: dict[str, str] = {"autoscaling": "v2"}


class Registry:
    """The set of served resource types; CRDs add and remove theirs at run time."""

    def __init__(self, builtins: Iterable[ResourceType] = BUILTIN_TYPES) -> None:
        self._lock = threading.Lock()
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        #: CRD name -> the keys it registered, so deleting the CRD removes exactly those.
        self._by_crd: dict[str, list[tuple[str, str, str]]] = {}
        self.generation = 0
        for rt in builtins:
            self._types[(rt.group, rt.version, rt.plural)] = rt

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(list(self._types.values()))

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def versions_of(self, group: str, plural: str) -> list[ResourceType]:
        return [rt for (g, _, p), rt in self._types.items() if g == group and p == plural]

    def groups(self) -> dict[str, list[str]]:
        """Group name -> served versions, preferred version first.

        A CRD group prefers its highest served version in kube-aware order, whichever
        version stores (kube-apiserver's discovery controller sorts them the same way).
        """
        out: dict[str, list[str]] = {}
        for rt in self._types.values():
            versions = out.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        for group, versions in out.items():
            preferred = PREFERRED_VERSIONS.get(group)
            versions.sort(key=lambda v: (v != preferred, kube_aware_key(v)))
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [rt for (g, v, _), rt in self._types.items() if g == group and v == version]

    def by_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        for (g, v, _), rt in self._types.items():
            if g == group and v == version and rt.kind == kind:
                return rt
        return None

    def set_crd(self, crd_name: str, types: list[ResourceType]) -> None:
        """Register (or replace) the resource types served for one CRD."""
        with self._lock:
            for key in self._by_crd.pop(crd_name, []):
                self._types.pop(key, None)
            keys = []
            for rt in types:
                key = (rt.group, rt.version, rt.plural)
                self._types[key] = rt
                keys.append(key)
            self._by_crd[crd_name] = keys
            self.generation += 1

    def remove_crd(self, crd_name: str) -> None:
        with self._lock:
            for key in self._by_crd.pop(crd_name, []):
                self._types.pop(key, None)
            self.generation += 1


_KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_STAGES = {None: 0, "beta": 1, "alpha": 2}


def kube_aware_key(version: str) -> tuple[int, int, int, int, str]:
    """A sort key putting versions in descending kube-aware order: GA, then beta, then alpha,
    higher numbers first (v2, v1, v2beta1, v1beta2, v1alpha1), then the versions that are not
    kube-like, in ascending string order (apimachinery's CompareKubeAwareVersionStrings)."""
    m = _KUBE_VERSION.fullmatch(version)
    if not m:
        return (1, 0, 0, 0, version)
    return (0, _STAGES[m.group(2)], -int(m.group(1)), -int(m.group(3) or 0), "")
