"""The drift hash of a child DCD is one value whichever version the desired child is built in:
the value children written before the hub move carry (the hash of the `v1alpha1` spec), and
v1beta1-only fields still move it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from api.conversion import convert
from api.conversion.hash_basis import HUB_ONLY_KEY, hash_basis
from reconcilers.machinery.children import spec_hash

Json = dict[str, Any]
GOLDEN = Path(__file__).parents[1] / "backends" / "golden"


def golden_dcds() -> list[Json]:
    """Every desired DCD of the golden files (v1alpha1, as the builders made them)."""
    found = []
    for path in sorted(GOLDEN.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "DynamoComponentDeployment":
                found.append(doc)
    return found


def old_hash(obj: Json) -> str:
    """The hash as the operator computed it before the move: of the object's own spec."""
    return spec_hash({"apiVersion": "v1", "spec": obj["spec"]})


DCDS = golden_dcds()


def test_the_golden_files_hold_desired_dcds() -> None:
    assert len(DCDS) >= 20


@pytest.mark.parametrize("dcd", DCDS, ids=[d["metadata"]["name"] + str(i)
                                           for i, d in enumerate(DCDS)])
def test_a_desired_dcd_hashes_alike_in_both_versions(dcd: Json) -> None:
    assert spec_hash(dcd) == old_hash(dcd)
    hub = convert(dcd, "v1beta1")
    assert hub["spec"] != dcd["spec"]
    assert spec_hash(hub) == old_hash(dcd)


def test_v1alpha1_only_fields_keep_the_hash_through_the_hub() -> None:
    dcd = copy.deepcopy(DCDS[0])
    dcd["spec"]["ingress"] = {"enabled": True, "host": "example.com"}
    dcd["spec"]["dynamoNamespace"] = "legacy"
    hub = convert(dcd, "v1beta1")
    assert "ingress" not in hub["spec"]
    assert spec_hash(hub) == old_hash(dcd) != old_hash(DCDS[0])


def test_v1beta1_only_fields_move_the_hash() -> None:
    hub = convert(DCDS[0], "v1beta1")
    grove = copy.deepcopy(hub)
    grove["spec"]["experimental"] = {"grove": {"forceScalingGroup": True}}
    other = copy.deepcopy(hub)
    other["spec"]["experimental"] = {"grove": {"forceScalingGroup": False}}
    hashes = {spec_hash(hub), spec_hash(grove), spec_hash(other)}
    assert len(hashes) == 3
    basis = hash_basis(grove)
    assert set(basis) == {"spec", HUB_ONLY_KEY}
    # The same object written in v1alpha1 (the fields in its payload) hashes alike.
    spoke = convert(grove, "v1alpha1")
    assert hash_basis(spoke) == basis and spec_hash(spoke) == spec_hash(grove)
    assert spec_hash(spoke) != old_hash(spoke)


def test_other_objects_hash_their_spec() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 1}}
    assert spec_hash(deployment) == old_hash(deployment)
    adapter = {"apiVersion": "nvidia.com/v1alpha1",
               "kind": "DynamoGraphDeploymentScalingAdapter", "metadata": {"name": "a"},
               "spec": {"replicas": 2, "dgdRef": {"name": "g", "serviceName": "w"}}}
    assert spec_hash(adapter) == old_hash(adapter)
