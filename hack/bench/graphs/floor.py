"""The graph benchmark's floor: the API work the operator must do for N graphs, done by a
client with no reconcile logic, cache or validation.

`python -m hack.bench.graphs.floor --plan PLAN --kubeconfig KUBECONFIG --user-agent UA`
replays a plan that `hack.bench.graphs.recording` made from the operator's own requests in the
same benchmark run, on a fresh local cluster seeded with the same N graphs:

- **Watches.** The same lists and watches the operator made (paths, selectors, page size,
  timeout, bookmarks), through `controller.client.KubeClient`, the operator's transport: every
  watch event decoded by the standard library's `json` as the operator's informers decode it.
  A watch that ends is started again from the last resourceVersion seen. Of what it decodes
  the floor keeps only the uids of the graphs (its creates must name their owner) and which
  Deployments are available (a graph's final status cannot be written before).
- **Writes.** Each graph's successful writes (child creates, status writes, Events), in the
  operator's order and with the bodies it sent, encoded by `json.dumps` as the operator's
  client encodes them; the answers decoded as the operator decodes them (creates yes, status
  writes and Events no). Owner uids are filled in from the new cluster: a graph's from the
  watch, a created child's from its create's answer. Up to `--concurrency` writes at a time.
  A graph's writes start when the graph is seen; a final status (and what follows it) waits
  until the Deployments it reports on are available.
- **Everything else** the operator sent (discovery, the leader-election lease) at the same
  times after its start, a lease update with the resourceVersion and uid of the floor's own
  last read or write of it.

Its plan is loaded before any request; that CPU is printed (`setup_cpu_seconds ...`) so the
benchmark can take it out of the floor's CPU. On SIGTERM it prints one JSON line of counts
(requests failed, uids it could not fill in) and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.resource import Resource

Json = dict[str, Any]


def resource_of(path: str) -> tuple[Resource, str | None]:
    """The Resource and namespace of a collection path (/api/v1/... or /apis/g/v/...)."""
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    else:
        group, version, rest = parts[1], parts[2], parts[3:]
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    return Resource(group, version, rest[0], "", namespaced=namespace is not None), namespace


class Floor:
    def __init__(self, client: KubeClient, plan: Json, concurrency: int) -> None:
        self.client, self.plan = client, plan
        self.semaphore = asyncio.Semaphore(concurrency)
        #: (kind, name) -> uid in this cluster, for the owners the bodies name.
        self.uids: dict[tuple[str, str], str] = {}
        self.uid_kinds = {ref[1] for steps in plan["graphs"].values()
                          for step in steps["steps"] for ref in step["uids"]}
        #: The planned Deployments, each set once it is seen available.
        self.available = {d: asyncio.Event() for steps in plan["graphs"].values()
                          for d in steps["deployments"]}
        self.started: set[str] = set()
        #: resourceVersion and uid of what the floor last read or wrote, by object path.
        self.versions: dict[str, dict[str, str]] = {}
        self.tasks: list[asyncio.Task[None]] = []
        self.failed: list[str] = []
        self.unresolved = 0
        self.graphs_done = 0
        self.watch_events = 0

    # --- watches ---------------------------------------------------------------------------

    def seen(self, kind: str, obj: Json) -> None:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name"))
        if kind in self.uid_kinds:
            self.uids[(kind, name)] = str(meta.get("uid"))
        if kind == "DynamoGraphDeployment" and name in self.plan["graphs"] \
                and name not in self.started:
            self.started.add(name)
            self.tasks.append(asyncio.create_task(self.graph(name)))
        elif kind == "Deployment" and name in self.available:
            status, spec = obj.get("status") or {}, obj.get("spec") or {}
            if (status.get("availableReplicas") or 0) >= spec.get("replicas", 1):
                self.available[name].set()

    async def list_and_watch(self, entry: Json) -> None:
        resource, namespace = resource_of(entry["path"])
        query = dict(entry["watch_query"] or [])
        limit = int(entry["limit"] or 0)
        listed = await self.client.list(resource, namespace,
                                        label_selector=entry["labelSelector"],
                                        field_selector=entry["fieldSelector"], limit=limit)
        kind = str(listed.get("kind", "")).removesuffix("List")
        while True:
            for item in listed.get("items") or []:
                self.seen(kind, item)
            token = (listed.get("metadata") or {}).get("continue")
            if not token:
                break
            listed = await self.client.list(resource, namespace,
                                            label_selector=entry["labelSelector"],
                                            field_selector=entry["fieldSelector"],
                                            limit=limit, continue_token=token)
        version = str(listed["metadata"]["resourceVersion"])
        if entry["watch_query"] is None:
            return  # the operator only listed it
        timeout = int(query.get("timeoutSeconds", "300"))
        self.tasks.append(asyncio.create_task(self.watch(
            resource, namespace, entry, kind, version, timeout,
            query.get("allowWatchBookmarks") == "true")))

    async def watch(self, resource: Resource, namespace: str | None, entry: Json, kind: str,
                    version: str, seconds: int, bookmarks: bool) -> None:
        while True:
            async with self.client.watch_batches(
                    resource, namespace, resource_version=version, timeout_seconds=seconds,
                    read_timeout=seconds + 30.0, label_selector=entry["labelSelector"],
                    field_selector=entry["fieldSelector"], allow_bookmarks=bookmarks) as batches:
                async for batch in batches:
                    for event in batch:
                        obj = event.get("object") or {}
                        version = str((obj.get("metadata") or {}).get("resourceVersion")
                                      or version)
                        if event.get("type") == "BOOKMARK":
                            continue
                        self.watch_events += 1
                        self.seen(kind, obj)

    # --- writes ----------------------------------------------------------------------------

    async def send(self, step: Json) -> Json:
        body = step["body"]
        for path, kind, name in step["uids"]:
            uid = self.uids.get((kind, name))
            if uid is None:
                self.unresolved += 1
                continue
            target = body
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = uid
        try:
            answer = await self.client.request(
                step["method"], step["path"], query=[tuple(q) for q in step["query"]],
                body=body, content_type=step["content_type"] or "application/json",
                decode=step["decode"])
        except ApiError as err:
            self.failed.append(f"{step['verb']} {step['resource']}: {err.code}")
            return {}
        meta = answer.get("metadata") or {}
        if step["verb"] == "create" and meta.get("uid"):
            self.uids[(str(answer.get("kind")), str(meta.get("name")))] = str(meta["uid"])
        return answer

    async def graph(self, name: str) -> None:
        for step in self.plan["graphs"][name]["steps"]:
            for deployment in step["wait_for"]:
                await self.available[deployment].wait()
            async with self.semaphore:
                await self.send(step)
        self.graphs_done += 1

    async def global_requests(self, started: float) -> None:
        for step in self.plan["global"]:
            await asyncio.sleep(max(0.0, started + step["at"] - time.monotonic()))
            meta = (step["body"] or {}).get("metadata") or {}
            if step["method"] == "PUT" and step["path"] in self.versions:
                meta.update(self.versions[step["path"]])
            answer = await self.send(step)
            written = answer.get("metadata") or {}
            if written.get("resourceVersion"):
                path = step["path"] if step["method"] != "POST" else (
                    f"{step['path']}/{written.get('name')}")
                self.versions[path] = {"resourceVersion": str(written["resourceVersion"]),
                                       "uid": str(written.get("uid"))}

    async def run(self) -> None:
        started = time.monotonic()
        self.tasks.append(asyncio.create_task(self.global_requests(started)))
        async with asyncio.TaskGroup() as tg:
            for entry in self.plan["watches"]:
                tg.create_task(self.list_and_watch(entry))
        await asyncio.Event().wait()  # until SIGTERM

    def summary(self) -> Json:
        return {"failed": len(self.failed), "failures": sorted(set(self.failed))[:20],
                "unresolved_uids": self.unresolved, "graphs_done": self.graphs_done,
                "watch_events": self.watch_events}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.graphs.floor")
    parser.add_argument("--plan", type=Path, required=True)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--user-agent", required=True)
    parser.add_argument("--concurrency", type=int, default=8)
    return parser.parse_args(argv)


async def amain(args: argparse.Namespace) -> None:
    client = await KubeClient.connect(args.kubeconfig,
                                      ClientConfig(qps=None, user_agent=args.user_agent))
    cpu = time.process_time()
    plan = json.loads(args.plan.read_bytes())
    print(f"setup_cpu_seconds {time.process_time() - cpu:.4f}", flush=True)
    floor = Floor(client, plan, args.concurrency)
    loop = asyncio.get_running_loop()
    runner = asyncio.create_task(floor.run())
    loop.add_signal_handler(signal.SIGTERM, runner.cancel)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await runner
    finally:
        for task in floor.tasks:
            task.cancel()
        await asyncio.gather(*floor.tasks, return_exceptions=True)
        print(json.dumps(floor.summary()), flush=True)
        await client.close()


def main(argv: Sequence[str] | None = None) -> int:
    asyncio.run(amain(parse_args(sys.argv[1:] if argv is None else argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
