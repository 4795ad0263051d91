"""The validating webhooks of our kinds: the rules of `api.validation`, at admission time.

One handler per kind, for all five, at the paths of the original operator (which has none
for the scaling adapter: its path is made the same way), for CREATE and UPDATE. A create
must pass the create rules; an update the update rules, which also compare with the old object
(backendFramework and DynamoModel fields immutable, the DGDR spec frozen once profiling started,
replicas owned by a scaling adapter), plus the rules of what is written only
(`api.validation.admission_only`: a graph's origin version, a v1alpha1 frontendSidecar's
container name). Deprecated fields come back as warnings. A delete, and an
update of an object being deleted (finalizers being removed), is always admitted, and so is
anything in a namespace another, namespace-restricted, operator claims. A refusal carries
its reason for `dynamo_operator_webhook_denials_total` (`reconcilers.machinery.denials`:
immutable_field_changed, forbidden, invalid_config, bad_request), beside the message.

Replicas owned by a scaling adapter may be changed only by the operator itself (its own
identity, read at start-up) or by a Planner (a ServiceAccount named `planner-serviceaccount`).
An unknown requester is refused, as the original does.

A v1beta1 graph created on the Grove path is also judged by the Grove ClusterTopologies its
topology constraints and KV transfer policy name, read from the cluster
(`admission_topology`, the rules in `api.validation.topology_levels`), as the original's
webhook reads them (a cluster-wide operator: a namespace-restricted one may not read them); a
`clusterTopologyName` policy off the Grove path is refused.

Both served versions are registered, so the API server sends each object as it was written.
The rules are one set, written against v1alpha1: a v1beta1 object (and its old object) is
converted in-process to its v1alpha1 view (`api.conversion.views.read_as`, the conversion
the CRDs use) and checked by them, and each error is moved back to the field the user wrote
(`api.hub_errors.in_hub`: `spec.services.Worker.replicas` is `spec.components[1].replicas`).
What only the v1beta1 shape can get wrong is checked first, on the object as written
(`api.validation.v1beta1_shape`). Registering v1alpha1 alone would also reach v1beta1 writes
(matchPolicy Equivalent), but converted by the conversion webhook: the shape rules could not
see them, and errors would name fields the user never wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from api.conversion import HUB, ConversionFailure
from api.conversion.views import read_as
from api.convert import load
from api.errors import ConversionError, FieldError
from api.hub_errors import hub_rules, in_hub
from api.kube import Json
from api.v1alpha1 import (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentScalingAdapter,
    DynamoModel,
)
from api.validation import validate, warnings
from api.validation.admission_only import admission_only
from api.validation.gpu_memory import grove_pathway_errors
from api.validation.topology_levels import ClusterTopologyRead, topology_level_errors
from api.validation.v1beta1_shape import v1beta1_shape
from controller.client import KubeClient
from controller.webhook import AdmissionRequest, AdmissionResponse, Handler
from reconcilers.machinery.denials import BAD_REQUEST, denial_cause
from reconcilers.operator.admission_topology import read_topologies
from reconcilers.request.admission import admit_request

__all__ = ["API_VERSIONS", "WEBHOOKS", "AdmissionPolicy", "Webhook", "handler_for"]

#: The versions every webhook is registered for (and checks).
API_VERSIONS = ("v1alpha1", "v1beta1")

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
    _webhook(DynamoGraphDeploymentScalingAdapter, "dynamographdeploymentscalingadapters"),
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
    #: Grove runs graphs (the Grove pathway of the topology rules).
    grove_enabled: bool = False

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


def handler_for(webhook: Webhook, policy: AdmissionPolicy,
                client: KubeClient | None = None) -> Handler:
    """The admission handler of one of our kinds; with `client`, a graph's handler reads the
    ClusterTopologies the graph names."""

    async def handle(request: AdmissionRequest) -> AdmissionResponse:
        topologies: dict[str, ClusterTopologyRead] = {}
        # A namespace-restricted operator may not read cluster-scoped objects (the chart
        # grants it no ClusterTopology): its graphs are not judged by them.
        if (client is not None and webhook.kind is DynamoGraphDeployment
                and not policy.namespace_restricted
                and request.object is not None and request.object.get("apiVersion") == HUB
                and not _unchecked(request, policy)):
            topologies = await read_topologies(client, request.object,
                                               grove_enabled=policy.grove_enabled)
        return decide(webhook.kind, request, policy, topologies=topologies)

    return handle


def decide(kind: type, request: AdmissionRequest, policy: AdmissionPolicy, *,
           topologies: Mapping[str, ClusterTopologyRead] | None = None) -> AdmissionResponse:
    """Admit or refuse one request for an object of `kind`; `topologies`: what was read of
    the ClusterTopologies a graph names (none read: not judged by them)."""
    if _unchecked(request, policy):
        return AdmissionResponse.allow()
    old_json = request.old_object
    if request.object is None:
        return AdmissionResponse.deny("the request has no object", 400, "BadRequest",
                                      cause=BAD_REQUEST)
    old_json = old_json if request.operation == "UPDATE" else None
    if kind is DynamoGraphDeploymentRequest:
        # Its rules are written against v1beta1, for both versions (reconcilers.request).
        return admit_request(request.object, old_json,
                             namespace_restricted=policy.namespace_restricted)
    if request.object.get("apiVersion") == HUB:
        return _decide_hub(kind, request, request.object, old_json, policy, topologies or {})
    return _decide_spoke(kind, request, request.object, old_json, policy)


def _unchecked(request: AdmissionRequest, policy: AdmissionPolicy) -> bool:
    """Admitted without a look: a delete, a subresource, an object of a namespace another
    operator claims, an update of an object being deleted (finalizers being removed)."""
    if request.operation not in ("CREATE", "UPDATE") or request.subresource:
        return True
    if request.namespace and policy.skip_namespace(request.namespace):
        return True
    old_json = request.old_object
    return bool(request.operation == "UPDATE" and old_json is not None and (
        old_json.get("metadata") or {}).get("deletionTimestamp"))


def _decide_spoke(kind: type, request: AdmissionRequest, obj_json: Json, old_json: Json | None,
                  policy: AdmissionPolicy) -> AdmissionResponse:
    """The rules, on a v1alpha1 object."""
    errors, notes = _checked(kind, request, obj_json, old_json, policy)
    return _answer([*admission_only(obj_json), *_grove_pathway(kind, obj_json, old_json, policy),
                    *errors], [str(w) for w in notes])


def _grove_pathway(kind: type, obj_json: Json, old_json: Json | None,
                   policy: AdmissionPolicy) -> list[FieldError]:
    """A graph's inter-pod layout off the Grove pathway; on update only what the stored graph
    did not already ask (a graph admitted before Grove was switched off stays editable)."""
    if kind is not DynamoGraphDeployment:
        return []
    errors = grove_pathway_errors(obj_json, grove_enabled=policy.grove_enabled)
    if old_json is not None and errors:
        before = {e.path for e in grove_pathway_errors(old_json,
                                                        grove_enabled=policy.grove_enabled)}
        errors = [e for e in errors if e.path not in before]
    return errors


def _decide_hub(kind: type, request: AdmissionRequest, obj_json: Json, old_json: Json | None,
                policy: AdmissionPolicy, topologies: Mapping[str, ClusterTopologyRead]
                ) -> AdmissionResponse:
    """The v1beta1 shape rules (a graph's with the ClusterTopologies it names), then the
    rules on the v1alpha1 view, naming v1beta1 fields."""
    shape = v1beta1_shape(obj_json, old_json)
    if kind is DynamoGraphDeployment:
        shape += topology_level_errors(obj_json, topologies,
                                       grove_enabled=policy.grove_enabled)
        shape += _grove_pathway(kind, obj_json, old_json, policy)
    try:
        spoke = read_as(obj_json, "v1alpha1")
        spoke_old = read_as(old_json, "v1alpha1") if old_json is not None else None
    except ConversionFailure as err:
        return _answer([*shape, FieldError("", str(err))], [])
    errors, notes = _checked(kind, request, spoke, spoke_old, policy)
    # What holds of the view only (a PVC not declared in `spec.pvcs`, which v1beta1 lacks)
    # is no error of the object as written.
    errors = hub_rules(errors)
    # A field the shape rules refused already is said once, in v1beta1's words.
    said = {e.path for e in shape}
    mapped = [e for e in in_hub(errors, obj_json, spoke) if e.path not in said]
    return _answer([*admission_only(obj_json), *shape, *mapped],
                   [str(w) for w in in_hub(notes, obj_json, spoke)])


def _checked(kind: type, request: AdmissionRequest, obj_json: Json, old_json: Json | None,
             policy: AdmissionPolicy) -> tuple[list[FieldError], list[FieldError]]:
    """The errors and warnings of the rules, for a v1alpha1 object and its old object."""
    try:
        obj = _load(kind, obj_json, keep_status=False)
        old = _load(kind, old_json, keep_status=True) if old_json else None
    except ConversionError as err:
        return err.errors, []
    errors = validate(obj, old,
                      replicas_authorized=policy.may_write_owned_replicas(request.username),
                      namespace_restricted=policy.namespace_restricted)
    return errors, warnings(obj)


def _answer(errors: list[FieldError], notes: list[str]) -> AdmissionResponse:
    if errors:
        return AdmissionResponse.deny(_joined(errors), 422, "Invalid", warnings=tuple(notes),
                                      cause=denial_cause(errors))
    return AdmissionResponse.allow(warnings=tuple(notes))


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
