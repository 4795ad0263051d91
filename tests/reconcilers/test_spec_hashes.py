"""Spec hashes remembered per parent: reused exactly while the parent's uid, generation,
labels, annotations and owner references and the reconciler's inputs are unchanged."""

from __future__ import annotations

from typing import Any

from reconcilers.machinery.spec_hashes import SpecHashes

Json = dict[str, Any]


def parent(rv: str = "1", generation: int | None = 1, labels: dict[str, str] | None = None,
           status: Json | None = None, name: str = "p") -> Json:
    meta: Json = {"name": name, "namespace": "ns", "uid": "u-1", "resourceVersion": rv,
                  "labels": labels or {"x": "1"}}
    if generation is not None:
        meta["generation"] = generation
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": meta, "spec": {"image": "a"}, "status": status or {}}


def test_same_basis_gives_the_same_table() -> None:
    memo = SpecHashes()
    first = memo.for_sync(parent(), ("secrets", None), 2)
    assert first == [None, None]
    first[0] = "h1"
    # A status write or a new resourceVersion renders nothing new.
    again = memo.for_sync(parent(rv="2", status={"ready": True}), ("secrets", None), 2)
    assert again is first and again == ["h1", None]


def test_any_other_change_starts_afresh() -> None:
    memo = SpecHashes()

    def remembered(obj: Json, inputs: object = "in", children: int = 1) -> bool:
        memo.for_sync(parent(), "in", 1)[0] = "h1"
        return memo.for_sync(obj, inputs, children) == ["h1"]

    assert remembered(parent())
    assert not remembered(parent(generation=2)), "a new spec"
    assert not remembered(parent(labels={"x": "2"})), "new labels"
    assert not remembered(parent(), "other"), "new inputs"
    assert memo.for_sync(parent(), "in", 2) == [None, None], "another desired set"
    recreated = parent()
    recreated["metadata"]["uid"] = "u-2"
    assert not remembered(recreated), "another object of the same name"
    # Without a generation nothing tells a new spec from the old: never remembered.
    unknown = memo.for_sync(parent(generation=None), "in", 1)
    unknown[0] = "h1"
    assert memo.for_sync(parent(generation=None), "in", 1) == [None]


def test_forget_and_the_bound() -> None:
    memo = SpecHashes(limit=2)
    memo.for_sync(parent(), "in", 1)[0] = "h1"
    memo.forget("ns", "p")
    assert len(memo) == 0 and memo.for_sync(parent(), "in", 1) == [None]
    for name in ("q", "r", "s"):
        memo.for_sync(parent(name=name), "in", 1)
    assert len(memo) == 2
