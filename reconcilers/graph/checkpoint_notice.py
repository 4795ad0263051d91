"""The warning a graph gets when it asks for checkpoint and restore, which this operator does
not do (the original moves it to a separate snapshot operator): its pods start cold, and the
graph works. Said once per generation of the graph, when its status takes that generation."""

from __future__ import annotations

from typing import Any

from controller.events import EventRecorder

Json = dict[str, Any]

__all__ = ["CHECKPOINT_IGNORED", "checkpointed_components", "warn_checkpoint_ignored"]

CHECKPOINT_IGNORED = "CheckpointIgnored"


def checkpointed_components(graph: Json) -> list[str]:
    """The components of a graph (as stored, `v1beta1`) with `experimental.checkpoint`
    enabled, in spec order."""
    components = (graph.get("spec") or {}).get("components") or []
    return [str(c.get("name", "")) for c in components
            if isinstance(c, dict)
            and (((c.get("experimental") or {}).get("checkpoint") or {}).get("enabled") is True)]


async def warn_checkpoint_ignored(recorder: EventRecorder, graph: Json,
                                  previous_status: Json | None) -> None:
    """A Warning event when the graph asks for checkpoints and its status has just taken a
    new generation (so a spec change says it again, and nothing else does)."""
    generation = (graph.get("metadata") or {}).get("generation")
    if (previous_status or {}).get("observedGeneration") == generation:
        return
    names = checkpointed_components(graph)
    if names:
        await recorder.warning(
            graph, CHECKPOINT_IGNORED,
            f"Checkpoint and restore are not supported by this operator; component(s) "
            f"{', '.join(names)} start cold (experimental.checkpoint is kept, not acted on)")
