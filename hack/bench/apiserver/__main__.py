"""Benchmark the local API server against a bare JSON store: `python -m hack.bench.apiserver`.

Each server runs in its own subprocess; this process is the client. Phases, per server:
1. writes: create `--writes` ConfigMaps with `--concurrency` requests in flight -> writes/s;
2. fan-out: open `--watches` watches, create `--objects` more ConfigMaps, and time until every
   watch has seen every event; then time one list of everything;
and the server's peak RSS. The last line printed is one JSON object with all figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import ssl
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from hack.bench import calibration
from hack.bench.checks import ImpossibleFigures, at_least, check, report_and_exit_code
from hack.processes import peak_rss_mib

NAMESPACE = "default"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


@dataclass
class Server:
    """A server subprocess and how to reach it."""

    process: asyncio.subprocess.Process
    url: str
    token: str


@asynccontextmanager
async def start(kind: str, workdir: Path) -> AsyncIterator[Server]:
    token = ""
    if kind == "localcluster":
        kubeconfig = workdir / "kubeconfig"
        token = secrets.token_urlsafe(24)  # the static admin token (the kubeconfig has a cert)
        args = ["-m", "hack.localcluster", "--port", "0", "--kubeconfig", str(kubeconfig),
                "--no-simulation", "--token", token]
    else:
        args = ["-m", "hack.bench.apiserver.floor_server", "--port", "0"]
    proc = await asyncio.create_subprocess_exec(sys.executable, *args,
                                                stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    async with asyncio.timeout(30):
        line = (await proc.stdout.readline()).decode().strip()
    if not line.startswith("ready "):
        raise RuntimeError(f"{kind} did not start: {line!r}")
    try:
        yield Server(proc, line.split(" ", 1)[1], token)
    finally:
        proc.terminate()
        await proc.wait()



def configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"bench": "apiserver"}},
            "data": {"key": "value-" + name}}


async def create_many(session: aiohttp.ClientSession, url: str, prefix: str, n: int,
                      concurrency: int) -> float:
    """Create n ConfigMaps; returns elapsed seconds."""
    names = iter(range(n))

    async def worker() -> None:
        for i in names:
            async with session.post(url + PATH, json=configmap(f"{prefix}-{i}")) as resp:
                if resp.status != 201:
                    raise RuntimeError(f"create failed: {resp.status} {await resp.text()}")
                await resp.read()

    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for _ in range(concurrency):
            group.create_task(worker())
    return time.perf_counter() - started


async def watch_until(session: aiohttp.ClientSession, url: str, rv: str, expected: int,
                      opened: asyncio.Event) -> None:
    """Count watch events (lines) until `expected` arrived."""
    params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "600"}
    async with session.get(url + PATH, params=params,
                           timeout=aiohttp.ClientTimeout(total=None, sock_read=120)) as resp:
        opened.set()
        seen = 0
        async for line in resp.content:
            if line.strip():
                seen += 1
                if seen >= expected:
                    return


async def bench_one(kind: str, args: argparse.Namespace) -> dict[str, float]:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-"))
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    async with start(kind, workdir) as server:
        headers = {"Authorization": f"Bearer {server.token}"} if server.token else {}
        connector = aiohttp.TCPConnector(ssl=ctx, limit=args.concurrency + args.watches + 4)
        async with aiohttp.ClientSession(headers=headers, connector=connector,
                                         timeout=aiohttp.ClientTimeout(total=600)) as session:
            write_seconds = await create_many(session, server.url, "w", args.writes,
                                              args.concurrency)
            async with session.get(server.url + PATH, params={"limit": "1"}) as resp:
                rv = (await resp.json())["metadata"]["resourceVersion"]
            events = [asyncio.Event() for _ in range(args.watches)]
            started = time.perf_counter()
            async with asyncio.TaskGroup() as group:
                for event in events:
                    group.create_task(watch_until(session, server.url, rv, args.objects, event))
                for event in events:
                    await event.wait()
                fanout_start = time.perf_counter()
                create_seconds = await create_many(session, server.url, "f", args.objects,
                                                   args.concurrency)
            fanout_seconds = time.perf_counter() - fanout_start
            del started
            list_start = time.perf_counter()
            async with session.get(server.url + PATH) as resp:
                items = len((await resp.json())["items"])
            list_seconds = time.perf_counter() - list_start
        rss = peak_rss_mib(server.process.pid)
    return {
        "writes_per_second": round(args.writes / write_seconds, 1),
        "fanout_creates_per_second": round(args.objects / create_seconds, 1),
        "fanout_seconds_all_watches_done": round(fanout_seconds, 2),
        "list_seconds": round(list_seconds, 3),
        "listed_items": items,
        "peak_rss_mib": round(rss, 1),
    }


async def run(args: argparse.Namespace) -> dict[str, object]:
    ours = await bench_one("localcluster", args)
    floor = await bench_one("floor", args)
    result: dict[str, object] = {
        "writes": args.writes, "objects": args.objects, "watches": args.watches,
        "concurrency": args.concurrency, "cpus": os.cpu_count(),
    }
    for key, value in ours.items():
        result[f"ours_{key}"] = value
    for key, value in floor.items():
        result[f"floor_{key}"] = value
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writes", type=int, default=3000)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--watches", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    try:
        cal = calibration.checked()
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    result = calibration.add_to(asyncio.run(run(args)), cal)
    for key, value in result.items():
        print(f"{key:40} {value}")
    try:
        check(problem for side in ("ours", "floor") for problem in (
            at_least(f"{side} writes per second", _number(result[f"{side}_writes_per_second"]),
                     0.001),
            at_least(f"{side} listed items", _number(result[f"{side}_listed_items"]),
                     args.writes + args.objects)))
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    print(json.dumps(result))
    return 0


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


if __name__ == "__main__":
    sys.exit(main())
