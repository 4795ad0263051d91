"""Printers of the batch group: Job."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cells import (
    as_dict,
    as_int,
    condition_true,
    format_label_selector,
    is_deleting,
    named_row,
    template_cells,
)
from .columns import Col, Printer, Row, named_columns, template_columns
from .time_format import human_duration, parse_time

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_SUCCEEDED = (
    "The number of pods which reached phase Succeeded. The value increases monotonically for a "
    "given spec. However, it may decrease in reaction to scale down of elastic indexed jobs."
)
_SELECTOR = (
    "A label query over pods that should match the pod count. Normally, the system sets this "
    "field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/"
    "labels/#label-selectors"
)


def _job_state(obj: Json) -> str:
    conditions = as_dict(obj.get("status")).get("conditions")
    if condition_true(conditions, "Complete"):
        return "Complete"
    if condition_true(conditions, "Failed"):
        return "Failed"
    if is_deleting(obj):
        return "Terminating"
    if condition_true(conditions, "Suspended"):
        return "Suspended"
    if condition_true(conditions, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def _print_job(obj: Json, now: datetime) -> Row:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    succeeded = as_int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{as_int(spec.get('completions'))}"
    else:
        parallelism = as_int(spec.get("parallelism"))
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start, finish = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = ""
    if start is not None:
        duration = human_duration((finish or now) - start)
    cells = named_row(
        obj,
        now,
        _job_state(obj),
        completions,
        duration,
        after_age=[*template_cells(obj), format_label_selector(spec.get("selector"))],
    )
    return cells, None


PRINTERS: dict[tuple[str, str], Printer] = {
    ("batch", "Job"): Printer(
        named_columns(
            Col("Status", "string", "Status of the job."),
            Col("Completions", "string", _SUCCEEDED),
            Col("Duration", "string", "Time required to complete the job."),
            after_age=template_columns(_SELECTOR),
        ),
        _print_job,
    ),
}
