"""What the v1beta1 DynamoGraphDeployment CRD states of the topology fields, as the original's
schema does: pack domains and the policy's domain are level names (pattern), the KV transfer
policy's three CEL rules, labelKey a label key, preferredWeight between 0 and 1; nothing of
the ClusterTopology itself (admission reads it) nor of updates (the webhook)."""

from __future__ import annotations

import re
from typing import Any

from api.crd import build_crds

Json = dict[str, Any]
DOMAIN = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"


def _spec(kind: str = "DynamoGraphDeployment") -> Json:
    crd = next(c for c in build_crds() if c["spec"]["names"]["kind"] == kind)
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta1")
    spec: Json = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec


def test_pack_domains_and_the_policy_domain_are_level_names() -> None:
    spec = _spec()
    graph = spec["properties"]["topologyConstraint"]["properties"]
    component = spec["properties"]["components"]["items"]["properties"]["topologyConstraint"]
    policy = spec["properties"]["experimental"]["properties"]["kvTransferPolicy"]["properties"]
    assert graph["packDomain"]["pattern"] == DOMAIN
    assert graph["clusterTopologyName"]["minLength"] == 1
    assert component["properties"]["packDomain"]["pattern"] == DOMAIN
    assert policy["domain"]["pattern"] == DOMAIN
    assert _spec("DynamoComponentDeployment")["properties"]["topologyConstraint"][
        "properties"]["packDomain"]["pattern"] == DOMAIN
    assert "x-kubernetes-validations" not in spec["properties"]["topologyConstraint"]


def test_the_kv_transfer_policy_rules() -> None:
    policy = _spec()["properties"]["experimental"]["properties"]["kvTransferPolicy"]
    assert [r["message"] for r in policy["x-kubernetes-validations"]] == [
        "exactly one of labelKey or clusterTopologyName is required",
        "preferredWeight is required when enforcement is preferred",
        "preferredWeight may only be set when enforcement is preferred"]
    fields = policy["properties"]
    assert (fields["preferredWeight"]["minimum"], fields["preferredWeight"]["maximum"]) == (0, 1)
    assert fields["clusterTopologyName"]["minLength"] == 1
    label_key = fields["labelKey"]
    assert (label_key["minLength"], label_key["maxLength"]) == (1, 317)
    pattern = re.compile(label_key["pattern"])
    for good in ("topology.kubernetes.io/zone", "rack", "example.com/Rack_1"):
        assert pattern.match(good), good
    for bad in ("/zone", "Example.com/zone", "zone-", "a/b/c"):
        assert not pattern.match(bad), bad
