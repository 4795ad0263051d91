"""Plain HTTP calls to things that are not the API server (workers' system ports, say).

One `HttpClient` per process holds one aiohttp session, made on first use and closed by
whoever owns the process (`close`). Every call carries its own total timeout; an answer of any
status is returned, and only a failure to get one (refused, reset, timed out) raises
`HttpError`, so callers branch on the status without catching aiohttp's exceptions.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import aiohttp

#: Bytes of an answer's body kept for messages; more is cut.
MAX_BODY = 2048


@dataclass(frozen=True)
class HttpAnswer:
    """The status and (cut) body of an answer."""

    status: int
    body: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class HttpError(Exception):
    """No answer: the connection failed or the call timed out."""


class HttpClient:
    """One shared session for the calls of a process."""

    def __init__(self, user_agent: str = "") -> None:
        self.user_agent = user_agent
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"User-Agent": self.user_agent} if self.user_agent else None
            # No pooling across hosts is needed beyond aiohttp's default; no cookies.
            self._session = aiohttp.ClientSession(headers=headers,
                                                  cookie_jar=aiohttp.DummyCookieJar())
        return self._session

    async def post_json(self, url: str, body: Any, *, seconds: float) -> HttpAnswer:
        """POST `body` as JSON; the answer, or HttpError when none came within `seconds`."""
        try:
            async with self._client().post(
                    url, json=body, timeout=aiohttp.ClientTimeout(total=seconds)) as response:
                raw = await response.content.read(MAX_BODY)
                return HttpAnswer(response.status, raw.decode("utf-8", "replace"))
        except TimeoutError:
            raise HttpError(f"POST {url}: no answer within {seconds:g}s") from None
        except (aiohttp.ClientError, OSError) as err:
            raise HttpError(f"POST {url}: {err or type(err).__name__}") from None

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
            # Let the connector's transports finish closing before the loop ends.
            await asyncio.sleep(0)
        self._session = None
