"""The rule of a component's preview features: `v1alpha1`'s checkpoint, gpuMemoryService and
failover at the top of the service, `v1beta1`'s under `experimental`.

Checkpoint moves as it is. GPU memory service and failover differ in two ways: `v1alpha1`
switches them with `enabled` (`v1beta1`: present means on) and spells the modes `intraPod`
and `interPod` (`v1beta1`: `IntraPod`, `InterPod`). So:

- `enabled: true` (or left out) -> present in the hub, without `enabled`, its mode respelled;
- `enabled: false` -> absent from the hub; the spoke object is saved in the payload and comes
  back while the hub still has none;
- from the hub: present -> `enabled: true`, the mode spelled back.
"""

from __future__ import annotations

from api.conversion.rules import Rule, lifted
from api.kube import Json

__all__ = ["SWITCHED", "experimental_rule"]

EXPERIMENTAL = ("checkpoint", "gpuMemoryService", "failover")
#: The features `v1alpha1` switches with `enabled`.
SWITCHED = ("gpuMemoryService", "failover")
_TO_HUB = {"intraPod": "IntraPod", "interPod": "InterPod"}
_TO_SPOKE = {hub: spoke for spoke, hub in _TO_HUB.items()}


def _respelled(value: Json, spelling: dict[str, str]) -> Json:
    mode = value.get("mode")
    if isinstance(mode, str) and mode in spelling:
        return {**value, "mode": spelling[mode]}
    return value


def experimental_rule() -> Rule:
    """The three fields of `v1alpha1` <-> `experimental`, with the switches converted."""
    inner = lifted("experimental", EXPERIMENTAL)

    def to_hub(src: Json, restored: Json) -> tuple[Json, Json]:
        kept = dict(src)
        save: Json = {}
        for key in SWITCHED:
            value = kept.get(key)
            if not isinstance(value, dict):
                continue
            if value.get("enabled") is False:
                del kept[key]
                save[key] = value
                continue
            kept[key] = _respelled({k: v for k, v in value.items() if k != "enabled"},
                                   _TO_HUB)
        dst, inner_save = inner.to_hub(kept, restored)
        return dst, {**inner_save, **save}

    def to_spoke(src: Json, restored: Json) -> tuple[Json, Json]:
        dst, save = inner.to_spoke(src, restored)
        for key in SWITCHED:
            value = dst.get(key)
            if isinstance(value, dict):
                dst[key] = {"enabled": True, **_respelled(value, _TO_SPOKE)}
            elif key not in dst:
                disabled = restored.get(key)
                if isinstance(disabled, dict) and disabled.get("enabled") is False:
                    dst[key] = disabled
        return dst, save

    return Rule(EXPERIMENTAL, ("experimental",), to_hub, to_spoke)
