"""Addresses of simulated nodes and pods, all on loopback so tests can serve "inside" a pod.

Nodes get 127.0.0.2, 127.0.0.3, ...; pods get 127.0.1.1, 127.0.1.2, ... (skipping .0 and .255),
handed out in order and reused only after the pool wraps, so a test's server on a deleted pod's
address is not mistaken for a new pod.
"""

from __future__ import annotations

import ipaddress

_FIRST_POD = int(ipaddress.IPv4Address("127.0.1.1"))
_LAST_POD = int(ipaddress.IPv4Address("127.255.255.254"))


def node_ip(index: int) -> str:
    return str(ipaddress.IPv4Address("127.0.0.2") + index)


class PodAddresses:
    """Pod IP allocation from 127.0.1.0 upwards."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next = _FIRST_POD

    def allocate(self) -> str:
        for _ in range(_LAST_POD - _FIRST_POD):
            n = self._next
            self._next = _FIRST_POD if n >= _LAST_POD else n + 1
            if n & 0xFF in (0, 255):
                continue
            ip = str(ipaddress.IPv4Address(n))
            if ip not in self._used:
                self._used.add(ip)
                return ip
        raise RuntimeError("no pod addresses left")

    def claim(self, ip: str) -> None:
        """Mark an address in use (a pod restored from disk keeps its IP)."""
        self._used.add(ip)

    def release(self, ip: str) -> None:
        self._used.discard(ip)
