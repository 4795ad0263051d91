"""Grove's scaling-group resource sharing as the simulation does it (pure functions): the
claims a group makes per replica or for all replicas, which member cliques get them, and how
a pod spec names them."""

from __future__ import annotations

from typing import Any

from hack.localcluster.simulation.grove_sharing import (
    claim_body,
    group_claims,
    group_config,
    inject,
    wanted_claims,
)

Json = dict[str, Any]

TEMPLATE = {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
    "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}]}}}
CONFIG: Json = {"name": "worker", "cliqueNames": ["worker-gms-0", "worker", "side"],
                "resourceSharing": [
                    {"name": "gpus", "scope": "PerReplica",
                     "filter": {"childCliqueNames": ["worker-gms-0", "worker"]}},
                    {"name": "fabric", "scope": "AllReplicas"}]}
PCS: Json = {"metadata": {"name": "g", "namespace": "default"},
             "spec": {"template": {"podCliqueScalingGroups": [CONFIG],
                                   "resourceClaimTemplates": [
                                       {"name": "gpus", "templateSpec": TEMPLATE}]}}}
PCSG: Json = {"metadata": {"name": "g-0-worker", "namespace": "default"}}


def test_the_group_config_is_found_by_the_scaling_group_name() -> None:
    assert group_config(PCS, "g-0-worker") is CONFIG
    assert group_config(PCS, "g-0-other") == {}
    assert group_config(None, "g-0-worker") == {}


def test_per_replica_claims_go_to_the_filtered_cliques_and_all_replica_ones_to_all() -> None:
    assert group_claims("g-0-worker", CONFIG, 2) == {
        "g-0-worker-0-gpus": "gpus", "g-0-worker-1-gpus": "gpus",
        "g-0-worker-all-fabric": "fabric"}
    assert wanted_claims("g-0-worker", CONFIG, 1, "worker") == [
        "g-0-worker-1-gpus", "g-0-worker-all-fabric"]
    assert wanted_claims("g-0-worker", CONFIG, 1, "side") == ["g-0-worker-all-fabric"]


def test_a_claim_is_made_from_the_podcliquesets_template() -> None:
    body = claim_body(PCS, PCSG, "g-0-worker-0-gpus", "gpus")
    assert body == {"metadata": {"name": "g-0-worker-0-gpus", "namespace": "default"},
                    "spec": TEMPLATE["spec"]}
    assert claim_body(PCS, PCSG, "g-0-worker-all-fabric", "fabric") is None


def test_every_container_of_the_pod_reaches_the_claim() -> None:
    spec: Json = {"podSpec": {"containers": [{"name": "main"}],
                              "initContainers": [{"name": "init", "resources": {}}]}}
    inject(spec, ["c"])
    pod = spec["podSpec"]
    assert pod["resourceClaims"] == [{"name": "c", "resourceClaimName": "c"}]
    assert pod["containers"][0]["resources"] == {"claims": [{"name": "c"}]}
    assert pod["initContainers"][0]["resources"] == {"claims": [{"name": "c"}]}
