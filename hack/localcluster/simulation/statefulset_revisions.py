"""A StatefulSet's revisions: ControllerRevisions of its pod template, and the pods' labels.

As the real controller (`history` package), each distinct template is one ControllerRevision
`<set>-<hash>` (data `{"spec": {"template": ..., "$patch": "replace"}}`, a growing `revision`
number, controller-owned by the set); going back to an earlier template reuses its revision
with a new number, and at most `revisionHistoryLimit` (10) unused ones are kept. Pods carry
the revision's name in `controller-revision-hash`. When ControllerRevisions are not served,
the revision names are computed all the same, only not stored.
"""

from __future__ import annotations

import copy
from typing import Any

from .objects import controlled_by, meta, owner_reference
from .rollout import template_hash
from .writer import Writer

Json = dict[str, Any]

CONTROLLER_REVISIONS = ("apps", "controllerrevisions")
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
DEFAULT_HISTORY_LIMIT = 10


def revision_data(sts: Json) -> Json:
    """What a revision stores: the template, as a patch that replaces it (getPatch)."""
    template = copy.deepcopy((sts.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def revision_name(sts: Json) -> str:
    collisions = int((sts.get("status") or {}).get("collisionCount") or 0)
    return f"{meta(sts)['name']}-{template_hash(revision_data(sts), collisions)}"


class Revisions:
    """Reads and writes one controller's ControllerRevisions."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer

    def owned(self, sts: Json) -> list[Json]:
        if self.writer.served(CONTROLLER_REVISIONS) is None:
            return []
        return sorted((r for r in self.writer.owned(CONTROLLER_REVISIONS, sts)
                       if controlled_by(r, sts)), key=lambda r: int(r.get("revision") or 0))

    def update_revision(self, sts: Json) -> tuple[str, int]:
        """The name of the revision of the current template, stored (created, or renumbered
        when an older one comes back), and its number."""
        name = revision_name(sts)
        revisions = self.owned(sts)
        latest = max((int(r.get("revision") or 0) for r in revisions), default=0)
        existing = next((r for r in revisions if meta(r)["name"] == name), None)
        if self.writer.served(CONTROLLER_REVISIONS) is None:
            return name, latest + 1
        if existing is None:
            body = {"metadata": {
                "name": name, "namespace": meta(sts)["namespace"],
                "labels": dict(((sts.get("spec") or {}).get("selector") or {}).get(
                    "matchLabels") or {}),
                "ownerReferences": [owner_reference(sts)]},
                "data": revision_data(sts), "revision": latest + 1}
            created = self.writer.create(CONTROLLER_REVISIONS, meta(sts)["namespace"], body)
            return name, int(created.get("revision") or latest + 1) if created else latest + 1
        number = int(existing.get("revision") or 0)
        if number != latest:
            self.writer.update(CONTROLLER_REVISIONS, {**existing, "revision": latest + 1})
            number = latest + 1
        return name, number

    def prune(self, sts: Json, live: set[str]) -> None:
        """Drop the oldest revisions no pod uses, beyond revisionHistoryLimit."""
        limit = (sts.get("spec") or {}).get("revisionHistoryLimit")
        limit = DEFAULT_HISTORY_LIMIT if limit is None else int(limit)
        unused = [r for r in self.owned(sts) if meta(r)["name"] not in live]
        for revision in unused[:max(len(unused) - limit, 0)]:
            self.writer.delete(CONTROLLER_REVISIONS, revision)
