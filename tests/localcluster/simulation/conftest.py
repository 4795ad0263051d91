"""Fixtures of the simulation tests: typed clients of the simulated cluster."""

from __future__ import annotations

import pytest
from kubernetes_asyncio import client


@pytest.fixture
def core(sim_api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(sim_api)


@pytest.fixture
def apps(sim_api: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(sim_api)


@pytest.fixture
def batch(sim_api: client.ApiClient) -> client.BatchV1Api:
    return client.BatchV1Api(sim_api)


@pytest.fixture
def custom(sim_api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(sim_api)


@pytest.fixture
def discovery_api(sim_api: client.ApiClient) -> client.DiscoveryV1Api:
    return client.DiscoveryV1Api(sim_api)
