"""Status writes over HTTP: only changes are sent, on the version they were computed from, and
never from a copy this process has already written over (refused as a conflict, unsent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from operator_harness import DCD_CRD, install_crds, setup_client

from controller.errors import ApiError
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers.machinery.status_writer import StaleCopy, write_status

Json = dict[str, Any]
# The statuses written are ones both versions represent: the DCD is stored as v1beta1, and
# what only v1alpha1 has of a status is not written by the status subresource.


def _dcd(name: str) -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"componentType": "frontend",
                     "extraPodSpec": {"mainContainer": {"image": "example/img:1"}}}}


async def test_a_copy_already_written_over_is_not_written_again(kubeconfig: Path) -> None:
    kube = await setup_client(kubeconfig)
    try:
        await install_crds(kube, DCD_CRD)
        stale = await kube.create(COMPONENT_DEPLOYMENTS, _dcd("status-writer"))
        first = {"observedGeneration": 1}
        written = await write_status(kube, COMPONENT_DEPLOYMENTS, stale, first)
        assert written is not None and written["status"] == first
        # A reconcile that still sees the version before that write (its cache is behind)
        # sends nothing: it gets the 409 the server would answer, without asking, and the
        # newer status stays.
        with pytest.raises(StaleCopy) as refused:
            await write_status(kube, COMPONENT_DEPLOYMENTS, stale, {"observedGeneration": 2})
        assert refused.value.code == 409 and "already written over" in refused.value.message
        live = await kube.get(COMPONENT_DEPLOYMENTS, "default", "status-writer")
        assert live["status"] == first
        # On the current version it writes, and an unchanged status sends nothing.
        second = {"observedGeneration": 3}
        again = await write_status(kube, COMPONENT_DEPLOYMENTS, live, second)
        assert again is not None and again["status"] == second
        assert await write_status(kube, COMPONENT_DEPLOYMENTS, again, second) is None
        # A stale copy someone else wrote over is still refused by the server.
        other = await kube.patch(COMPONENT_DEPLOYMENTS, "default", "status-writer",
                                 {"metadata": {"labels": {"x": "y"}}})
        try:
            await write_status(kube, COMPONENT_DEPLOYMENTS, again, {"observedGeneration": 4})
        except ApiError as err:
            assert err.code == 409
        else:
            raise AssertionError("a status from a version someone else replaced was written")
        assert (await kube.get(COMPONENT_DEPLOYMENTS, "default", "status-writer"))[
            "metadata"]["resourceVersion"] == other["metadata"]["resourceVersion"]
    finally:
        await kube.close()


async def test_a_write_whose_answer_is_not_read(kubeconfig: Path) -> None:
    """decode=False: {} stands for the written object, and the rule against stale copies
    still holds (it needs only the version written over)."""
    kube = await setup_client(kubeconfig)
    try:
        await install_crds(kube, DCD_CRD)
        stale = await kube.create(COMPONENT_DEPLOYMENTS, _dcd("quiet-status"))
        status = {"observedGeneration": 1}
        assert await write_status(kube, COMPONENT_DEPLOYMENTS, stale, status,
                                  decode=False) == {}
        live = await kube.get(COMPONENT_DEPLOYMENTS, "default", "quiet-status")
        assert live["status"] == status
        with pytest.raises(StaleCopy):
            await write_status(kube, COMPONENT_DEPLOYMENTS, stale, {"observedGeneration": 5},
                               decode=False)
    finally:
        await kube.close()
