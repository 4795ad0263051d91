"""Property tests of v1alpha1 <-> v1beta1 conversion, for all five kinds.

- Round trips: hub -> spoke -> hub and spoke -> hub -> spoke give the input back exactly, and
  every converted object fits the target version's models.
- A change made in the other version wins: convert, change the result (nested objects, lists
  and maps included, the private annotations left in place), convert back and forth again:
  the changed object comes back, apart from the private annotations.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from api.conversion import CONVERSIONS, convert, private_annotations
from api.convert import dump, load
from tests.api.model_strategies import MODELS, objects

KINDS = list(CONVERSIONS)
OTHER = {"v1alpha1": "v1beta1", "v1beta1": "v1alpha1"}
SETTINGS = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def without_private(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` without its kind's private conversion annotations."""
    names = private_annotations(obj["kind"])
    metadata = dict(obj.get("metadata", {}))
    annotations = {k: v for k, v in metadata.get("annotations", {}).items() if k not in names}
    metadata.pop("annotations", None)
    if annotations:
        metadata["annotations"] = annotations
    return {**obj, "metadata": metadata}


def names_are_unique(obj: dict[str, Any]) -> bool:
    components = obj.get("spec", {}).get("components")
    if obj["kind"] != "DynamoGraphDeployment" or not isinstance(components, list):
        return True
    names = [c.get("name") for c in components]
    return len(names) == len(set(names))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", ["v1beta1", "v1alpha1"])
@SETTINGS
@given(data=st.data())
def test_round_trip_returns_the_input(kind: str, version: str, data: st.DataObject) -> None:
    obj = dump(data.draw(objects(version, kind)))
    snapshot = json.dumps(obj, sort_keys=True)
    other = convert(obj, OTHER[version])
    load(MODELS[OTHER[version]][kind], other)  # fits the other version's types
    back = convert(other, version)
    assert back == obj
    assert json.dumps(obj, sort_keys=True) == snapshot  # the input is not changed


def crossover(live: Any, fresh: Any, draw: Callable[[st.SearchStrategy[Any]], Any]) -> Any:
    """`live` with some parts, at any depth, taken from `fresh` (an object of the same type):
    model fields, list items and map values are kept, replaced, or changed inside."""
    if attrs.has(type(live)) and type(live) is type(fresh):
        changes = {}
        for attribute in attrs.fields(type(live)):
            if attribute.name in ("api_version", "kind", "metadata"):
                continue
            choice = draw(st.sampled_from(["keep", "replace", "inside", "inside"]))
            if choice == "replace":
                changes[attribute.name] = getattr(fresh, attribute.name)
            elif choice == "inside":
                changes[attribute.name] = crossover(
                    getattr(live, attribute.name), getattr(fresh, attribute.name), draw
                )
        return attrs.evolve(live, **changes)
    if isinstance(live, list) and isinstance(fresh, list):
        items = [crossover(a, b, draw) for a, b in zip(live, fresh, strict=False)]
        tail = draw(st.sampled_from(["live", "fresh", "none"]))
        rest = {"live": live[len(items) :], "fresh": fresh[len(items) :], "none": []}[tail]
        return items + rest
    if isinstance(live, dict) and isinstance(fresh, dict):
        out = {k: crossover(v, fresh[k], draw) if k in fresh else v for k, v in live.items()}
        if draw(st.booleans()):
            out.update({k: v for k, v in fresh.items() if k not in out})
        return out
    return fresh if draw(st.booleans()) else live


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", ["v1beta1", "v1alpha1"])
@SETTINGS
@given(data=st.data())
def test_a_change_in_the_other_version_wins(kind: str, version: str, data: st.DataObject) -> None:
    obj = dump(data.draw(objects(version, kind)))
    other_version = OTHER[version]
    other = convert(obj, other_version)
    model = MODELS[other_version][kind]
    changed = dump(
        crossover(load(model, other), data.draw(objects(other_version, kind)), data.draw)
    )
    assume(names_are_unique(changed))
    assert changed["metadata"] == other["metadata"]  # the payloads are still there
    again = convert(convert(changed, version), other_version)
    assert without_private(again) == without_private(changed)
