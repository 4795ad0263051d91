"""A benchmark fails on impossible figures instead of printing them."""

from __future__ import annotations

import pytest

from hack.bench.checks import ImpossibleFigures, at_least, check


def test_impossible_figures_are_named() -> None:
    check([at_least("requests", 12, 10), None])
    with pytest.raises(ImpossibleFigures) as caught:
        check([at_least("requests", 0, 10), at_least("peer requests", None, 1)])
    assert "requests is 0" in str(caught.value)
    assert "peer requests is None" in str(caught.value)
