"""Property tests: for any object the models can hold, dump and load are inverse and lossless.

Objects are generated from the model types themselves (attrs fields and their annotations), so
a field added later is covered without touching this file.
"""

from __future__ import annotations

import json
import types
import typing
from functools import cache
from typing import Any, Union, get_args, get_origin

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.convert import dump, load
from api.kube import embedded_tag
from api.markers import field_info, json_name
from api.v1alpha1 import KINDS

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=6)
    | st.floats(allow_nan=False, allow_infinity=False)
)
JSON_VALUE = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
JSON_OBJECT = st.dictionaries(st.text(max_size=8), JSON_VALUE, max_size=4)
QUANTITY = st.integers(min_value=0, max_value=10**12) | st.sampled_from(
    ["0", "1", "500m", "1.5", "16Gi", "100Gi", "2e3", "1k"]
)
TIME = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
RAW_OBJECT = st.fixed_dictionaries(
    {"apiVersion": st.just("nvidia.com/v1alpha1"), "kind": st.just("DynamoGraphDeployment")},
    optional={
        "metadata": st.fixed_dictionaries({"name": st.text(max_size=8)}),
        "spec": JSON_OBJECT,
    },
)


def _embedded(name: str) -> st.SearchStrategy[Any]:
    if name == "Quantity":
        return QUANTITY
    if name == "Time":
        return TIME
    if name == "RawExtension":
        return RAW_OBJECT
    return JSON_OBJECT


@cache
def strategy(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy for values of any type used in the models."""
    if get_origin(tp) in (Union, types.UnionType):
        args = get_args(tp)
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2:
            return st.none() | strategy(inner[0])
    tag = embedded_tag(tp)
    if tag is not None:
        return _embedded(tag.name)
    if attrs.has(tp):
        return _instances(tp)
    origin = get_origin(tp)
    if origin is list:
        return st.lists(strategy(get_args(tp)[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), strategy(get_args(tp)[1]), max_size=3)
    scalars: dict[Any, st.SearchStrategy[Any]] = {
        str: st.text(max_size=10),
        int: st.integers(min_value=-(2**31), max_value=2**31 - 1),
        bool: st.booleans(),
    }
    return scalars[tp]


def _instances(cls: type) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(cls, include_extras=True)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for attribute in attrs.fields(cls):
        if field_info(attribute).inline:
            named = frozenset(json_name(a) for a in attrs.fields(cls) if a is not attribute)
            keys = st.text(max_size=8).filter(lambda key: key not in named)  # noqa: B023
            fields[attribute.name] = st.dictionaries(keys, JSON_VALUE, max_size=3)
        else:
            fields[attribute.name] = strategy(hints[attribute.name])
    return st.builds(cls, **fields)


@pytest.mark.parametrize("cls", list(KINDS.values()), ids=list(KINDS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_dump_load_round_trip(cls: type, data: st.DataObject) -> None:
    obj = data.draw(strategy(cls))
    out = dump(obj)
    # What we write is plain JSON...
    assert json.loads(json.dumps(out)) == out
    # ...that loads back to an equal object and dumps to the same JSON.
    again: Any = load(cls, out)
    assert again == obj
    assert dump(again) == out


@pytest.mark.parametrize("cls", list(KINDS.values()), ids=list(KINDS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_loading_never_shares_state_with_the_input(cls: type, data: st.DataObject) -> None:
    out = dump(data.draw(strategy(cls)))
    snapshot = json.dumps(out, sort_keys=True)
    obj: Any = load(cls, out)
    out.clear()
    assert json.dumps(dump(obj), sort_keys=True) == snapshot
