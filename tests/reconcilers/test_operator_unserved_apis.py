"""An API version the cluster does not serve (Kubernetes 1.20 has no discovery.k8s.io/v1):
the operator names it once and leaves out only the controllers that need it, against the
local API server. The same on a real 1.20 control plane is in
tests/realcluster/test_operator_on_real_control_plane.py."""

from __future__ import annotations

from pathlib import Path

from controller.manager import Manager, ManagerConfig
from controller.reconcile import Request, Result
from controller.resource import Resource
from reconcilers.machinery.resources import DEPLOYMENTS, PODS
from reconcilers.operator.api_discovery import unserved
from reconcilers.operator.process import leave_out_unserved

NO_VERSION = Resource("discovery.k8s.io", "v1alpha9", "endpointslices", "EndpointSlice")
NO_PLURAL = Resource("apps", "v1", "widgets", "Widget")


async def _nothing(request: Request) -> Result:
    return Result()


async def test_unserved_names_missing_versions_and_resources(kubeconfig: Path) -> None:
    manager = await Manager.create(ManagerConfig(kubeconfig=kubeconfig))
    try:
        missing = await unserved(manager.client, [DEPLOYMENTS, PODS, NO_VERSION, NO_PLURAL])
    finally:
        await manager.client.close()
    assert sorted(missing, key=str) == sorted([NO_VERSION, NO_PLURAL], key=str)


async def test_controllers_needing_an_unserved_api_are_left_out(kubeconfig: Path) -> None:
    manager = await Manager.create(ManagerConfig(kubeconfig=kubeconfig))
    try:
        manager.add_controller("deployments", _nothing, for_=DEPLOYMENTS)
        manager.add_controller("slices", _nothing, for_=PODS,
                               watches=[(NO_VERSION, lambda obj: [])])
        await leave_out_unserved(manager)
    finally:
        await manager.client.close()
    assert [c.name for c in manager.controllers] == ["deployments"]
    assert {i.resource for i in manager.cache.informers} == {DEPLOYMENTS, PODS}
