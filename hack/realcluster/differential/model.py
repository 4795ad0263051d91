"""What a case is: an id, a topic and a short script of requests, each saying what of its answer
is recorded. Paths, parameters, headers and bodies may name variables as `${name}`: `ns` (the
case's own namespace) and whatever earlier steps saved from their answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .target import Answer, Json

Record = Callable[[Answer], Any]
#: kube-controller-manager's root-ca-cert-publisher writes this ConfigMap into every namespace
#: whenever it gets to it; the local cluster has no such controller, so
#: lists and watches leave it out on both servers.
PUBLISHED = {"kube-root-ca.crt"}
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def status(answer: Answer) -> Any:
    """The code, and for a Status body its reason, message and details (the default)."""
    body = answer.json
    if isinstance(body, dict) and body.get("kind") == "Status":
        kept = {k: body.get(k) for k in ("status", "reason", "message", "details")
                if k in body}
        return [answer.code, kept]
    return answer.code


def code(answer: Answer) -> Any:
    """The status code alone (setup steps)."""
    return answer.code


def dig(body: Any, path: str) -> Any:
    """`a.b.0.c` of a JSON value; None where missing."""
    for part in path.split(".") if path else []:
        if isinstance(body, dict):
            body = body.get(part)
        elif isinstance(body, list) and part.isdigit() and int(part) < len(body):
            body = body[int(part)]
        else:
            return None
    return body


def fields(*paths: str) -> Record:
    """The code, a Status summary on failure, else the values at `paths`."""
    def record(answer: Answer) -> Any:
        if answer.code >= 400:
            return status(answer)
        return [answer.code, {p: dig(answer.json, p) for p in paths}]
    return record


def names(*extra: str) -> Record:
    """A list's code, item names, and `extra` paths of the list (e.g. metadata.continue)."""
    def record(answer: Answer) -> Any:
        if answer.code >= 400:
            return status(answer)
        items = [i for i in dig(answer.json, "items") or []
                 if dig(i, "metadata.name") not in PUBLISHED]
        return [answer.code, [dig(i, "metadata.name") for i in items],
                {p: dig(answer.json, p) for p in extra}]
    return record


def events(*paths: str) -> Record:
    """A watch's events as [type, name, *paths of the object]; a Status answer on refusal."""
    def record(answer: Answer) -> Any:
        if answer.code >= 400:
            return status(answer)
        return [[e.get("type"), dig(e, "object.code"), dig(e, "object.reason"),
                 dig(e, "object.message")] if e.get("type") == "ERROR" else
                [e.get("type"), dig(e, "object.metadata.name"),
                 {p: dig(e.get("object"), p) for p in paths}] for e in answer.events
                if dig(e, "object.metadata.name") not in PUBLISHED]
    return record


@dataclass(frozen=True)
class Step:
    """One request, or a watch (`watch=True`: events until `watch_until` or `events` many)."""

    method: str
    path: str
    body: Any = None
    content_type: str | None = None
    accept: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    record: Record | None = status
    #: variable name -> dotted path into the answer's JSON, for later steps.
    save: Mapping[str, str] = field(default_factory=dict)
    #: repeat the request until this holds of the answer (or `within` passes).
    until: Callable[[Answer], bool] | None = None
    within: float = 20.0
    watch: bool = False
    events: int = 1
    watch_until: Callable[[list[Json]], bool] | None = None


@dataclass(frozen=True)
class Case:
    """One scripted interaction; `scrub` are (regex, replacement) applied to every recorded
    string first, for values a case knows to be volatile (e.g. resourceVersions in messages)."""

    id: str
    steps: tuple[Step, ...]
    scrub: tuple[tuple[str, str], ...] = ()
    #: cases that touch cluster-wide state run one at a time after the others.
    serial: bool = False


def case(id: str, *steps: Step, scrub: tuple[tuple[str, str], ...] = (),
         serial: bool = False) -> Case:
    return Case(id, tuple(steps), scrub, serial)


def get(path: str, **kw: Any) -> Step:
    return Step("GET", path, **kw)


def post(path: str, body: Any, **kw: Any) -> Step:
    return Step("POST", path, body=body, **kw)


def put(path: str, body: Any, **kw: Any) -> Step:
    return Step("PUT", path, body=body, **kw)


def patch(path: str, body: Any, kind: str = MERGE, **kw: Any) -> Step:
    return Step("PATCH", path, body=body, content_type=kind, **kw)


def delete(path: str, body: Any = None, **kw: Any) -> Step:
    return Step("DELETE", path, body=body, **kw)


def watch(path: str, params: Mapping[str, str], **kw: Any) -> Step:
    return Step("GET", path, params=params, watch=True, **kw)
