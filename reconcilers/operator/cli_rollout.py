"""`dynamo-operator rollout status|history|undo dgd/NAME`: a graph's worker rollouts against a
live cluster, as `kubectl rollout` does for a Deployment.

- `status` prints `status.rollingUpdate` (phase, start and end, updated components) and, per
  worker generation, each rolled component's ready and desired replicas; `--watch` waits until
  the rollout of the graph's current spec is Completed (exit 0) or Failed (exit 1).
- `history` lists the graph's worker ControllerRevisions (`backends.worker_revisions`):
  REVISION, HASH, CHANGE-CAUSE; `--revision N` prints that revision's stored workers.
- `undo [--to-revision N]` writes the chosen revision's workers (and env, backend) back into
  the graph's spec, by default the previous revision's: one patch of the graph, carrying the
  resourceVersion it read, so that GitOps tools see the change and the rollout applies as for
  any other change. Replicas and scaling adapters stay as they are.

Exit status: 0 done, 1 a failed or timed-out rollout, 2 an error.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from backends import constants
from backends.hub_graph import hub_graph
from backends.worker_generation import LEGACY, graph_workers, rolled_workers, worker_hash
from backends.worker_revisions import CHANGE_CAUSE, revision_name
from controller.client import KubeClient
from controller.errors import ApiError, Conflict, NotFound
from controller.resource import Resource
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    CONTROLLER_REVISIONS,
    DEPLOYMENTS,
    GRAPH_DEPLOYMENTS,
)
from reconcilers.operator.child_diff import manifest_yaml
from reconcilers.operator.cli_cluster import (
    CLUSTER_ERRORS,
    add_cluster_flags,
    connect,
    namespace_of,
)
from reconcilers.operator.rollout_undo import UndoError, spoke_patch, undo_patch

Json = dict[str, Any]

__all__ = ["main"]

_KINDS = ("dgd", "dynamographdeployment", "dynamographdeployments",
          "dynamographdeployment.nvidia.com", "dynamographdeployments.nvidia.com")
#: The graphs as `v1alpha1` reads and writes them (undo's first step, `rollout_undo`).
SPOKE_GRAPHS = Resource("nvidia.com", "v1alpha1", "dynamographdeployments",
                        "DynamoGraphDeployment")
#: Tries of each undo patch against a graph whose status moves meanwhile.
_ATTEMPTS = 5


def main(argv: list[str]) -> int:
    """Run one `rollout` subcommand; its exit status."""
    parser = argparse.ArgumentParser(prog="dynamo-operator rollout",
                                     description="Manage the worker rollouts of a graph.")
    verbs = parser.add_subparsers(dest="verb", required=True)
    status = verbs.add_parser("status", help="show the rollout's status")
    status.add_argument("-w", "--watch", action="store_true",
                        help="wait until the rollout completes or fails")
    status.add_argument("--timeout", type=float, default=0.0,
                        help="seconds to wait with --watch (0: no limit)")
    history = verbs.add_parser("history", help="list the worker revisions")
    history.add_argument("--revision", type=int, default=0, help="print this revision's workers")
    undo = verbs.add_parser("undo", help="go back to a previous worker revision")
    undo.add_argument("--to-revision", type=int, default=0,
                      help="the revision to go back to (default: the previous one)")
    for sub in (status, history, undo):
        sub.add_argument("graph", help="dgd/NAME")
        add_cluster_flags(sub)
    try:
        options = parser.parse_args(argv)
    except SystemExit as bad:
        return 2 if bad.code else 0
    try:
        return asyncio.run(_run(options))
    except (ApiError, UndoError, ValueError) as exc:
        print(f"dynamo-operator rollout: {exc}", file=sys.stderr)
        return 2
    except CLUSTER_ERRORS as exc:
        print(f"dynamo-operator rollout: {exc}", file=sys.stderr)
        return 2


def graph_name(text: str) -> str:
    """NAME of `dgd/NAME` (or of a bare NAME); ValueError for another kind."""
    kind, _, name = text.rpartition("/")
    if kind and kind.lower() not in _KINDS:
        raise ValueError(f'"{kind}" is not a DynamoGraphDeployment (use dgd/NAME)')
    if not name:
        raise ValueError("name a graph: dgd/NAME")
    return name


async def _run(options: argparse.Namespace) -> int:
    name = graph_name(options.graph)
    client = await connect(options)
    try:
        namespace = namespace_of(options)
        try:
            graph = await client.get(GRAPH_DEPLOYMENTS, namespace, name)
        except NotFound:
            raise ValueError(f'dynamographdeployment "{name}" not found in namespace '
                             f'"{namespace}"') from None
        if options.verb == "status":
            return await _status(client, graph, options.watch, options.timeout)
        if options.verb == "history":
            return await _history(client, graph, options.revision)
        return await _undo(client, graph, options.to_revision)
    finally:
        await client.close()


# --- status -----------------------------------------------------------------------------------

async def _status(client: KubeClient, graph: Json, watch: bool, wait: float) -> int:
    """Print the status (again when it changes, with `watch`); `wait`: seconds to watch at
    most (0: no limit)."""
    meta = graph["metadata"]
    deadline = time.monotonic() + wait if wait > 0 else None
    last = ""
    while True:
        text, phase = await _status_text(client, graph)
        if text != last:
            print(text, flush=True)
            last = text
        if phase == "Failed":
            return 1
        if phase == "Completed" or not watch:
            return 0
        if deadline is not None and time.monotonic() > deadline:
            print(f"timed out waiting for the rollout of {meta['name']}", file=sys.stderr)
            return 1
        await asyncio.sleep(1.0)
        graph = await client.get(GRAPH_DEPLOYMENTS, meta["namespace"], meta["name"])


async def _status_text(client: KubeClient, graph: Json) -> tuple[str, str]:
    """The status lines, and the phase of the rollout of the graph's current spec
    ("Completed" when none runs, "Pending" while the operator has not seen the spec)."""
    meta, status = graph["metadata"], graph.get("status") or {}
    rolling = status.get("rollingUpdate") or {}
    observed = int(status.get("observedGeneration") or 0)
    generation = int(meta.get("generation") or 0)
    phase = str(rolling.get("phase") or "Completed")
    lines = []
    if observed < generation:
        phase = "Pending"
        lines.append(f'graph "{meta["name"]}": waiting for the operator to observe generation '
                     f"{generation} (observed {observed})")
    elif not rolling:
        lines.append(f'graph "{meta["name"]}": no worker rollout has run')
    else:
        times = f"started {rolling.get('startTime', '?')}"
        if rolling.get("endTime"):
            times += f", ended {rolling['endTime']}"
        updated = ", ".join(rolling.get("updatedComponents") or []) or "none yet"
        lines.append(f'graph "{meta["name"]}": rollout {phase} ({times}); updated '
                     f"components: {updated}")
    lines += await _generation_lines(client, graph)
    return "\n".join(lines), phase


async def _generation_lines(client: KubeClient, graph: Json) -> list[str]:
    """Per worker generation: each rolled component's ready/desired replicas."""
    meta = graph["metadata"]
    hub = hub_graph(graph)
    services = set(rolled_workers(hub))
    target = worker_hash(hub)
    listing = await client.list(COMPONENT_DEPLOYMENTS, meta["namespace"],
                                label_selector=f"{constants.LABEL_GRAPH_NAME}={meta['name']}")
    deployments = {d["metadata"]["name"]: d for d in (await client.list(
        DEPLOYMENTS, meta["namespace"])).get("items") or []}
    by_generation: dict[str, list[str]] = {}
    for dcd in sorted(listing.get("items") or [], key=lambda d: d["metadata"]["name"]):
        dmeta = dcd["metadata"]
        labels = dmeta.get("labels") or {}
        service = labels.get(constants.LABEL_COMPONENT)
        owned = any(r.get("uid") == meta["uid"] and r.get("controller")
                    for r in dmeta.get("ownerReferences") or [])
        if service not in services or not owned:
            continue
        generation = str(labels.get(constants.LABEL_WORKER_HASH) or LEGACY)
        desired = (dcd.get("spec") or {}).get("replicas")
        deployment = deployments.get(dmeta["name"]) or {}
        ready = int((deployment.get("status") or {}).get("readyReplicas") or 0)
        by_generation.setdefault(generation, []).append(
            f"{service} {ready}/{1 if desired is None else desired} ready")
    lines = []
    for generation, counts in sorted(by_generation.items(), key=lambda g: g[0] == target):
        label = generation or "legacy"
        role = "target" if generation == target else "old"
        lines.append(f"  generation {label} ({role}): {', '.join(counts)}")
    return lines


# --- history ----------------------------------------------------------------------------------

async def owned_revisions(client: KubeClient, graph: Json) -> list[Json]:
    """The graph's worker ControllerRevisions, oldest revision first."""
    meta = graph["metadata"]
    listing = await client.list(CONTROLLER_REVISIONS, meta["namespace"],
                                label_selector=f"{constants.LABEL_GRAPH_NAME}={meta['name']}")
    owned = [r for r in listing.get("items") or []
             if any(ref.get("uid") == meta["uid"] and ref.get("controller")
                    for ref in r["metadata"].get("ownerReferences") or [])]
    return sorted(owned, key=lambda r: int(r.get("revision") or 0))


async def _history(client: KubeClient, graph: Json, revision: int) -> int:
    revisions = await owned_revisions(client, graph)
    if revision:
        chosen = next((r for r in revisions if r.get("revision") == revision), None)
        if chosen is None:
            raise ValueError(f"revision {revision} not found")
        sys.stdout.write(manifest_yaml(chosen.get("data") or {}))
        return 0
    print(f'dynamographdeployment "{graph["metadata"]["name"]}"')
    rows = [("REVISION", "HASH", "CHANGE-CAUSE")]
    for r in revisions:
        meta = r["metadata"]
        rows.append((str(r.get("revision", "")),
                     str((meta.get("labels") or {}).get(constants.LABEL_WORKER_HASH, "")),
                     (meta.get("annotations") or {}).get(CHANGE_CAUSE) or "<none>"))
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    for row in rows:
        print(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}")
    return 0


# --- undo -------------------------------------------------------------------------------------

async def _undo(client: KubeClient, graph: Json, to_revision: int) -> int:
    meta = graph["metadata"]
    revisions = await owned_revisions(client, graph)
    hub = hub_graph(graph)
    # A Grove graph's revisions cover every worker, multinode ones included (their hash
    # differs from the rolled workers' only then): the current one is whichever exists.
    names = {revision_name(meta["name"], worker_hash(hub, workers))
             for workers in (None, graph_workers(hub))}
    current = next((r["metadata"]["name"] for r in revisions
                    if r["metadata"]["name"] in names),
                   revision_name(meta["name"], worker_hash(hub)))
    now = next((r for r in revisions if r["metadata"]["name"] == current), None)
    if to_revision:
        chosen = next((r for r in revisions if r.get("revision") == to_revision), None)
        if chosen is None:
            raise UndoError(f"revision {to_revision} not found")
    else:
        top = int(now.get("revision") or 0) if now is not None else 1 << 62
        older = [r for r in revisions if int(r.get("revision") or 0) < top
                 and r["metadata"]["name"] != current]
        if not older:
            raise UndoError("no previous revision to go back to")
        chosen = older[-1]
    if chosen["metadata"]["name"] == current:
        print(f'dynamographdeployment "{meta["name"]}" skipped rollback (the workers are '
              f"revision {chosen.get('revision')} already)")
        return 0
    written = await _write_back(client, meta["namespace"], meta["name"], chosen)
    print(f'dynamographdeployment "{meta["name"]}" rolled back to revision '
          f"{chosen.get('revision')}")
    wanted = (chosen["metadata"].get("labels") or {}).get(constants.LABEL_WORKER_HASH)
    landed = hub_graph(written)
    if wanted not in {worker_hash(landed), worker_hash(landed, graph_workers(landed))}:
        print(f"warning: the workers' configuration written is not revision "
              f"{chosen.get('revision')}'s (hash {wanted}); check the graph's spec",
              file=sys.stderr)
        return 1
    return 0


async def _write_back(client: KubeClient, namespace: str, name: str, revision: Json) -> Json:
    """Write the revision's workers into the graph (`rollout_undo`): its `v1alpha1` services
    first when it holds some, then its `v1beta1` components. Each patch is computed from the
    graph as just read and guarded by its resourceVersion; a conflict (the operator wrote
    the graph's status meanwhile) reads it again. The graph as written."""
    for resource, make in ((SPOKE_GRAPHS, spoke_patch), (GRAPH_DEPLOYMENTS, undo_patch)):
        for attempt in range(_ATTEMPTS):
            live = await client.get(resource, namespace, name)
            patch = make(live, revision)
            if patch is None:
                break
            try:
                await client.patch(resource, namespace, name, patch)
                break
            except Conflict:
                if attempt == _ATTEMPTS - 1:
                    raise
    written: Json = await client.get(GRAPH_DEPLOYMENTS, namespace, name)
    return written
