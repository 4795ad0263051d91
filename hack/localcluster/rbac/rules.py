"""PolicyRules: whether a rule allows a request, whether rules cover others, how to print them.

The matching is the RBAC authorizer's (`*` for every verb, group, resource and non-resource
URL; `*/sub` for one subresource of every resource; a `prefix*` non-resource URL; resourceNames
narrowing a rule to named objects). The covering and the compact form are those of the
escalation check, which breaks the wanted rules into one verb, group, resource and name each
and reports the pieces no rule of the writer covers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..go_format import go_quote
from .attributes import RequestAttributes


@dataclass(frozen=True)
class Rule:
    """One rbac/v1 PolicyRule."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, rule: dict[str, Any]) -> Rule:
        def strings(key: str) -> tuple[str, ...]:
            value = rule.get(key) or ()
            return tuple(str(v) for v in value) if isinstance(value, list) else ()
        return cls(strings("verbs"), strings("apiGroups"), strings("resources"),
                   strings("resourceNames"), strings("nonResourceURLs"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verbs": list(self.verbs)}
        if self.api_groups or self.resources:
            out["apiGroups"] = list(self.api_groups)
        if self.resources:
            out["resources"] = list(self.resources)
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        if self.non_resource_urls:
            out["nonResourceURLs"] = list(self.non_resource_urls)
        return out

    def allows(self, attrs: RequestAttributes) -> bool:
        """RuleAllows: the rule grants the request."""
        if not ("*" in self.verbs or attrs.verb in self.verbs):
            return False
        if not attrs.resource_request:
            return any(_url_matches(url, attrs.path) for url in self.non_resource_urls)
        if not ("*" in self.api_groups or attrs.api_group in self.api_groups):
            return False
        combined = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
        if not any(r in ("*", combined) or (attrs.subresource and r == f"*/{attrs.subresource}")
                   for r in self.resources):
            return False
        return not self.resource_names or attrs.name in self.resource_names

    def compact_string(self) -> str:
        """The rule as escalation messages print it (Go's `%q` of each list)."""
        parts = []
        for label, values in (("APIGroups", self.api_groups), ("Resources", self.resources),
                              ("NonResourceURLs", self.non_resource_urls),
                              ("ResourceNames", self.resource_names), ("Verbs", self.verbs)):
            if values:
                parts.append(f"{label}:{go_quoted_list(values)}")
        return "{" + ", ".join(parts) + "}"


def go_quoted_list(values: Iterable[str]) -> str:
    """Go's `%q` of a []string: `["a" "b"]`."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def _url_matches(rule_url: str, path: str) -> bool:
    return rule_url in ("*", path) or (
        rule_url.endswith("*") and path.startswith(rule_url.rstrip("*")))


def breakdown(rule: Rule) -> list[Rule]:
    """The rule as rules of one group, resource, verb and (if any) name each."""
    out: list[Rule] = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    out.extend(Rule((verb,), (group,), (resource,), (name,))
                               for name in rule.resource_names)
                else:
                    out.append(Rule((verb,), (group,), (resource,)))
    for url in rule.non_resource_urls:
        out.extend(Rule((verb,), non_resource_urls=(url,)) for verb in rule.verbs)
    return out


def _covers(owner: Rule, sub: Rule) -> bool:
    """ruleCovers: `owner` grants all of `sub` (a broken-down rule)."""
    verbs = "*" in owner.verbs or set(sub.verbs) <= set(owner.verbs)
    groups = "*" in owner.api_groups or set(sub.api_groups) <= set(owner.api_groups)
    resources = "*" in owner.resources or set(sub.resources) <= set(owner.resources) or all(
        r in owner.resources or ("/" in r and "*/" + r.split("/", 1)[1] in owner.resources)
        for r in sub.resources)
    urls = all(any(_url_matches(o, u) for o in owner.non_resource_urls)
               for u in sub.non_resource_urls)
    if sub.resource_names:
        names = not owner.resource_names or set(sub.resource_names) <= set(owner.resource_names)
    else:
        names = not owner.resource_names
    return verbs and groups and resources and urls and names


def uncovered(owner_rules: list[Rule], wanted: list[Rule]) -> list[Rule]:
    """Covers: the broken-down pieces of `wanted` that no rule of `owner_rules` grants."""
    return [sub for rule in wanted for sub in breakdown(rule)
            if not any(_covers(owner, sub) for owner in owner_rules)]


def compact(rules: list[Rule]) -> list[Rule]:
    """CompactRules: simple rules (one group, one resource, at most one name, no URLs) that
    differ only by verb become one rule with all their verbs."""
    merged: dict[tuple[str, str, tuple[str, ...]], Rule] = {}
    out: list[Rule] = []
    for rule in rules:
        simple = (not rule.non_resource_urls and len(rule.resource_names) <= 1
                  and len(rule.api_groups) == 1 and len(rule.resources) == 1)
        if not simple:
            out.append(rule)
            continue
        key = (rule.api_groups[0], rule.resources[0], rule.resource_names)
        if key in merged:
            old = merged[key]
            merged[key] = Rule(old.verbs + rule.verbs, old.api_groups, old.resources,
                               old.resource_names)
        else:
            merged[key] = rule
    return out + list(merged.values())


__all__ = ["Rule", "breakdown", "compact", "go_quoted_list", "uncovered"]
