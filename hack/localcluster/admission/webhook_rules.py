"""Which admission webhooks a request calls: rules, scope, selectors and matchPolicy.

The webhook configurations are read from storage on every request (there is no cache to lag
behind), with the defaults of admissionregistration/v1 filled in where a field is absent
(failurePolicy Fail, matchPolicy Equivalent, timeoutSeconds 10, scope "*"). A rule's
`resources` entry matches as kube-apiserver's does: `pods` the resource only, `pods/status` one
subresource, `pods/*` every subresource, `*` every resource, `*/scale` one subresource of every
resource, `*/*` everything. With matchPolicy Equivalent a request also matches a rule naming
another served version of the same resource, and the webhook is then sent that version (relabelled:
like every version change of the local server, it converts no fields).

A namespace's labels always include `kubernetes.io/metadata.name`, which kube-apiserver sets on
every namespace, so `namespaceSelector`s written against it work. Webhook configurations
themselves never go through webhooks (kube-apiserver exempts them so that a broken webhook
cannot lock itself in). `matchConditions` (CEL) are not evaluated: a webhook that has them is
called as if they were true.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..registry import Registry, ResourceType
from ..selectors import LabelSelector
from ..storage import Storage

Json = dict[str, Any]

__all__ = ["Attributes", "Hook", "Invocation", "matching_hooks"]

VALIDATING = ("admissionregistration.k8s.io", "validatingwebhookconfigurations")
MUTATING = ("admissionregistration.k8s.io", "mutatingwebhookconfigurations")
_EXEMPT_GROUPS = ("admissionregistration.k8s.io",)
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
SCALE_KIND = ("autoscaling", "v1", "Scale")


@dataclass(frozen=True)
class Attributes:
    """What admission knows about one write: kube-apiserver's admission.Attributes."""

    rt: ResourceType
    operation: str  # CREATE, UPDATE or DELETE
    namespace: str
    name: str
    subresource: str = ""
    dry_run: bool = False

    @property
    def kind(self) -> tuple[str, str, str]:
        """The kind of the objects sent: the resource's own, or Scale for `/scale`."""
        if self.subresource == "scale":
            return SCALE_KIND
        return (self.rt.group, self.rt.version, self.rt.kind)


@dataclass(frozen=True)
class Hook:
    """One webhook of a configuration, with v1 defaults applied."""

    configuration: str
    mutating: bool
    spec: Json

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def failure_policy(self) -> str:
        return str(self.spec.get("failurePolicy") or "Fail")

    @property
    def match_policy(self) -> str:
        return str(self.spec.get("matchPolicy") or "Equivalent")

    @property
    def timeout(self) -> int:
        value = self.spec.get("timeoutSeconds")
        return int(value) if isinstance(value, int) and value > 0 else 10

    @property
    def side_effects(self) -> str:
        return str(self.spec.get("sideEffects") or "")


@dataclass(frozen=True)
class Invocation:
    """A webhook to call, and the version of the resource it asked for."""

    hook: Hook
    rt: ResourceType


def matching_hooks(storage: Storage, registry: Registry, attrs: Attributes,
                   obj: Json | None, old: Json | None, *, mutating: bool) -> list[Invocation]:
    """The webhooks of one kind (mutating or validating) that `attrs` calls, in call order:
    configurations sorted by name, webhooks in their configuration's order."""
    if attrs.rt.group in _EXEMPT_GROUPS:
        return []
    configs = storage.list_objects(MUTATING if mutating else VALIDATING, None)
    out = []
    for config in sorted(configs, key=lambda c: str(c["metadata"]["name"])):
        for spec in config.get("webhooks") or []:
            if not isinstance(spec, dict):
                continue
            hook = Hook(str(config["metadata"]["name"]), mutating, spec)
            target = _matched_version(registry, hook, attrs)
            if target is None:
                continue
            if not _namespace_matches(storage, hook, attrs, obj, old):
                continue
            if not _object_matches(hook, obj, old):
                continue
            out.append(Invocation(hook, target))
    return out


def _matched_version(registry: Registry, hook: Hook, attrs: Attributes) -> ResourceType | None:
    rt = attrs.rt
    if _rules_match(hook, attrs, rt):
        return rt
    if hook.match_policy != "Equivalent":
        return None
    for other in registry.versions_of(rt.group, rt.plural):
        if other.version != rt.version and _rules_match(hook, attrs, other):
            return other
    return None


def _rules_match(hook: Hook, attrs: Attributes, rt: ResourceType) -> bool:
    return any(isinstance(rule, dict) and _rule_matches(rule, attrs, rt)
               for rule in hook.spec.get("rules") or [])


def _listed(values: Any, value: str) -> bool:
    items = values if isinstance(values, list) else []
    return "*" in items or value in items


def _rule_matches(rule: Json, attrs: Attributes, rt: ResourceType) -> bool:
    if not (_listed(rule.get("operations"), attrs.operation)
            and _listed(rule.get("apiGroups"), rt.group)
            and _listed(rule.get("apiVersions"), rt.version)):
        return False
    scope = rule.get("scope") or "*"
    if (scope == "Cluster" and rt.namespaced) or (scope == "Namespaced" and not rt.namespaced):
        return False
    sub = attrs.subresource
    for entry in rule.get("resources") or []:
        resource, slash, subresource = str(entry).partition("/")
        if resource not in ("*", rt.plural):
            continue
        if not slash and not sub:
            return True
        if slash and sub and subresource in ("*", sub):
            return True
    return False


def _selector_matches(selector: Any, labels: dict[str, str] | None) -> bool:
    if not isinstance(selector, dict) or not selector:
        return True
    return LabelSelector.from_label_selector(selector).matches(labels)


def _labels(obj: Json | None) -> dict[str, str] | None:
    if obj is None:
        return None
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _namespace_matches(storage: Storage, hook: Hook, attrs: Attributes, obj: Json | None,
                       old: Json | None) -> bool:
    selector = hook.spec.get("namespaceSelector")
    if not isinstance(selector, dict) or not selector:
        return True
    rt = attrs.rt
    if rt.group == "" and rt.plural == "namespaces":
        # A namespace is matched by its own labels.
        candidates = [o for o in (obj, old) if o is not None]
        return any(_selector_matches(selector, {**(_labels(o) or {}),
                                                NAMESPACE_NAME_LABEL: attrs.name})
                   for o in candidates)
    if not rt.namespaced:
        return True
    namespace = storage.get(("", "namespaces"), "", attrs.namespace)
    labels = dict(_labels(namespace) or {})
    labels[NAMESPACE_NAME_LABEL] = attrs.namespace
    return _selector_matches(selector, labels)


def _object_matches(hook: Hook, obj: Json | None, old: Json | None) -> bool:
    selector = hook.spec.get("objectSelector")
    if not isinstance(selector, dict) or not selector:
        return True
    return any(_selector_matches(selector, _labels(o)) for o in (obj, old) if o is not None)
