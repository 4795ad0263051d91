"""What the scheduler's kept weighings depend on: `PodFit.key` tells apart pods that could fit
or score differently on some node, and `NodeUsage.version` changes whenever a node's sums do."""

from __future__ import annotations

import copy
from typing import Any

from hack.localcluster.simulation.fit import PodFit, misfit_reasons, score
from hack.localcluster.simulation.node_usage import NodeUsage

Json = dict[str, Any]
NODE: Json = {"metadata": {"name": "n1", "labels": {"zone": "a"}},
              "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "3",
                                         "nvidia.com/gpu": "2"}}}


def pod(name: str, cpu: str = "1", node: str = "", **spec: Any) -> Json:
    return {"metadata": {"namespace": "ns", "name": name},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                     **({"nodeName": node} if node else {}), **spec},
            "status": {"phase": "Running" if node else "Pending"}}


def test_pods_of_one_shape_share_a_key_and_others_do_not() -> None:
    base = PodFit(pod("a")).key
    assert PodFit(pod("b")).key == base
    tolerating = pod("c", tolerations=[{"key": "gpu", "operator": "Exists"}])
    variants = [pod("d", cpu="2"), tolerating, pod("e", nodeSelector={"zone": "b"}),
                pod("f", affinity={"nodeAffinity": {}})]
    assert all(PodFit(p).key != base for p in variants)
    # The key's pods fit and score alike: the answers the scheduler keeps per key.
    assert misfit_reasons(pod("a"), NODE, {}, 0) == misfit_reasons(pod("b"), NODE, {}, 0)
    assert misfit_reasons(pod("a"), NODE, {}, 0) != misfit_reasons(tolerating, NODE, {}, 0)
    assert score(pod("a"), NODE, {}) == score(pod("b"), NODE, {})


def test_node_usage_version_moves_with_every_change_of_the_sums() -> None:
    usage = NodeUsage()
    assert usage.version("n1") == 0
    bound = pod("a", node="n1")
    usage.observe(("ns", "a"), bound)
    first = usage.version("n1")
    assert first > 0
    usage.observe(("ns", "a"), copy.deepcopy(bound))  # the same share: nothing changed
    assert usage.version("n1") == first
    usage.observe(("ns", "a"), pod("a", cpu="2", node="n1"))
    second = usage.version("n1")
    assert second > first
    usage.observe(("ns", "a"), None)
    assert usage.version("n1") > second
    assert usage.version("n2") == 0
