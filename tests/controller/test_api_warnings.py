"""The API server's `Warning` headers: parsed as client-go parses them, logged once per text."""

from __future__ import annotations

import pytest
import structlog
from harness import CRDS, schemaless_crd

import controller.client
from controller.api_warnings import WarningLog, parse_warning_header
from controller.client import KubeClient
from controller.resource import Resource

GIZMOS = Resource("test.example.com", "v1", "gizmos", "Gizmo")
TEXT = 'test.example.com/v1 Gizmo is "old"; use something else'


def test_header_values_are_parsed_with_escapes_dates_and_codes() -> None:
    assert parse_warning_header('299 - "a, b"') == ["a, b"]
    value = '299 - "one", 299 - "say \\"hi\\" \\\\ now" "Mon, 01 Jan 2024 00:00:00 GMT", 199 x "y"'
    assert parse_warning_header(value) == ["one", 'say "hi" \\ now']
    assert parse_warning_header("garbage") == []
    assert parse_warning_header('299 - "unterminated') == []


def test_each_text_is_logged_once() -> None:
    warnings = WarningLog()
    with structlog.testing.capture_logs() as logs:
        for _ in range(3):
            warnings.observe(['299 - "a"', '299 - "b", 299 - "a"'])
    assert [(e["event"], e["warning"]) for e in logs] == [
        ("api server warning", "a"), ("api server warning", "b")]


async def test_a_deprecated_version_is_logged_once_for_many_requests(
        client: KubeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(controller.client, "WARNINGS", WarningLog())
    crd = schemaless_crd("gizmo", "Gizmo")
    crd["spec"]["versions"][0].update(deprecated=True, deprecationWarning=TEXT)
    await client.create(CRDS, crd)
    with structlog.testing.capture_logs() as logs:
        for i in range(3):
            await client.create(GIZMOS, {"apiVersion": "test.example.com/v1", "kind": "Gizmo",
                                         "metadata": {"name": f"g{i}", "namespace": "default"}})
            await client.list(GIZMOS, "default")
    warned = [e for e in logs if e["event"] == "api server warning"]
    assert [e["warning"] for e in warned] == [TEXT]
