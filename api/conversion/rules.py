"""The conversion engine: rules that map the fields of one version onto the other, and the
sparse payload that keeps what the other side cannot hold.

Rules never change their input and may share parts of it in what they return; whole-object
conversion (`api.conversion.objects.convert_object`) copies its result once.

A `Rule` pairs some spoke (v1alpha1) fields with some hub (v1beta1) fields. Converting one
object (a spec, a component, a status entry) runs every rule on the fields it names; each rule
returns the converted fields and the *save*: the source fields the result cannot give back.
Fields no rule names exist in one version only; they are saved as they are, and restored from
the payload on the way back.

The payload that comes in with the source object (`restored`) is a sparse object of the target
version, written when the source was itself converted from the target. A rule uses it only
when it is consistent with the live source: for a projection, the restored target fields must
convert back to exactly the live source fields (`Restore code may read represented fields from
a sparse payload only as matching context`). Otherwise the live source wins. So:

- a round trip returns the input, since whatever the projection loses is saved and matches;
- a change made in the other version wins, since a changed field no longer matches its payload.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from api.kube import Json

__all__ = [
    "Rule",
    "Step",
    "convert_fields",
    "keyed_map",
    "lifted",
    "nested",
    "present",
    "projection",
    "rename",
    "same",
]

#: (live source fields, restored target fields) -> (target fields, saved source fields)
Step = Callable[[Json, Json], tuple[Json, Json]]
Projection = Callable[[Json], Json]
#: (saved target fields, live source fields) -> whether the saved fields stand for the live.
Match = Callable[[Json, Json], bool]


@attrs.frozen
class Rule:
    """Spoke fields `spoke` and hub fields `hub`, and how to convert each way. Unless `fills`,
    a rule given no fields and no payload returns nothing (and is skipped)."""

    spoke: tuple[str, ...]
    hub: tuple[str, ...]
    to_hub: Step
    to_spoke: Step
    fills: bool = False


def present(fields: Json) -> Json:
    """The fields a saved group holds: a `None` value only marks a group saved while empty."""
    return {k: v for k, v in fields.items() if v is not None}


def _saved(fields: Json, keys: tuple[str, ...]) -> Json:
    # A group saved while absent in the source is written as {"firstKey": null}.
    return dict(fields) if fields else {keys[0]: None}


def _projecting(fwd: Projection, back: Projection, src_keys: tuple[str, ...],
                matches: Match | None) -> Step:
    # Projections never change their argument; the values they return may share parts of it
    # (`convert_object` copies its result once at the end).
    def step(src: Json, restored: Json) -> tuple[Json, Json]:
        dst = fwd(src)
        if restored:
            candidate = present(restored)
            if matches(candidate, src) if matches is not None else back(candidate) == src:
                dst = candidate
        save = {} if back(dst) == src else _saved(src, src_keys)
        return dst, save

    return step


def projection(
    spoke: tuple[str, ...],
    hub: tuple[str, ...],
    to_hub: Projection,
    to_spoke: Projection,
    *,
    fills: bool = False,
    hub_matches: Match | None = None,
    spoke_matches: Match | None = None,
) -> Rule:
    """A group of fields converted by two pure functions that need not be inverse: what one
    direction loses is saved whole (the group is the unit of the payload) and restored only
    while the live fields still match it. `fills`: the functions give fields for absent ones
    (a default that differs between the versions). By default saved fields match the live
    ones when they convert back to them; `hub_matches(saved hub, live spoke)` and
    `spoke_matches(saved spoke, live hub)` may say more (a part of a live field that the
    other version cannot hold at all, which the saved group then keeps)."""
    return Rule(
        spoke,
        hub,
        _projecting(to_hub, to_spoke, spoke, hub_matches),
        _projecting(to_spoke, to_hub, hub, spoke_matches),
        fills,
    )


def _moving(src_key: str, dst_key: str) -> Step:
    def step(src: Json, restored: Json) -> tuple[Json, Json]:
        return ({dst_key: src[src_key]} if src_key in src else {}), {}

    return step


def rename(spoke: str, hub: str) -> Rule:
    """The same value under another name (nothing is ever saved)."""
    return Rule((spoke,), (hub,), _moving(spoke, hub), _moving(hub, spoke))


def same(*names: str) -> list[Rule]:
    """Fields with the same name and meaning in both versions."""
    return [rename(name, name) for name in names]


def nested(spoke: str, hub: str, rules: Sequence[Rule]) -> Rule:
    """An object field whose own fields convert by `rules`, saved and restored field by
    field."""

    def run(src_key: str, dst_key: str, to_hub: bool) -> Step:
        def step(src: Json, restored: Json) -> tuple[Json, Json]:
            if src_key not in src:
                return {}, {}
            value = src[src_key]
            if not isinstance(value, dict):
                return {dst_key: value}, {}
            inner = restored.get(dst_key)
            dst, save = convert_fields(
                value, rules, to_hub=to_hub, restored=inner if isinstance(inner, dict) else None
            )
            return {dst_key: dst}, ({src_key: save} if save else {})

        return step

    return Rule((spoke,), (hub,), run(spoke, hub, True), run(hub, spoke, False))


def lifted(hub: str, spoke: tuple[str, ...]) -> Rule:
    """Fields at the top of the spoke that the hub groups in one object `hub` (which may hold
    more: those hub-only fields, and an empty object, are saved in the hub payload)."""

    def to_hub(src: Json, restored: Json) -> tuple[Json, Json]:
        inner = {k: src[k] for k in spoke if k in src}
        saved = restored.get(hub)
        if isinstance(saved, dict):
            inner.update({k: v for k, v in saved.items() if k not in spoke})
            return {hub: inner}, {}
        return ({hub: inner} if inner else {}), {}

    def to_spoke(src: Json, restored: Json) -> tuple[Json, Json]:
        if hub not in src:
            return {}, {}
        value = src[hub]
        if not isinstance(value, dict):
            return {}, {hub: value}
        inner = {k: value[k] for k in spoke if k in value}
        extras = {k: v for k, v in value.items() if k not in spoke}
        return inner, ({hub: extras} if extras or not inner else {})

    return Rule(spoke, (hub,), to_hub, to_spoke)


def keyed_map(spoke: str, hub: str, rules: Sequence[Rule]) -> Rule:
    """A map of objects (by name) in both versions; entries are matched by key, and a saved
    entry whose key is gone is ignored."""

    def run(src_key: str, dst_key: str, to_hub: bool) -> Step:
        def step(src: Json, restored: Json) -> tuple[Json, Json]:
            if src_key not in src:
                return {}, {}
            entries = src[src_key]
            if not isinstance(entries, dict):
                return {dst_key: entries}, {}
            saved = restored.get(dst_key)
            saved = saved if isinstance(saved, dict) else {}
            out: Json = {}
            saves: Json = {}
            for key, value in entries.items():
                if not isinstance(value, dict):
                    out[key] = value
                    continue
                inner = saved.get(key)
                out[key], save = convert_fields(
                    value, rules, to_hub=to_hub, restored=inner if isinstance(inner, dict) else None
                )
                if save:
                    saves[key] = save
            return {dst_key: out}, ({src_key: saves} if saves else {})

        return step

    return Rule((spoke,), (hub,), run(spoke, hub, True), run(hub, spoke, False))


@attrs.frozen
class _Plan:
    """A rule list compiled for one direction: which rules read each source and target key,
    and the keys the list covers on each side."""

    rules: tuple[tuple[tuple[str, ...], tuple[str, ...], Step], ...]
    by_src: dict[str, tuple[int, ...]]
    by_dst: dict[str, tuple[int, ...]]
    fills: tuple[int, ...]
    src_covered: frozenset[str]
    dst_covered: frozenset[str]


#: Compiled plans by (id of the rule list, direction), holding the list so the id stays its.
_plans: dict[tuple[int, bool], tuple[Sequence[Rule], _Plan]] = {}
_MAX_PLANS = 512


def _plan(rules: Sequence[Rule], to_hub: bool) -> _Plan:
    cached = _plans.get((id(rules), to_hub))
    if cached is not None and cached[0] is rules:
        return cached[1]
    compiled = []
    by_src: dict[str, list[int]] = {}
    by_dst: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        src_keys, dst_keys = (rule.spoke, rule.hub) if to_hub else (rule.hub, rule.spoke)
        compiled.append((src_keys, dst_keys, rule.to_hub if to_hub else rule.to_spoke))
        for key in src_keys:
            by_src.setdefault(key, []).append(index)
        for key in dst_keys:
            by_dst.setdefault(key, []).append(index)
    plan = _Plan(
        tuple(compiled),
        {k: tuple(v) for k, v in by_src.items()},
        {k: tuple(v) for k, v in by_dst.items()},
        tuple(i for i, rule in enumerate(rules) if rule.fills),
        frozenset(by_src),
        frozenset(by_dst),
    )
    if len(_plans) >= _MAX_PLANS:  # rule lists made on the fly (tests) do not pile up
        _plans.clear()
    _plans[(id(rules), to_hub)] = (rules, plan)
    return plan


def convert_fields(
    src: Json, rules: Sequence[Rule], *, to_hub: bool, restored: Json | None
) -> tuple[Json, Json]:
    """Convert one object by `rules`; returns the converted object and the sparse save."""
    restored = restored or {}
    plan = _plan(rules, to_hub)
    # The rules that get any field, in their order: a rule given no fields and no payload
    # returns nothing unless it fills, so the others are not run.
    wanted = set(plan.fills)
    for key in src:
        wanted.update(plan.by_src.get(key, ()))
    for key in restored:
        wanted.update(plan.by_dst.get(key, ()))
    dst: Json = {}
    save: Json = {}
    for index in sorted(wanted):
        src_keys, dst_keys, step = plan.rules[index]
        part = {k: src[k] for k in src_keys if k in src}
        restored_part = {k: restored[k] for k in dst_keys if k in restored}
        converted, saved = step(part, restored_part)
        dst.update(converted)
        save.update(saved)
    src_covered = plan.src_covered
    for key, value in src.items():
        if key not in src_covered:  # only the source version has it
            save[key] = value
    dst_covered = plan.dst_covered
    for key, value in restored.items():
        if key not in dst_covered and key not in dst and value is not None:
            dst[key] = value  # only the target version has it
    return dst, save
