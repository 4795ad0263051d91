"""The validating webhooks of our kinds: the rules of `api.validation`, at admission time.

One handler per kind, at the paths of the original operator, for CREATE and UPDATE. A create
must pass the create rules; an update the update rules, which also compare with the old object
(backendFramework and DynamoModel fields immutable, the DGDR spec frozen once profiling started,
replicas owned by a scaling adapter). Deprecated fields come back as warnings. A delete, and an
update of an object being deleted (finalizers being removed), is always admitted, and so is
anything in a namespace another, namespace-restricted, operator claims.

Replicas owned by a scaling adapter may be changed only by the operator itself (its own
identity, read at start-up) or by a Planner (a ServiceAccount named `planner-serviceaccount`).
An unknown requester is refused, as the original does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from api.convert import load
from api.errors import ConversionError, FieldError
from api.v1alpha1 import (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    DynamoGraphDeploymentRequest,
    DynamoModel,
)
from api.validation import validate, warnings
from controller.webhook import AdmissionRequest, AdmissionResponse, Handler

__all__ = ["WEBHOOKS", "AdmissionPolicy", "Webhook", "handler_for"]

PLANNER_SERVICE_ACCOUNT = "planner-serviceaccount"
#: The original's operator ServiceAccount suffix, trusted when our own identity is unknown.
OPERATOR_SERVICE_ACCOUNT_SUFFIX = "-dynamo-operator-controller-manager"


@dataclass(frozen=True)
class Webhook:
    """One validating webhook of ours: the kind, where it is served, what it is called."""

    kind: type
    plural: str
    path: str
    name: str


def _webhook(kind: type, plural: str) -> Webhook:
    singular = kind.__name__.lower()
    return Webhook(kind, plural, f"/validate-nvidia-com-v1alpha1-{singular}",
                   f"v{singular}.kb.io")


WEBHOOKS = (
    _webhook(DynamoComponentDeployment, "dynamocomponentdeployments"),
    _webhook(DynamoGraphDeployment, "dynamographdeployments"),
    _webhook(DynamoGraphDeploymentRequest, "dynamographdeploymentrequests"),
    _webhook(DynamoModel, "dynamomodels"),
)


@dataclass(frozen=True)
class AdmissionPolicy:
    """What the handlers need to know about the operator they run in."""

    #: The operator's own username (None: not known, the original's SA suffix is trusted).
    operator_identity: str | None = None
    namespace_restricted: bool = False
    #: Namespaces another (namespace-restricted) operator owns: admitted unchecked.
    skip_namespace: Callable[[str], bool] = field(default=lambda _: False)

    def may_write_owned_replicas(self, username: str) -> bool:
        if not username:
            return False
        if self.operator_identity is not None and username == self.operator_identity:
            return True
        prefix, _, rest = username.partition("system:serviceaccount:")
        _, _, account = rest.partition(":")
        if prefix or not account:
            return False
        if account == PLANNER_SERVICE_ACCOUNT:
            return True
        return self.operator_identity is None and account.endswith(
            OPERATOR_SERVICE_ACCOUNT_SUFFIX)


def handler_for(webhook: Webhook, policy: AdmissionPolicy) -> Handler:
    """The admission handler of one of our kinds."""

    async def handle(request: AdmissionRequest) -> AdmissionResponse:
        return decide(webhook.kind, request, policy)

    return handle


def decide(kind: type, request: AdmissionRequest, policy: AdmissionPolicy) -> AdmissionResponse:
    """Admit or refuse one request for an object of `kind`."""
    if request.operation not in ("CREATE", "UPDATE") or request.subresource:
        return AdmissionResponse.allow()
    if request.namespace and policy.skip_namespace(request.namespace):
        return AdmissionResponse.allow()
    old_json = request.old_object
    if request.operation == "UPDATE" and old_json is not None and (
            old_json.get("metadata") or {}).get("deletionTimestamp"):
        return AdmissionResponse.allow()
    if request.object is None:
        return AdmissionResponse.deny("the request has no object", 400, "BadRequest")
    try:
        obj = _load(kind, request.object, keep_status=False)
        old = (_load(kind, old_json, keep_status=True)
               if request.operation == "UPDATE" and old_json else None)
    except ConversionError as err:
        return AdmissionResponse.deny(_joined(err.errors), 422, "Invalid")
    errors = validate(obj, old,
                      replicas_authorized=policy.may_write_owned_replicas(request.username),
                      namespace_restricted=policy.namespace_restricted)
    notes = tuple(str(w) for w in warnings(obj))
    if errors:
        return AdmissionResponse.deny(_joined(errors), 422, "Invalid", warnings=notes)
    return AdmissionResponse.allow(warnings=notes)


def _load(kind: type, data: dict[str, Any], *, keep_status: bool) -> Any:
    """The typed object. The old object's status matters (a request's profiling state); a
    status that does not convert is the operator's problem, not the user's, so it is dropped."""
    spec_only = {k: v for k, v in data.items() if k != "status"}
    if keep_status and "status" in data:
        try:
            return load(kind, data)
        except ConversionError:
            pass
    return load(kind, spec_only)


def _joined(errors: list[FieldError]) -> str:
    return "; ".join(str(e) for e in errors)
