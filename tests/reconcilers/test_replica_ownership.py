"""Who owns a scaled service's replicas: the adapter's decision table on plain values."""

from __future__ import annotations

import pytest

from reconcilers.scaling_adapter.ownership import Action, plan


@pytest.mark.parametrize(
    ("desired", "applied", "current", "multinode", "action", "target", "reason"),
    [
        # A fresh adapter (nothing applied yet) is the truth, not an edit to adopt.
        (2, None, 2, False, Action.RECORD, 2, "Synced"),
        (5, None, 2, False, Action.SCALE, 5, "Synced"),
        # The autoscaler moved the adapter: its value goes into the graph.
        (4, 2, 2, False, Action.SCALE, 4, "Synced"),
        # The graph was edited by hand since the last write: adopt it once.
        (2, 2, 7, False, Action.ADOPT, 7, "Synced"),
        # Both moved: the hand edit wins, the autoscaler decides again next time.
        (4, 2, 7, False, Action.ADOPT, 7, "Synced"),
        # Our own write whose status update has not landed yet: just record it.
        (4, 2, 4, False, Action.RECORD, 4, "Synced"),
        # Scale to zero and back on a single-node service.
        (0, 3, 3, False, Action.SCALE, 0, "Synced"),
        (2, 0, 0, False, Action.SCALE, 2, "Synced"),
        # A multinode service keeps one replica when asked for none, without a fight.
        (0, 3, 3, True, Action.SCALE, 1, "ScaleToZeroUnsupported"),
        (0, 1, 1, True, Action.RECORD, 1, "ScaleToZeroUnsupported"),
    ],
)
def test_plan(desired: int, applied: int | None, current: int, multinode: bool, action: Action,
              target: int, reason: str) -> None:
    got = plan(desired=desired, applied=applied, current=current, service="decode",
               multinode=multinode)
    assert (got.action, got.target, got.reason, got.ready) == (
        action, target, reason, reason == "Synced")


@pytest.mark.parametrize(("desired", "applied", "current", "action", "target"), [
    # A status write that lost its race to a second scale request: the graph holds our 2,
    # the adapter now asks for 3. Our own write is no hand edit: scale on.
    (3, 1, 2, Action.SCALE, 3),
    # The process stopped after the graph write: record it, adopt nothing.
    (2, 1, 2, Action.RECORD, 2),
])
def test_our_own_write_is_never_adopted(desired: int, applied: int, current: int,
                                        action: Action, target: int) -> None:
    got = plan(desired=desired, applied=applied, current=current, service="decode",
               multinode=False, written_by_us=True)
    assert (got.action, got.target) == (action, target)
    # Without managedFields to say who wrote it, the same values read as a hand edit.
    if current != target:
        assert plan(desired=desired, applied=applied, current=current, service="decode",
                    multinode=False).action is Action.ADOPT


def test_adoption_leaves_nothing_for_the_next_reconcile() -> None:
    adopted = plan(desired=2, applied=2, current=7, service="decode", multinode=False)
    after = plan(desired=7, applied=7, current=7, service="decode", multinode=False)
    assert after.action is Action.RECORD
    assert (adopted.ready, adopted.reason, adopted.message) == (
        after.ready, after.reason, after.message)
