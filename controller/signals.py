"""Signal handling for the operator process: the first SIGTERM/SIGINT asks for a clean
stop, a second one exits at once (as controller-runtime's signal handler does)."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable


def stop_on_signals(stop: Callable[[], None]) -> None:
    """Call `stop` on the first SIGTERM or SIGINT; exit with status 1 on the second."""
    loop = asyncio.get_running_loop()
    received = 0

    def handle() -> None:
        nonlocal received
        received += 1
        if received > 1:
            os._exit(1)
        stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, handle)
