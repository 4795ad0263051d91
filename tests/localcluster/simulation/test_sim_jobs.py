"""Jobs: pods run to completion, counts, Complete/Failed conditions, back-off limit, modes."""

from __future__ import annotations

from kubernetes_asyncio import client
from simulation_support import condition, eventually, job

from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import JOB_DURATION, JOB_OUTCOME

NS = "default"


async def finished(batch: client.BatchV1Api, name: str, ctype: str) -> client.V1Job | None:
    j = await batch.read_namespaced_job(name, NS)
    c = condition(j, ctype)
    return j if c is not None and c.status == "True" else None


async def test_job_completes(batch: client.BatchV1Api, core: client.CoreV1Api) -> None:
    await batch.create_namespaced_job(NS, job("ok", completions=2, parallelism=2))
    j = await eventually(lambda: finished(batch, "ok", "Complete"))
    s = j.status
    assert (s.succeeded, s.failed, s.active, s.ready, s.terminating) == (2, None, None, 0, 0)
    assert s.start_time is not None and s.completion_time is not None
    assert [c.type for c in s.conditions] == ["SuccessCriteriaMet", "Complete"]
    for c in s.conditions:
        assert (c.reason, c.message) == ("CompletionsReached",
                                         "Reached expected number of succeeded pods")
    pods = (await core.list_namespaced_pod(NS, label_selector="job-name=ok")).items
    assert len(pods) == 2 and {p.status.phase for p in pods} == {"Succeeded"}
    term = pods[0].status.container_statuses[0].state.terminated
    assert (term.exit_code, term.reason) == (0, "Completed")
    ref = pods[0].metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.controller, ref.block_owner_deletion) == (
        "Job", "ok", True, True)
    assert pods[0].metadata.labels["batch.kubernetes.io/controller-uid"] == j.metadata.uid
    reasons = {e.reason for e in (await core.list_namespaced_event(NS)).items
               if e.involved_object.name == "ok"}
    assert {"SuccessfulCreate", "Completed"} <= reasons


async def test_job_runs_while_active(batch: client.BatchV1Api) -> None:
    await batch.create_namespaced_job(NS, job("slow", annotations={JOB_DURATION: "0.5"}))

    async def running() -> client.V1Job | None:
        j = await batch.read_namespaced_job("slow", NS)
        return j if j.status.active == 1 and j.status.ready == 1 else None

    j = await eventually(running)
    assert j.status.conditions is None and j.status.start_time is not None
    await eventually(lambda: finished(batch, "slow", "Complete"))


async def test_job_fails_after_backoff_limit(batch: client.BatchV1Api,
                                             core: client.CoreV1Api) -> None:
    await batch.create_namespaced_job(NS, job("bad", backoffLimit=1,
                                              annotations={JOB_OUTCOME: "fail",
                                                           JOB_DURATION: "0.02"}))
    j = await eventually(lambda: finished(batch, "bad", "Failed"))
    assert j.status.failed == 2 and j.status.succeeded is None and j.status.active is None
    assert [c.type for c in j.status.conditions] == ["FailureTarget", "Failed"]
    failed = condition(j, "Failed")
    assert (failed.reason, failed.message) == ("BackoffLimitExceeded",
                                               "Job has reached the specified backoff limit")
    pods = (await core.list_namespaced_pod(NS, label_selector="job-name=bad")).items
    assert len(pods) == 2 and {p.status.phase for p in pods} == {"Failed"}
    warnings = [e for e in (await core.list_namespaced_event(NS)).items
                if e.reason == "BackoffLimitExceeded"]
    assert warnings and warnings[0].type == "Warning"


async def test_outcome_chosen_in_process(batch: client.BatchV1Api,
                                         sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    sim_cluster.simulation.behaviors.set_job_outcome(NS, "chosen", "fail", duration=0.01)
    await batch.create_namespaced_job(NS, job("chosen", backoffLimit=0))
    j = await eventually(lambda: finished(batch, "chosen", "Failed"))
    assert j.status.failed == 1


async def test_on_failure_restarts_count_against_the_limit(batch: client.BatchV1Api) -> None:
    body = job("retry", backoffLimit=2, annotations={JOB_OUTCOME: "fail", JOB_DURATION: "0.01"})
    body["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    await batch.create_namespaced_job(NS, body)
    j = await eventually(lambda: finished(batch, "retry", "Failed"), within=10)
    assert j.status.failed == 3


async def test_indexed_job(batch: client.BatchV1Api, core: client.CoreV1Api) -> None:
    await batch.create_namespaced_job(NS, job("idx", completions=3, parallelism=3,
                                              completionMode="Indexed"))
    j = await eventually(lambda: finished(batch, "idx", "Complete"))
    assert j.status.completed_indexes == "0-2"
    pods = (await core.list_namespaced_pod(NS, label_selector="job-name=idx")).items
    indexes = sorted(p.metadata.annotations["batch.kubernetes.io/job-completion-index"]
                     for p in pods)
    assert indexes == ["0", "1", "2"]
    for p in pods:
        index = p.metadata.labels["batch.kubernetes.io/job-completion-index"]
        assert p.metadata.name.startswith(f"idx-{index}-")


async def test_suspended_job_runs_nothing(batch: client.BatchV1Api,
                                          sim_cluster: LocalCluster) -> None:
    await batch.create_namespaced_job(NS, job("held", suspend=True))

    async def suspended() -> client.V1Job | None:
        return await finished(batch, "held", "Suspended")

    j = await eventually(suspended)
    assert j.status.start_time is None and j.status.active is None
    await batch.patch_namespaced_job("held", NS, {"spec": {"suspend": False}})
    await eventually(lambda: finished(batch, "held", "Complete"))


async def test_ttl_after_finished_deletes_the_job(batch: client.BatchV1Api) -> None:
    await batch.create_namespaced_job(NS, job("ttl", ttlSecondsAfterFinished=0))

    async def gone() -> bool:
        try:
            await batch.read_namespaced_job("ttl", NS)
        except client.ApiException as err:
            return err.status == 404
        return False

    await eventually(gone)
