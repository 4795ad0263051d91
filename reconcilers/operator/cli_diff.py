"""`dynamo-operator diff -f FILE`: what applying the graphs of FILE would change in the live
cluster, child by child, as `kubectl diff` shows it for one object.

For each DynamoGraphDeployment of the file (either version): the graph itself (a server-side
apply sent as a dry run, field manager `kubectl` unless `--field-manager` says otherwise, so the
server's defaults, admission and conversion apply), then every child the operator would write
for the graph as the dry run left it, rendered as a reconcile would render it now from what
runs (`graph_preview`), against the live children (`child_diff`): a unified diff of YAML per
changed object, `created` or `deleted` for missing or extra owned children. Then whether the
change starts a worker-generation rollout, which components roll, and the GPUs the surge
needs against the GPUs free in the cluster (`surge_gpus`).

The operator's flags that change what it renders are given with `--operator-args` (the
optional APIs are discovered as the operator discovers them). Exit status as `kubectl diff`:
0 nothing would change, 1 something would, 2 an error.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from typing import Any

import yaml

from api.conversion import HUB, convert
from backends.errors import GenerationError
from backends.hub_graph import hub_graph
from backends.worker_generation import LEGACY, rolled_workers
from controller.client import KubeClient
from controller.errors import ApiError, NotFound, TerminalError
from controller.resource import Resource
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS
from reconcilers.operator.api_discovery import MissingApi, served_apis
from reconcilers.operator.child_diff import CREATED, Change, changes, manifest_yaml, unified
from reconcilers.operator.cli_cluster import (
    CLUSTER_ERRORS,
    add_cluster_flags,
    connect,
    namespace_of,
    read_context,
)
from reconcilers.operator.flags import OperatorOptions, parse_options
from reconcilers.operator.graph_preview import live_generations, preview
from reconcilers.operator.manifest_files import ManifestError, read_documents
from reconcilers.operator.process import operator_settings
from reconcilers.operator.surge_gpus import cluster_gpus, surge

Json = dict[str, Any]

__all__ = ["main"]

_KIND = "DynamoGraphDeployment"


def main(argv: list[str]) -> int:
    """0 nothing would change, 1 something would, 2 an error (named on stderr)."""
    parser = argparse.ArgumentParser(
        prog="dynamo-operator diff",
        description="Show what applying the graphs of FILE would change in the cluster.")
    parser.add_argument("-f", "--filename", required=True, help='manifest file, or "-" for stdin')
    parser.add_argument("--field-manager", default="kubectl",
                        help="the field manager of the server-side apply (default: kubectl)")
    parser.add_argument("--operator-args", default="",
                        help="the operator's flags, as one string, where they change what it "
                             "renders (e.g. --planner-cluster-role-name=...)")
    add_cluster_flags(parser)
    options = parser.parse_args(argv)
    try:
        documents = read_documents(options.filename)
        operator = parse_options(["--leader-elect=false", *shlex.split(options.operator_args)])
        return asyncio.run(_diff(options, operator, documents))
    except SystemExit as bad_flags:
        return 2 if bad_flags.code else 0
    except (OSError, yaml.YAMLError, ManifestError, ApiError, MissingApi, GenerationError,
            TerminalError) as exc:
        print(f"dynamo-operator diff: {exc}", file=sys.stderr)
        return 2
    except CLUSTER_ERRORS as exc:
        print(f"dynamo-operator diff: {exc}", file=sys.stderr)
        return 2


async def _diff(options: argparse.Namespace, operator: OperatorOptions,
                documents: list[Json]) -> int:
    client = await connect(options)
    try:
        settings = operator_settings(operator, await served_apis(client))
        changed = False
        for doc in documents:
            group = str(doc.get("apiVersion", "")).split("/")[0]
            if doc.get("kind") != _KIND or group != "nvidia.com":
                print(f"dynamo-operator diff: skipped {doc.get('kind')} "
                      f"{(doc.get('metadata') or {}).get('name')}: not a {_KIND}",
                      file=sys.stderr)
                continue
            namespace = (doc.get("metadata") or {}).get("namespace") or namespace_of(options)
            changed |= await _graph(client, doc, namespace, settings, operator, options)
        return 1 if changed else 0
    finally:
        await client.close()


async def _graph(client: KubeClient, doc: Json, namespace: str, settings: Any,
                 operator: OperatorOptions, options: argparse.Namespace) -> bool:
    """Print what applying one graph would change; whether anything would."""
    name = str(doc["metadata"]["name"])
    version = str(doc["apiVersion"]).split("/")[1]
    resource = Resource("nvidia.com", version, GRAPH_DEPLOYMENTS.plural, _KIND)
    body = {**doc, "metadata": {**doc["metadata"], "namespace": namespace}}
    live = await _get(client, resource, namespace, name)
    applied = await client.request(
        "PATCH", resource.path(namespace, name), body=body,
        query=[("dryRun", "All"), ("fieldManager", options.field_manager), ("force", "true")],
        content_type="application/apply-patch+yaml")
    live_hub = await _get(client, GRAPH_DEPLOYMENTS, namespace, name)
    target = applied if version == HUB.split("/")[1] else convert(applied, HUB)
    target = {**target, "status": (live_hub or {}).get("status") or {}}
    found: list[Change] = []
    if live is None:
        found.append(Change(_KIND, name, CREATED, manifest_yaml(doc)))
    else:
        text = unified(_KIND, name, live, applied)
        if text:
            found.append(Change(_KIND, name, "changed", text))
    graph = hub_graph(target)
    async with read_context(client, namespace, settings) as ctx:
        view = await preview(ctx, target, graph,
                             planner_cluster_role=operator.planner_cluster_role_name,
                             epp_cluster_role=operator.epp_cluster_role_name)
        found += await changes(client, live_hub, view.desired, namespace)
        uid = str(target["metadata"].get("uid", ""))
        generations = await live_generations(ctx, uid, graph) if live_hub else set()
    for change in found:
        print(f"{change.kind} {namespace}/{change.name}: {change.action}")
        sys.stdout.write(change.text if change.text.endswith("\n") else change.text + "\n")
    if not found:
        print(f"{_KIND} {namespace}/{name}: unchanged, and so are its children")
    target_generation = view.rollout.target if view.rollout is not None else None
    await _rollout_note(client, graph, target, target_generation, generations)
    return bool(found)


async def _rollout_note(client: KubeClient, graph: Any, stored: Json, target: str | None,
                        generations: set[str]) -> None:
    """Whether the change starts a worker rollout, what rolls, and the GPUs of its surge."""
    if target is None:
        print("worker rollout: none (no worker of this graph rolls by generation)")
        return
    if not generations:
        print(f"worker rollout: none (the workers start in generation {_label(target)})")
        return
    if generations == {target}:
        print(f"worker rollout: none (the workers stay in generation {_label(target)})")
        return
    old = ", ".join(_label(g) for g in sorted(generations - {target}))
    if target in generations:
        print(f"worker rollout: in progress; it goes on to generation {_label(target)}, "
              f"replacing {old}")
        return
    components = rolled_workers(graph)
    print(f"worker rollout: starts generation {_label(target)}, replacing {old}")
    print(f"  rolls: {', '.join(components)}")
    surges = surge(graph, stored, components)
    for s in surges:
        print(f"  surge {s.component}: +{s.replicas} replica(s) x {s.gpus_per_replica} GPU(s)"
              f" = {s.gpus} GPU(s)")
    needed = sum(s.gpus for s in surges)
    gpus = await cluster_gpus(client)
    if gpus is None:
        print(f"  GPUs: the surge needs {needed}; free GPUs unknown (nodes or pods not readable)")
        return
    verdict = "fits" if needed <= gpus.free else "does NOT fit: the surge will wait for GPUs"
    print(f"  GPUs: the surge needs {needed}, {gpus.free} free of {gpus.allocatable} "
          f"allocatable ({verdict})")


def _label(generation: str) -> str:
    return generation if generation != LEGACY else "legacy (plain-named DCDs)"


async def _get(client: KubeClient, resource: Resource, namespace: str,
               name: str) -> Json | None:
    try:
        return await client.get(resource, namespace, name)
    except NotFound:
        return None
