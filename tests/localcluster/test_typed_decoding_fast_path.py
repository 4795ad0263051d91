"""The typed decoding's fast check (`_decodes`) agrees with the worded walk (`_walk`): it
passes exactly the objects the walk finds nothing in, for objects of built-in kinds with any
leaf or subtree replaced by a value of another JSON type."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from hack.localcluster import typed_decoding
from hack.localcluster.typed_decoding import _decodes, _kind_type, _walk

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}, "generation": 3,
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                      "name": "rs", "uid": "u", "controller": True}]},
    "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}],
                             "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                             "env": [{"name": "A", "value": "1"}]}],
             "terminationGracePeriodSeconds": 30, "hostNetwork": False,
             "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 5}]},
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
               "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0,
                                      "image": "i", "imageID": "", "started": True}]},
}
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
          "data": {"k": "aGVsbG8=", "j": None}, "type": "Opaque"}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}},
                       "progressDeadlineSeconds": 600,
                       "template": {"metadata": {"labels": {"a": "b"}},
                                    "spec": POD["spec"]}},
              "status": {"replicas": 2, "readyReplicas": 1, "conditions": []}}
CASES = [(("", "v1", "Pod"), POD), (("", "v1", "Secret"), SECRET),
         (("apps", "v1", "Deployment"), DEPLOYMENT)]
REPLACEMENTS: list[Any] = [None, 1, -1, 2 ** 31, 2 ** 63, 1.0, 1.5, True, False, "x", "1Gi",
                           "not a quantity", "%%%", [], [1], {}, {"a": 1}, {"name": 5}]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*path, index)))
    return out


def _replaced(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(obj)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


@pytest.mark.parametrize(("gvk", "obj"), CASES, ids=[c[0][2] for c in CASES])
def test_fast_check_agrees_with_walk(gvk: tuple[str, str, str], obj: Any) -> None:
    root = _kind_type(*gvk)
    assert root is not None
    assert _decodes(obj, root) and _walk(obj, root, "", []) is None
    rng = random.Random(7)
    checked = refused = 0
    for path in _paths(obj):
        for value in [*REPLACEMENTS, rng.choice(REPLACEMENTS)]:
            candidate = _replaced(obj, path, value)
            walked = _walk(candidate, root, "", [])
            assert _decodes(candidate, root) == (walked is None), (path, value, walked)
            assert typed_decoding.decode_error(gvk, candidate) == walked
            checked += 1
            refused += walked is not None
    assert refused > 10 and checked - refused > 10
