"""The event recorder against the local server: one Event per new story, repeats counted on
the first one, and a failure to record that never reaches the caller."""

from __future__ import annotations

from controller.client import KubeClient
from controller.events import EVENTS, EventRecorder
from controller.resource import CONFIG_MAPS


async def test_repeats_are_counted_on_one_event(client: KubeClient) -> None:
    subject = await client.create(CONFIG_MAPS, {"metadata": {"name": "subject",
                                                             "namespace": "default"}})
    subject = {**subject, "apiVersion": "v1", "kind": "ConfigMap"}
    recorder = EventRecorder(client, "events-test")
    await recorder.normal(subject, "Created", "made it")
    await recorder.normal(subject, "Created", "made it")
    await recorder.warning(subject, "Broken", "it broke")

    events = (await client.list(EVENTS, "default"))["items"]
    by_reason = {e["reason"]: e for e in events}
    assert sorted(by_reason) == ["Broken", "Created"] and len(events) == 2
    created = by_reason["Created"]
    assert created["count"] == 2 and created["type"] == "Normal"
    assert created["involvedObject"]["uid"] == subject["metadata"]["uid"]
    assert created["source"] == {"component": "events-test"}
    assert by_reason["Broken"]["count"] == 1 and by_reason["Broken"]["type"] == "Warning"


async def test_a_refused_event_is_swallowed(client: KubeClient) -> None:
    recorder = EventRecorder(client, "events-test")
    ghost = {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "ghost", "namespace": "no-such-namespace", "uid": "u-1"}}
    await recorder.normal(ghost, "Created", "nowhere to go")  # 404: logged, not raised
    await recorder.normal(ghost, "Created", "nowhere to go")  # not taken for a repeat
    assert (await client.list(EVENTS, "no-such-namespace"))["items"] == []
