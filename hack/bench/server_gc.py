"""The in-process API server's garbage collector during a measurement.

The local cluster runs in the benchmark's own process. At thousands of graphs its heap holds
millions of objects, and one full (generation 2) collection of it stops the server for
seconds: long enough that an operator's lease renewal misses its deadline. A real
kube-apiserver, written in Go, has no such pause. `held_full_collections("freeze")` moves
what exists to the permanent generation and lets only young collections run until it ends;
`"default"` leaves the collector alone. Either way it counts the full collections made.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The choices of every benchmark's `--server-gc`.
MODES = ("freeze", "default")


class FullCollections:
    """This process's full garbage collections (generation 2): each as (wall start, ms)."""

    def __init__(self) -> None:
        self.collections: list[tuple[float, float]] = []
        self._started = 0.0

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            ms = (time.perf_counter() - self._started) * 1000
            self.collections.append((time.time() - ms / 1000, ms))

    def figures(self) -> dict[str, Any]:
        return {"server_full_gcs": len(self.collections),
                "server_full_gc_seconds": round(sum(ms for _, ms in self.collections) / 1000,
                                                3)}


@contextmanager
def held_full_collections(mode: str) -> Iterator[FullCollections]:
    """With `mode` "freeze", no full collection until the block ends; counted either way."""
    if mode not in MODES:
        raise ValueError(f"--server-gc must be one of {MODES}, not {mode!r}")
    thresholds = gc.get_threshold()
    try:
        if mode == "freeze":
            gc.collect()
            gc.freeze()
            gc.set_threshold(thresholds[0], thresholds[1], 1_000_000)
        with FullCollections() as full:
            yield full
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
