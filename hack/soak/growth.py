"""Memory and work-queue growth of the soak's operator replicas, per leadership term.

A replica's RSS and queue depth climb when it becomes leader (its caches fill, every object
is queued once) and a leader is killed every few minutes, so a slope over a whole process's
life measures that warm-up, not a leak. The figures here take each leadership term (the
samples of one replica while it held the lease), drop its first `warmup` seconds, and fit a
least-squares line to the rest: steady churn with a leak shows as a positive slope in every
term. The largest slope over terms long enough to fit is reported.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import aiohttp


@dataclass
class Sample:
    """One reading of one replica."""

    at: float
    rss: int
    leader: bool
    queue_depth: int | None = None


@dataclass
class Growth:
    """The samples of every replica, and the figures derived from them."""

    warmup: float = 60.0
    min_samples: int = 6
    samples: dict[str, list[Sample]] = field(default_factory=dict)

    def add(self, replica: str, sample: Sample) -> None:
        self.samples.setdefault(replica, []).append(sample)

    def terms(self) -> list[list[Sample]]:
        """Each replica's runs of consecutive leader samples, after their warm-up."""
        out = []
        for samples in self.samples.values():
            term: list[Sample] = []
            for sample in [*samples, None]:
                if sample is not None and sample.leader:
                    term.append(sample)
                    continue
                steady = [s for s in term if s.at - term[0].at >= self.warmup] if term else []
                if len(steady) >= self.min_samples:
                    out.append(steady)
                term = []
        return out

    def figures(self) -> dict[str, object]:
        terms = self.terms()
        rss_slopes = [slope([(s.at, s.rss) for s in t]) / 2**20 for t in terms]
        queue_slopes = [slope([(s.at, s.queue_depth) for s in t if s.queue_depth is not None])
                        for t in terms]
        every = [s for samples in self.samples.values() for s in samples]
        depths = [s.queue_depth for s in every if s.queue_depth is not None]
        return {
            "rssPeakMiB": round(max((s.rss for s in every), default=0) / 2**20, 1),
            "steadyLeaderTerms": len(terms),
            "rssSlopeMiBPerMin": round(max(rss_slopes), 2) if rss_slopes else None,
            "queueDepthMax": max(depths, default=0),
            "queueSlopePerMin": round(max(queue_slopes), 2) if queue_slopes else None,
        }


def slope(points: list[tuple[float, int]]) -> float:
    """Least-squares slope of value over time, per minute; 0 for fewer than two points."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return 60.0 * sum((t - mx) * (v - my) for t, v in points) / var


def rss_bytes(pid: int) -> int:
    """Resident set size of a live process, 0 once it is gone."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def queue_depth(session: aiohttp.ClientSession, metrics_port: int) -> int | None:
    """The sum of `workqueue_depth` over the controllers, from a replica's /metrics."""
    try:
        async with session.get(f"http://127.0.0.1:{metrics_port}/metrics",
                               timeout=aiohttp.ClientTimeout(total=2)) as response:
            text = await response.text()
    except (aiohttp.ClientError, TimeoutError):
        return None
    return int(sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("workqueue_depth{")))
