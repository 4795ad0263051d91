"""The simulation's own indexes: services by selector, and the scheduler's node usage."""

from __future__ import annotations

import random
from typing import Any

from hack.localcluster.simulation.fit import scoring_requests, usage
from hack.localcluster.simulation.node_usage import NodeUsage
from hack.localcluster.simulation.selector_index import SelectorIndex

Json = dict[str, Any]


# --- SelectorIndex ---------------------------------------------------------------------------


def test_selector_index_follows_add_change_and_remove() -> None:
    index = SelectorIndex()
    index.put(("ns", "web"), {"app": "web"})
    index.put(("ns", "web-v2"), {"app": "web", "version": "2"})
    index.put(("ns", "all"), {})  # an empty selector selects nothing here
    index.put(("ns", "none"), None)
    assert index.selecting("ns", {"app": "web"}) == {"web"}
    assert index.selecting("ns", {"app": "web", "version": "2", "x": "y"}) == {"web", "web-v2"}
    index.put(("ns", "web"), {"app": "api"})  # re-selected
    assert index.selecting("ns", {"app": "web"}) == set()
    assert index.selecting("ns", {"app": "api"}) == {"web"}
    index.remove(("ns", "web"))
    index.remove(("ns", "never"))
    assert index.selecting("ns", {"app": "api"}) == set()
    index.put(("ns", "web-v2"), None)
    assert index.selecting("ns", {"app": "web", "version": "2"}) == set()


def test_selector_index_keeps_namespaces_apart() -> None:
    index = SelectorIndex()
    index.put(("one", "svc"), {"app": "a"})
    index.remove(("one", "svc"))
    index.put(("two", "svc"), {"app": "a"})
    assert index.selecting("one", {"app": "a"}) == set()
    assert index.selecting("two", {"app": "a"}) == {"svc"}


def test_selector_index_ignores_non_string_values() -> None:
    index = SelectorIndex()
    index.put(("ns", "svc"), {"app": 1})  # type: ignore[dict-item]
    assert index.selecting("ns", {"app": "1"}) == set()


def test_selector_index_matches_brute_force() -> None:
    rng = random.Random(3)
    index = SelectorIndex()
    selectors: dict[str, dict[str, str]] = {}
    for _ in range(300):
        name = f"s{rng.randrange(20)}"
        if rng.random() < 0.2:
            index.remove(("ns", name))
            selectors.pop(name, None)
        else:
            sel = {k: rng.choice("ab") for k in ("app", "tier", "zone") if rng.random() < 0.5}
            index.put(("ns", name), sel)
            if sel:
                selectors[name] = sel
            else:
                selectors.pop(name, None)
        labels = {k: rng.choice("ab") for k in ("app", "tier", "zone") if rng.random() < 0.8}
        want = {n for n, sel in selectors.items()
                if all(labels.get(k) == v for k, v in sel.items())}
        assert index.selecting("ns", labels) == want


# --- NodeUsage -------------------------------------------------------------------------------


def pod(name: str, node: str | None, cpu: str = "1", phase: str = "Running",
        deleting: bool = False) -> Json:
    meta: Json = {"name": name, "namespace": "ns"}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: Json = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def expected(pods: dict[str, Json], node: str) -> tuple[Any, int, Any]:
    there = [p for p in pods.values() if p["spec"].get("nodeName") == node
             and not p["metadata"].get("deletionTimestamp")
             and p["status"]["phase"] not in ("Succeeded", "Failed")]
    used, count = usage(there)
    scored: dict[str, Any] = {}
    for p in there:
        for k, v in scoring_requests(p).items():
            scored[k] = scored.get(k, 0) + v
    return ({k: v for k, v in used.items() if v}, count, {k: v for k, v in scored.items() if v})


def test_node_usage_matches_a_fresh_sum() -> None:
    rng = random.Random(5)
    tracker = NodeUsage()
    pods: dict[str, Json] = {}
    for _ in range(500):
        name = f"p{rng.randrange(15)}"
        if rng.random() < 0.15:
            pods.pop(name, None)
            tracker.observe(("ns", name), None)
        else:
            pods[name] = pod(name, rng.choice([None, "n1", "n2"]),
                             cpu=rng.choice(["100m", "1", "1500m"]),
                             phase=rng.choice(["Pending", "Running", "Running", "Succeeded"]),
                             deleting=rng.random() < 0.1)
            tracker.observe(("ns", name), pods[name])
        for node in ("n1", "n2", "n3"):
            used, count = tracker.used(node)
            assert (used, count, tracker.scored(node)) == expected(pods, node)


def test_node_usage_moves_and_frees_a_pod() -> None:
    tracker = NodeUsage()
    tracker.observe(("ns", "p"), pod("p", "n1", cpu="2"))
    assert tracker.used("n1")[1] == 1
    tracker.observe(("ns", "p"), pod("p", "n1", cpu="3"))  # resized in place
    assert tracker.used("n1") == ({"cpu": 3}, 1)
    tracker.observe(("ns", "p"), pod("p", "n2", cpu="3"))
    assert tracker.used("n1") == ({}, 0)
    assert tracker.used("n2") == ({"cpu": 3}, 1)
    tracker.observe(("ns", "p"), pod("p", "n2", cpu="3", phase="Failed"))
    assert tracker.used("n2") == ({}, 0)
    assert tracker.scored("n2") == {}
