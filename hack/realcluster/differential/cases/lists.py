"""Lists and watches: pagination (limit/continue), resourceVersion and resourceVersionMatch,
label and field selectors, watch event sequences, and 410 Gone for a too-old version."""

from __future__ import annotations

from typing import Any

from ..model import Case, Record, Step, case, delete, events, get, names, patch, post, watch
from ..target import Answer
from .paths import CM, GADGETS, SECRETS, cm, gadget, secret


def _g(name: str, **labels: str) -> dict[str, object]:
    return {**gadget(name), "metadata": {"name": name, "labels": labels}}


# Gadgets, not ConfigMaps: the real controller-manager adds kube-root-ca.crt to every
# namespace at a time of its choosing, which would shift pages and remaining counts.
_SEED = tuple(post(GADGETS, _g(f"c{i}", tier=t, n=str(i)))
              for i, t in enumerate(["a", "a", "b", "b", "c"]))
_RV = "\\d+"


def _seeded(id: str, *steps: Step, scrub: tuple[tuple[str, str], ...] = ()) -> Case:
    return case(id, *_SEED, *steps, scrub=scrub)


def _selectors() -> list[Case]:
    label = {"eq": "tier=a", "double-eq": "tier==b", "neq": "tier!=a", "in": "tier in (a,c)",
             "notin": "tier notin (a)", "exists": "n", "not-exists": "!n",
             "and": "tier=b,n=3", "none": "tier=z", "bad-syntax": "tier in a",
             "bad-key": "-bad=1", "bad-value": "tier=-x-", "gt": "n>2", "empty-in": "tier in ()"}
    field = {"name": "metadata.name=c1", "name-neq": "metadata.name!=c1",
             "namespace": "metadata.namespace=${ns}", "unsupported": "spec.size=1",
             "bad-syntax": "metadata.name", "set-based": "metadata.name in (c1)"}
    cases = [_seeded(f"labels-{k}", get(GADGETS, params={"labelSelector": v}, record=names()))
             for k, v in label.items()]
    cases += [_seeded(f"fields-{k}", get(GADGETS, params={"fieldSelector": v}, record=names()))
              for k, v in field.items()]
    cases += [
        case("fields-secret-type", post(SECRETS, secret("s1")),
             post(SECRETS, secret("s2", {"tls.crt": "dg==", "tls.key": "dg=="},
                                  type="kubernetes.io/tls")),
             get(SECRETS, params={"fieldSelector": "type=kubernetes.io/tls"},
                 record=names())),
        _seeded("fields-and-labels", get(GADGETS, params={
            "fieldSelector": "metadata.name!=c0", "labelSelector": "tier=a"}, record=names())),
    ]
    return cases


def _pagination() -> list[Case]:
    extra = ("metadata.continue", "metadata.remainingItemCount")
    return [
        _seeded("page-limit-2", get(GADGETS, params={"limit": "2"}, record=names(*extra),
                                    save={"c": "metadata.continue"}),
                get(GADGETS, params={"limit": "2", "continue": "${c}"}, record=names(*extra),
                    save={"c": "metadata.continue"}),
                get(GADGETS, params={"limit": "2", "continue": "${c}"}, record=names(*extra))),
        _seeded("page-limit-0", get(GADGETS, params={"limit": "0"}, record=names(*extra))),
        _seeded("page-limit-exact", get(GADGETS, params={"limit": "5"}, record=names(*extra))),
        _seeded("page-limit-negative", get(GADGETS, params={"limit": "-1"}, record=names(*extra))),
        _seeded("page-limit-not-number", get(GADGETS, params={"limit": "x"}, record=names(*extra))),
        _seeded("page-bad-continue", get(GADGETS, params={"limit": "2", "continue": "garbage"},
                                         record=names(*extra))),
        _seeded("page-with-selector", get(GADGETS, params={"limit": "1", "labelSelector": "tier=b"},
                                          record=names(*extra), save={"c": "metadata.continue"}),
                get(GADGETS, params={"limit": "1", "labelSelector": "tier=b", "continue": "${c}"},
                    record=names(*extra))),
        _seeded("page-continue-other-collection",
                get(GADGETS, params={"limit": "2"}, save={"c": "metadata.continue"}),
                get(CM, params={"limit": "2", "continue": "${c}"}, record=names())),
        _seeded("page-rv-and-continue",
                get(GADGETS, params={"limit": "2"}, save={"c": "metadata.continue"}),
                get(GADGETS, params={"limit": "2", "continue": "${c}", "resourceVersion": "1"},
                    record=names())),
    ]


def sorted_names() -> Record:
    """Names in sorted order: lists served from the watch cache (resourceVersion=0,
    NotOlderThan) come in no promised order, and 1.20's cache keeps a hash map."""
    plain = names()

    def record(answer: Answer) -> Any:
        got = plain(answer)
        if isinstance(got, list) and isinstance(got[1], list):
            got[1] = sorted(got[1])
        return got
    return record


def _all_five(answer: Answer) -> bool:
    """The watch cache may answer from before the last writes: wait until it has them."""
    return len((answer.json or {}).get("items") or []) >= 5


def _versions() -> list[Case]:
    one = f"{GADGETS}/c0"
    return [
        _seeded("rv-list-zero", get(GADGETS, params={"resourceVersion": "0"},
                                    record=sorted_names(), until=_all_five)),
        _seeded("rv-match-exact-no-rv", get(GADGETS, params={"resourceVersionMatch": "Exact"},
                                            record=names())),
        _seeded("rv-match-bad", get(GADGETS, params={"resourceVersionMatch": "Sometimes",
                                                "resourceVersion": "1"}, record=names())),
        _seeded("rv-match-not-older", get(GADGETS, params={"limit": "1"},
                                          save={"rv": "metadata.resourceVersion"}),
                get(GADGETS, params={"resourceVersionMatch": "NotOlderThan",
                                     "resourceVersion": "${rv}"}, record=sorted_names())),
        _seeded("rv-match-exact", get(GADGETS, save={"rv": "metadata.resourceVersion"}),
                post(GADGETS, _g("later")),
                get(GADGETS, params={"resourceVersionMatch": "Exact", "resourceVersion": "${rv}",
                                "limit": "10"}, record=names())),
        _seeded("rv-match-with-zero-exact",
                get(GADGETS, params={"resourceVersionMatch": "Exact", "resourceVersion": "0"},
                    record=names())),
        _seeded("rv-get-not-a-number", get(one, params={"resourceVersion": "abc"})),
        _seeded("rv-list-not-a-number", get(GADGETS, params={"resourceVersion": "abc"},
                                            record=names())),
        _seeded("rv-get-zero", get(one, params={"resourceVersion": "0"}, record=names())),
        _seeded("rv-future-list", get(GADGETS, params={"resourceVersion": "99999999",
                                                  "resourceVersionMatch": "NotOlderThan"},
                                      record=names(), within=0.5),
                scrub=(("current: \\d+", "current: M"), ("\\d{5,}", "N"))),
        _seeded("rv-update-increases", get(one, save={"rv": "metadata.resourceVersion"}),
                patch(one, {"data": {"x": "1"}}, record=None),
                patch(one, {"data": {"x": "1"}}, record=None),
                get(one, record=None, save={"rv2": "metadata.resourceVersion"}),
                get(GADGETS, params={"fieldSelector": "metadata.name=c0",
                                "resourceVersion": "${rv}",
                                "resourceVersionMatch": "Exact"}, record=names())),
    ]


def _watches() -> list[Case]:
    def at_rv(id: str, *steps: Step, count: int, params: dict[str, str] | None = None,
              paths: tuple[str, ...] = ()) -> Case:
        return case(id, get(CM, save={"rv": "metadata.resourceVersion"}, record=None),
                    *steps,
                    watch(CM, {"resourceVersion": "${rv}", **(params or {})},
                          events=count, within=5, record=events(*paths)))
    one = f"{CM}/w"
    sel = {"labelSelector": "keep=yes"}
    return [
        at_rv("watch-add-modify-delete", post(CM, cm("w")), patch(one, {"data": {"k": "2"}}),
              delete(one), count=3, paths=("data.k",)),
        at_rv("watch-label-leaves", post(CM, cm("w", labels={"keep": "yes"})),
              patch(one, {"metadata": {"labels": {"keep": "no"}}}),
              count=2, params=sel, paths=("metadata.labels.keep",)),
        at_rv("watch-label-enters", post(CM, cm("w", labels={"keep": "no"})),
              patch(one, {"metadata": {"labels": {"keep": "yes"}}}),
              patch(one, {"data": {"k": "3"}}),
              count=2, params=sel, paths=("metadata.labels.keep", "data.k")),
        at_rv("watch-field-name", post(CM, cm("w")), post(CM, cm("other")),
              delete(one), count=2, params={"fieldSelector": "metadata.name=w"}),
        at_rv("watch-finalizer-delete", post(CM, cm("w", finalizers=["example.com/f"])),
              delete(one), patch(one, {"metadata": {"finalizers": None}}), count=3,
              paths=("metadata.finalizers",)),
        at_rv("watch-rv-equals-delete", post(CM, cm("w")), delete(one), count=2,
              paths=("metadata.resourceVersion",)),
        at_rv("watch-noop-update", post(CM, cm("w")), patch(one, {"data": {"k": "v"}}),
              patch(one, {"data": {"k": "z"}}), count=2, paths=("data.k",)),
        case("watch-rv-zero-existing", post(CM, cm("a")), post(CM, cm("b")),
             watch(CM, {"resourceVersion": "0"}, events=2, within=5,
                   record=_sorted_events())),
        case("watch-no-rv-existing", post(CM, cm("a")), post(CM, cm("b")),
             watch(CM, {}, events=2, within=5, record=_sorted_events())),
        case("watch-too-old", post(CM, cm("a")),
             watch(CM, {"resourceVersion": "1"}, events=1, within=5),
             scrub=((f"too old resource version: {_RV} \\({_RV}\\)",
                     "too old resource version: N (M)"),)),
        case("watch-single-object", post(CM, cm("a")), post(CM, cm("b")),
             watch(f"{CM}/a", {}, events=1, within=3)),
        case("watch-bad-rv", watch(CM, {"resourceVersion": "x"}, events=1, within=3)),
        case("watch-timeout-seconds", post(CM, cm("a")),
             watch(CM, {"timeoutSeconds": "1"}, events=5, within=4)),
        case("watch-rv-match-refused", watch(CM, {"resourceVersionMatch": "NotOlderThan",
                                                  "resourceVersion": "1"}, events=1,
                                             within=3)),
    ]


def _sorted_events() -> Record:
    """Events of a watch that starts with what exists: their order is the server's own."""
    base = events()

    def record(answer: Answer) -> Any:
        got = base(answer)
        return sorted(got, key=repr) if isinstance(got, list) else got
    return record


CASES = [*_selectors(), *_pagination(), *_versions(), *_watches()]
