"""Fixtures of the kubectl tests: the Widget CRD installed through kubectl itself."""

from __future__ import annotations

import pytest
from kubectl_support import install_widgets

from hack.localcluster.testing import Kubectl


@pytest.fixture
async def widgets(kubectl: Kubectl) -> Kubectl:
    """kubectl, against a cluster that serves the Widget CRD."""
    await install_widgets(kubectl)
    return kubectl
