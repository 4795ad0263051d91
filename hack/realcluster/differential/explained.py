"""Differences between Kubernetes 1.20 and the local server that Kubernetes' own history
explains: case id -> the version and change. The local server follows current Kubernetes."""

from __future__ import annotations

EXPLAINED: dict[str, str] = {
}
