"""EndpointSlices and legacy Endpoints for Services with selectors, from the pods they select.

One slice per set of resolved ports (a named targetPort may resolve differently per pod),
labelled `kubernetes.io/service-name` and owned by the Service; each endpoint has the pod IP,
`conditions.ready/serving/terminating`, nodeName, zone and a targetRef. A Service without
matching pods keeps one empty slice, as the real controller does. The legacy Endpoints object
lists ready addresses and notReadyAddresses per port set.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..selectors import LabelSelector
from ..storage import DELETED, Change
from .clock import rfc3339
from .loop import Context, ControlLoop, Key
from .objects import owner_reference, pod_phase, pod_ready, terminating
from .selector_index import SelectorIndex
from .writer import ENDPOINT_SLICES, ENDPOINTS, NODES, PODS, SERVICES

Json = dict[str, Any]

SERVICE_NAME = "kubernetes.io/service-name"
SLICE_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
SLICE_CONTROLLER = "endpointslice-controller.k8s.io"
ENDPOINTS_MANAGED_BY = "endpoints.kubernetes.io/managed-by"
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
HEADLESS = "service.kubernetes.io/headless"

Ports = tuple[tuple[str, int, str, str], ...]  # (name, port, protocol, appProtocol)


def _resolve_ports(service: Json, pod: Json) -> Ports | None:
    """The service's ports resolved against the pod's container ports (None: cannot)."""
    out = []
    containers = (pod.get("spec") or {}).get("containers") or ()
    for port in (service.get("spec") or {}).get("ports") or ():
        target = port.get("targetPort", port.get("port"))
        if isinstance(target, str) and not target.isdigit():
            found = next((cp.get("containerPort") for c in containers
                          for cp in c.get("ports") or () if cp.get("name") == target), None)
            if found is None:
                continue
            target = found
        out.append((str(port.get("name") or ""), int(target), str(port.get("protocol", "TCP")),
                    str(port.get("appProtocol") or "")))
    if not out and (service.get("spec") or {}).get("ports"):
        return None
    return tuple(out)


def _port_json(ports: Ports, legacy: bool) -> list[Json]:
    out = []
    for name, number, protocol, app in ports:
        p: Json = {"name": name, "port": number, "protocol": protocol}
        if legacy and not name:
            del p["name"]
        if app:
            p["appProtocol"] = app
        out.append(p)
    return out


class EndpointsController(ControlLoop):
    """The EndpointSlice and Endpoints controllers for Services with a selector."""

    component = "endpointslice-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: Services by selector, kept current from the changes `keys_for` sees.
        self._services = SelectorIndex()
        for svc in self.writer.list_objects(SERVICES):
            self._index_service(svc)

    def _index_service(self, svc: Json) -> None:
        meta = svc["metadata"]
        self._services.put((meta["namespace"], meta["name"]),
                           (svc.get("spec") or {}).get("selector"))

    def initial_keys(self) -> Iterable[Key]:
        return [(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.writer.list_objects(SERVICES)]

    def keys_for(self, change: Change) -> Iterable[Key]:
        meta = change.obj["metadata"]
        if change.resource == SERVICES:
            if change.type == DELETED:
                self._services.remove((meta["namespace"], meta["name"]))
            else:
                self._index_service(change.obj)
        if change.resource in (SERVICES, ENDPOINTS):
            return [(meta["namespace"], meta["name"])]
        if change.resource == ENDPOINT_SLICES:
            labels = meta.get("labels") or {}
            if labels.get(SLICE_MANAGED_BY) == SLICE_CONTROLLER and labels.get(SERVICE_NAME):
                return [(meta["namespace"], labels[SERVICE_NAME])]
            return ()
        if change.resource == PODS:
            namespace = meta["namespace"]
            names = self._services.selecting(namespace, meta.get("labels") or {})
            if change.old is not None:
                names |= self._services.selecting(
                    namespace, change.old["metadata"].get("labels") or {})
            return [(namespace, name) for name in sorted(names)]
        return ()

    def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        service = self.writer.get(SERVICES, namespace, name)
        ours = LabelSelector.from_validated_set({SERVICE_NAME: name,
                                                 SLICE_MANAGED_BY: SLICE_CONTROLLER})
        slices = self.writer.list_objects(ENDPOINT_SLICES, namespace, ours)
        legacy = self.writer.get(ENDPOINTS, namespace, name)
        spec = (service or {}).get("spec") or {}
        if service is None or not spec.get("selector") or spec.get("type") == "ExternalName":
            for s in slices:
                self.writer.delete(ENDPOINT_SLICES, s)
            if legacy is not None and (legacy["metadata"].get("labels") or {}).get(
                    ENDPOINTS_MANAGED_BY) == "endpoint-controller":
                self.writer.delete(ENDPOINTS, legacy)
            return None
        assert service is not None
        groups = self._groups(service)
        self._sync_slices(service, slices, groups)
        self._sync_endpoints(service, legacy, groups)
        return None

    def _groups(self, service: Json) -> dict[Ports, list[Json]]:
        spec = service["spec"]
        selector = spec["selector"]
        namespace = service["metadata"]["namespace"]
        groups: dict[Ports, list[Json]] = {}
        publish = bool(spec.get("publishNotReadyAddresses"))
        for pod in self.writer.list_objects(PODS, namespace,
                                            LabelSelector.from_validated_set(selector)):
            ip = (pod.get("status") or {}).get("podIP")
            if not ip or pod_phase(pod) in ("Succeeded", "Failed"):
                continue
            ports = _resolve_ports(service, pod)
            if ports is None:
                continue
            ready = pod_ready(pod)
            gone = terminating(pod)
            endpoint: Json = {"addresses": [ip], "conditions": {
                "ready": (ready or publish) and not gone, "serving": ready or publish,
                "terminating": gone}}
            pspec = pod.get("spec") or {}
            if pspec.get("hostname") and pspec.get("subdomain") == service["metadata"]["name"]:
                endpoint["hostname"] = pspec["hostname"]
            node = pspec.get("nodeName")
            if node:
                endpoint["nodeName"] = node
                zone = self._zone(node)
                if zone:
                    endpoint["zone"] = zone
            endpoint["targetRef"] = {"kind": "Pod", "namespace": namespace,
                                     "name": pod["metadata"]["name"],
                                     "uid": pod["metadata"]["uid"]}
            groups.setdefault(ports, []).append(endpoint)
        return groups

    def _zone(self, node_name: str) -> Any:
        node = self.writer.get(NODES, "", node_name)
        labels = (node["metadata"].get("labels") or {}) if node is not None else {}
        return labels.get("topology.kubernetes.io/zone")

    def _labels(self, service: Json, extra: dict[str, str]) -> dict[str, str]:
        labels = dict(service["metadata"].get("labels") or {})
        if (service.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS] = ""
        labels.update(extra)
        return labels

    def _sync_slices(self, service: Json, slices: list[Json],
                     groups: dict[Ports, list[Json]]) -> None:
        name = service["metadata"]["name"]
        namespace = service["metadata"]["namespace"]
        labels = self._labels(service, {SERVICE_NAME: name, SLICE_MANAGED_BY: SLICE_CONTROLLER})
        wanted: list[tuple[list[Json] | None, list[Json] | None]] = [
            (eps, _port_json(ports, legacy=False)) for ports, eps in sorted(groups.items())]
        if not wanted:
            wanted = [(None, None)]  # the placeholder slice of a service without endpoints
        existing = sorted(slices, key=lambda s: s["metadata"]["name"])
        for i, (endpoints, ports) in enumerate(wanted):
            body: Json = {"addressType": "IPv4", "endpoints": endpoints}
            if ports is not None:
                body["ports"] = ports
            if i < len(existing):
                current = existing[i]
                same = (current.get("endpoints") == endpoints and current.get("ports") == ports
                        and current["metadata"].get("labels") == labels)
                if same:
                    continue
                new = copy.deepcopy(current)
                new.pop("ports", None)
                new.update(body)
                new["metadata"]["labels"] = labels
                new["metadata"].setdefault("annotations", {})[TRIGGER_TIME] = rfc3339()
                self.writer.update(ENDPOINT_SLICES, new)
            else:
                self.writer.create(ENDPOINT_SLICES, namespace, {
                    "metadata": {"generateName": f"{name}-", "namespace": namespace,
                                 "labels": labels,
                                 "annotations": {TRIGGER_TIME: rfc3339()},
                                 "ownerReferences": [owner_reference(service)]},
                    **body})
        for extra in existing[len(wanted):]:
            self.writer.delete(ENDPOINT_SLICES, extra)

    def _sync_endpoints(self, service: Json, legacy: Json | None,
                        groups: dict[Ports, list[Json]]) -> None:
        name = service["metadata"]["name"]
        namespace = service["metadata"]["namespace"]
        publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
        subsets = []
        for ports, endpoints in sorted(groups.items()):
            ready: list[Json] = []
            not_ready: list[Json] = []
            for ep in endpoints:
                if ep["conditions"]["terminating"] and not publish:
                    continue
                address: Json = {"ip": ep["addresses"][0]}
                if ep.get("hostname"):
                    address["hostname"] = ep["hostname"]
                if ep.get("nodeName"):
                    address["nodeName"] = ep["nodeName"]
                address["targetRef"] = ep["targetRef"]
                (ready if ep["conditions"]["ready"] else not_ready).append(address)
            if not ready and not not_ready:
                continue
            subset: Json = {}
            if ready:
                subset["addresses"] = ready
            if not_ready:
                subset["notReadyAddresses"] = not_ready
            subset["ports"] = _port_json(ports, legacy=True)
            subsets.append(subset)
        labels = self._labels(service, {ENDPOINTS_MANAGED_BY: "endpoint-controller"})
        if legacy is None:
            body: Json = {"metadata": {"name": name, "namespace": namespace, "labels": labels,
                                       "annotations": {TRIGGER_TIME: rfc3339()}}}
            if subsets:
                body["subsets"] = subsets
            self.writer.create(ENDPOINTS, namespace, body)
            return
        if legacy.get("subsets", []) == subsets and legacy["metadata"].get("labels") == labels:
            return
        new = copy.deepcopy(legacy)
        new["metadata"]["labels"] = labels
        new["metadata"].setdefault("annotations", {})[TRIGGER_TIME] = rfc3339()
        if subsets:
            new["subsets"] = subsets
        else:
            new.pop("subsets", None)
        self.writer.update(ENDPOINTS, new)
