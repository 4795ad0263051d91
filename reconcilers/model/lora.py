"""Loading and unloading a LoRA adapter in Dynamo workers, over their system port.

A worker answers `POST /engine/v1/load_lora` with `{"lora_name": …, "source": {"uri": …}}`
and `POST /engine/v1/unload_lora` with `{"lora_name": …}`; a 2xx is success unless its body
says `"status": "error"`. Calls to many endpoints run in one `asyncio.TaskGroup` (every call
has an owner that awaits or cancels it), at most `concurrency` at once, each bounded by
`request_timeout` and all together by `overall_timeout`: a hanging worker costs the others
nothing beyond the overall bound. The session is the process's one `HttpClient`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from controller.http import HttpAnswer, HttpClient, HttpError

LOAD_PATH = "/engine/v1/load_lora"
UNLOAD_PATH = "/engine/v1/unload_lora"


@dataclass(frozen=True)
class LoraSettings:
    """Bounds of the calls, and how soon a model with unready endpoints is looked at again."""

    concurrency: int = 10
    request_timeout: float = 15.0
    overall_timeout: float = 30.0
    retry_after: float = 30.0


def load_body(lora_name: str, uri: str) -> dict[str, Any]:
    return {"lora_name": lora_name, "source": {"uri": uri}}


def unload_body(lora_name: str) -> dict[str, Any]:
    return {"lora_name": lora_name}


def succeeded(answer: HttpAnswer) -> bool:
    """2xx, unless the body says `"status": "error"` (how Dynamo's handlers report failure)."""
    if not answer.ok:
        return False
    try:
        body = json.loads(answer.body)
    except ValueError:
        return True
    return not (isinstance(body, dict) and body.get("status") == "error")


async def call_all(http: HttpClient, addresses: Iterable[str], path: str, body: Any,
                   settings: LoraSettings, verb: str) -> dict[str, str | None]:
    """POST `body` to `path` of every address; address -> None on success, else the error.

    `verb` names the call in errors ("load LoRA", "unload LoRA")."""
    targets = list(dict.fromkeys(addresses))
    results: dict[str, str | None] = {}
    gate = asyncio.Semaphore(max(1, settings.concurrency))

    async def one(address: str) -> None:
        async with gate:
            try:
                answer = await http.post_json(address.rstrip("/") + path, body,
                                              seconds=settings.request_timeout)
            except HttpError as err:
                results[address] = f"{address}: {verb} failed: {err}"
                return
        results[address] = None if succeeded(answer) else (
            f"{address}: {verb} failed with status {answer.status}: {answer.body.strip()}")

    try:
        async with asyncio.timeout(settings.overall_timeout):
            async with asyncio.TaskGroup() as group:
                for address in targets:
                    group.create_task(one(address), name=f"{verb} {address}")
    except TimeoutError:
        pass  # the group cancelled what was left; those are reported below
    for address in targets:
        results.setdefault(address, f"{address}: {verb} failed: no answer within "
                                    f"{settings.overall_timeout:g}s overall")
    return results
