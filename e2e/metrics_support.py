"""Reading the operator's Prometheus `/metrics` in e2e tests: a scrape, and sums over its
samples by name and labels."""

from __future__ import annotations

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

#: (sample name, its labels) -> value.
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(port: int) -> Samples:
    """Every sample the operator serves on 127.0.0.1:`port`/metrics."""
    async with aiohttp.ClientSession() as session, session.get(
            f"http://127.0.0.1:{port}/metrics", timeout=aiohttp.ClientTimeout(total=5)) as r:
        text = await r.text()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples of `name` carrying these labels (and any others)."""
    wanted = set(labels.items())
    return sum(v for (n, got), v in samples.items() if n == name and wanted <= got)
