"""`convert(..., detached=False)`, the conversion webhook's: the same result as a detached
conversion, key order included, and the input left as it was, for all five kinds in both
directions (and for an object already in the target version)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.conversion import CONVERSIONS, convert
from api.convert import dump
from tests.api.model_strategies import objects

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.mark.parametrize("kind", list(CONVERSIONS))
@pytest.mark.parametrize("version", ["v1beta1", "v1alpha1"])
@pytest.mark.parametrize("target", ["v1beta1", "v1alpha1"])
@SETTINGS
@given(data=st.data())
def test_an_attached_conversion_gives_the_detached_result(kind: str, version: str, target: str,
                                                          data: st.DataObject) -> None:
    obj = dump(data.draw(objects(version, kind)))
    snapshot = json.dumps(obj)
    detached = convert(obj, target)
    attached = convert(obj, target, detached=False)
    assert json.dumps(attached) == json.dumps(detached)
    assert json.dumps(obj) == snapshot
