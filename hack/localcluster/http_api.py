"""HTTP handlers of the resource API: URL routing, bodies, content negotiation, watch streams."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import yaml
from aiohttp import web

from . import (
    admission,
    conversion,
    decode_errors,
    deprecation,
    discovery,
    go_yaml,
    pod_connect,
    protobuf,
    tables,
)
from .admission.webhook_client import WebhookClient
from .apply import validate_field_manager
from .errors import (
    ApiError,
    Cause,
    bad_request,
    invalid_object,
    method_not_allowed,
    not_found,
    unparsable_resource_version,
)
from .go_format import go_encode
from .openapi import OpenAPI
from .operations import ListResult, Operations, WriteOptions
from .patch import PATCH_CONTENT_TYPES
from .registry import CREATE_ONLY, ResourceType
from .request_stats import RequestStats
from .selectors import FieldSelector, LabelSelector
from .users import UserInfo
from .watch_stream import WatchPlan, serve_watch

Json = dict[str, Any]
T = TypeVar("T")

MAX_BODY_BYTES = 3 * 1024 * 1024
#: Who sent a request, as the server's authentication found (None before it has run).
USER_KEY = web.RequestKey("user", UserInfo)


@dataclass
class Target:
    """What a resource URL names."""

    rt: ResourceType
    namespace: str | None
    name: str
    subresource: str


@dataclass
class WatchSettings:
    """Timings of watch streams (short in tests, realistic by default)."""

    bookmark_interval: float = 60.0
    min_timeout: float = 1800.0


class ResourceApi:
    """Serves everything under /api and /apis, plus OpenAPI."""

    def __init__(self, ops: Operations, watch: WatchSettings | None = None) -> None:
        self.ops = ops
        self.registry = ops.registry
        self.openapi = OpenAPI(ops.registry)
        self.watch_settings = watch or WatchSettings()
        #: Admission webhooks called on writes (None: not called).
        self.webhooks: admission.Webhooks | None = None
        #: Counts the events each watch sends (None: not counted).
        self.stats: RequestStats | None = None
        self._conversions: conversion.ConversionWebhooks | None = None
        #: pods/log, exec, attach and portforward, handed to the nodes' kubelets.
        self.pods = pod_connect.PodConnect(ops)

    @property
    def conversions(self) -> conversion.ConversionWebhooks:
        """The CRD conversion webhook caller (sharing the admission webhooks' client)."""
        if self._conversions is None:
            client = (self.webhooks.client if self.webhooks is not None
                      else WebhookClient(self.ops.storage))
            self._conversions = conversion.ConversionWebhooks(self.ops.storage, client)
            if self.webhooks is not None:  # admission webhooks of another version
                self.webhooks.convert = self._conversions.to_version
        return self._conversions

    async def _admitted(self, webhooks: admission.RequestAdmission | None,
                        write: Callable[[], T]) -> T:
        """Run a write with its admission webhooks and the conversions it needs."""
        return await self.conversions.run(lambda: admission.admitted(webhooks, write))

    async def _converted(self, read: Callable[[], T]) -> T:
        """Run a read with the conversions it needs."""
        return await self.conversions.run_sync(read)

    # --- routing ---------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        if parts[:1] == ["api"]:
            group, rest = "", parts[1:]
            if not rest:
                if discovery.wants_aggregated(request.headers.get("Accept", "")):
                    return _aggregated(discovery.aggregated(self.registry, core=True))
                host = request.host or "127.0.0.1"
                return _json(discovery.api_versions(host))
        else:
            if len(parts) == 1:
                if discovery.wants_aggregated(request.headers.get("Accept", "")):
                    return _aggregated(discovery.aggregated(self.registry, core=False))
                return _json(discovery.api_group_list(self.registry))
            group, rest = parts[1], parts[2:]
            if not rest:
                doc = discovery.api_group(self.registry, group)
                if doc is None:
                    raise not_found("", "", "")
                return _json(doc)
        version, rest = rest[0], rest[1:]
        if not rest:
            doc = discovery.resource_list(self.registry, group, version)
            if doc is None:
                raise _page_not_found()
            return _json(doc)
        return await self._resource(request, group, version, rest)

    def _target(self, group: str, version: str, rest: list[str]) -> Target:
        namespace: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        rt = self.registry.get(group, version, rest[0])
        if rt is None:
            served = self.registry.in_group_version(group, version) if group else []
            if group and (not self.registry.groups().get(group) or (
                    served and all(t.custom for t in served))):
                # Unserved groups and custom resources' groups fall through to the mux.
                raise web.HTTPNotFound(text="404 page not found\n")
            raise _page_not_found()
        if namespace is not None and not rt.namespaced:
            raise _page_not_found()
        if namespace is None and rt.namespaced and len(rest) > 1:
            raise _page_not_found()  # /api/v1/configmaps/x: no such route
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if len(rest) > 3:
            raise _page_not_found()
        return Target(rt, namespace, name, sub)

    async def _resource(self, request: web.Request, group: str, version: str,
                        rest: list[str]) -> web.StreamResponse:
        if rest[0] == "watch":  # the deprecated /watch/ prefix
            target = self._target(group, version, rest[1:])
            deprecation.mark(request, target.rt)
            return await self._watch(request, target)
        if group == "" and rest[0] == "namespaces" and (
                len(rest) == 2 or (len(rest) == 3 and rest[2] in ("status", "finalize"))):
            rt = self.registry.get("", version, "namespaces")
            assert rt is not None
            target = Target(rt, None, rest[1], rest[2] if len(rest) == 3 else "")
        else:
            target = self._target(group, version, rest)
        rt = target.rt
        deprecation.mark(request, rt)
        if rt.verbs == CREATE_ONLY:  # a review: answered by the server's own route, if any
            raise method_not_allowed()
        if rt.kind == "Pod" and not rt.group and target.subresource in pod_connect.SUBRESOURCES \
                and target.name and target.namespace is not None:
            return await self.pods.handle(request, rt, target.namespace, target.name,
                                          target.subresource)
        if target.subresource and not (
            (target.subresource == "status" and rt.has_status)
            or (target.subresource == "scale" and rt.scale is not None)
            or (target.subresource == "finalize" and rt.kind == "Namespace")
            or (target.subresource == "approval" and rt.kind == "CertificateSigningRequest")
        ):
            raise _page_not_found()
        method = request.method
        query = request.query
        if method == "GET":
            rv = query.get("resourceVersion", "")
            if rv not in ("", "0") and not rv.isdigit():
                raise unparsable_resource_version(rv)
            if target.name:
                return self._respond(request, rt, await self._converted(
                    lambda: self._get(target)), single=True)
            if _truthy(query.get("watch")):
                return await self._watch(request, target)
            return await self._converted(lambda: self._list(request, target))
        if target.namespace is None and rt.namespaced and method == "POST":
            raise _page_not_found()
        opts = self._write_options(request)
        if method == "POST" and not target.name:
            if rt.custom and self._crd_terminating(rt):
                raise ApiError(405, "MethodNotAllowed", "create not allowed while custom"
                               " resource definition is terminating",
                               {"group": rt.group, "kind": rt.plural})
            body = await _read_body(request, kind=rt.kind)
            body = {} if body is None else body  # JSON null decodes as an empty object
            opts.webhooks = self._webhooks(request, "CreateOptions", opts)
            result = await self._admitted(opts.webhooks, lambda: self.ops.create(
                rt, target.namespace or "", body, opts))
            return self._respond(request, rt, result.obj, single=True, code=201,
                                 warnings=_with_webhooks(result.warnings, opts))
        if method == "PUT" and target.name:
            body = await _read_body(request, kind="Scale" if target.subresource == "scale"
                                    else rt.kind)
            body = {} if body is None else body
            opts.webhooks = self._webhooks(request, "UpdateOptions", opts)
            if target.subresource == "scale":
                result = await self._admitted(opts.webhooks, lambda: self.ops.update_scale(
                    rt, target.namespace or "", target.name, body, opts))
                return _json(result.obj, warnings=_with_webhooks(result.warnings, opts))
            if target.subresource == "finalize":
                return _json(self.ops.finalize_namespace(rt, body))
            result = await self._admitted(opts.webhooks, lambda: self.ops.update(
                rt, target.namespace or "", target.name, body, opts, target.subresource))
            return self._respond(request, rt, result.obj, single=True,
                                 code=201 if result.created else 200,
                                 warnings=_with_webhooks(result.warnings, opts))
        if method == "PATCH" and target.name:
            content_type = request.content_type
            patch_type = PATCH_CONTENT_TYPES.get(content_type)
            if patch_type is None:  # refused by the route (go-restful's Consumes) first
                raise ApiError(415, "UnsupportedMediaType", "415: Unsupported Media Type",
                               empty_details=True)
            body = await _read_body(request, yaml_ok=patch_type == "apply")
            opts.webhooks = self._webhooks(request, "PatchOptions", opts)
            if target.subresource == "scale":
                result = await self._admitted(opts.webhooks, lambda: self.ops.patch_scale(
                    rt, target.namespace or "", target.name, patch_type, body, opts))
                return _json(result.obj, warnings=_with_webhooks(result.warnings, opts))
            result = await self._admitted(opts.webhooks, lambda: self.ops.patch(
                rt, target.namespace or "", target.name, patch_type, body, opts,
                target.subresource))
            return self._respond(request, rt, result.obj, single=True,
                                 code=201 if result.created else 200,
                                 warnings=_with_webhooks(result.warnings, opts))
        if method == "DELETE":
            options = await _delete_options(request)
            dry_run = opts.dry_run
            webhooks = self._webhooks(request, "DeleteOptions", opts, options)
            if target.name:
                obj, outcome = await self._admitted(webhooks, lambda: self.ops.delete(
                    rt, target.namespace or "", target.name, options, dry_run, webhooks))
                pending = outcome == 202
                # 202 only for a delete still pending that asked for cascading deletion the
                # old way (orphanDependents=false); otherwise 200, as the delete handler does.
                code = 202 if pending and options.get("orphanDependents") is False else 200
                warnings = webhooks.warnings if webhooks is not None else None
                if not pending and not rt.custom and rt.kind not in _RETURNS_OBJECT_ON_DELETE:
                    return _json(_success_status(rt, obj), code=code, warnings=warnings)
                return self._respond(request, rt, obj, single=True, code=code,
                                     warnings=warnings)
            listed = await self._admitted(webhooks, lambda: self.ops.delete_collection(
                rt, target.namespace, options, query.get("labelSelector", ""),
                query.get("fieldSelector", ""), dry_run, webhooks))
            return self._list_response(request, rt, listed)
        if method == "POST" and target.subresource and rt.custom:
            # A custom resource's status and scale stores have no create: NewMethodNotSupported.
            raise ApiError(405, "MethodNotAllowed", "create is not supported on resources of"
                           f' kind "{rt.group_resource}"', {"group": rt.group, "kind": rt.plural})
        raise method_not_allowed()

    def _webhooks(self, request: web.Request, options_kind: str, opts: WriteOptions,
                  delete_options: Json | None = None) -> admission.RequestAdmission | None:
        """The webhook admission of one write request, with its options object."""
        if self.webhooks is None:
            return None
        options: Json = {"kind": options_kind, "apiVersion": "meta.k8s.io/v1"}
        if delete_options is not None:
            options.update({k: v for k, v in delete_options.items()
                            if k not in ("kind", "apiVersion")})
        else:
            if opts.manager:
                options["fieldManager"] = opts.manager
            if opts.field_validation:
                options["fieldValidation"] = opts.field_validation
            if opts.force:
                options["force"] = True
        if opts.dry_run:
            options["dryRun"] = ["All"]
        return self.webhooks.request(request.get(USER_KEY), options)

    def _crd_terminating(self, rt: ResourceType) -> bool:
        crd = self.ops.storage.get(("apiextensions.k8s.io", "customresourcedefinitions"), "",
                                   f"{rt.plural}.{rt.group}")
        return crd is not None and bool(crd["metadata"].get("deletionTimestamp"))

    # --- reads -----------------------------------------------------------------------------

    def _get(self, target: Target) -> Json:
        ns = target.namespace or ""
        if target.subresource == "scale":
            return self.ops.get_scale(target.rt, ns, target.name)
        return self.ops.get(target.rt, ns, target.name)

    def _list(self, request: web.Request, target: Target) -> web.StreamResponse:
        q = request.query
        try:
            limit = int(q.get("limit", "0") or 0)
        except ValueError:
            raw = q.get("limit", "")
            raise bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None
        result = self.ops.list_objects(
            target.rt, target.namespace, label_selector=q.get("labelSelector", ""),
            field_selector=q.get("fieldSelector", ""), limit=limit,
            continue_token=q.get("continue", ""), resource_version=q.get("resourceVersion", ""),
            resource_version_match=q.get("resourceVersionMatch", ""))
        return self._list_response(request, target.rt, result)

    def _list_response(self, request: web.Request, rt: ResourceType,
                       result: ListResult) -> web.Response:
        q = request.query
        list_meta: Json = {"resourceVersion": result.resource_version}
        if result.continue_token:
            list_meta["continue"] = result.continue_token
        if result.remaining is not None:
            list_meta["remainingItemCount"] = result.remaining
        accept = _accept(request)
        if accept == "Table":
            table = tables.to_table(rt, result.items, include_object=q.get(
                "includeObject", "Metadata"), list_metadata=list_meta,
                group_version=_table_version(request))
            return _json(table)
        if accept == "PartialObjectMetadata":
            return _json({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                          "metadata": list_meta, "items": [_partial(o) for o in result.items]})
        items = result.items if rt.custom else [
            {k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in result.items]
        if rt.custom:  # an UnstructuredList: `continue` always set, keys in sorted order
            list_meta = dict(sorted({"continue": "", **list_meta}.items()))
        return _json({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": list_meta,
                      "items": items})

    def _respond(self, request: web.Request, rt: ResourceType, obj: Json, *, single: bool,
                 code: int = 200, warnings: list[str] | None = None) -> web.Response:
        accept = _accept(request)
        if accept == "Table" and obj.get("kind") == rt.kind:
            return _json(tables.to_table(rt, [obj], include_object=request.query.get(
                "includeObject", "Metadata"), group_version=_table_version(request)),
                code=code, warnings=warnings)
        if accept == "PartialObjectMetadata" and obj.get("kind") == rt.kind:
            return _json(_partial(obj), code=code, warnings=warnings)
        return _json(obj, code=code, warnings=warnings)

    def _write_options(self, request: web.Request) -> WriteOptions:
        q = request.query
        dry_run = q.getall("dryRun", [])
        options_kind = {"POST": "CreateOptions", "PUT": "UpdateOptions",
                        "DELETE": "DeleteOptions"}.get(request.method, "PatchOptions")
        if any(value != "All" for value in dry_run):  # ValidateDryRun, Go's %#v of the list
            listed = ", ".join(json.dumps(v) for v in dry_run)
            raise invalid_object("meta.k8s.io", options_kind, "", [Cause(
                "FieldValueNotSupported", f"Unsupported value: []string{{{listed}}}: supported"
                " values: \"All\"", "dryRun")])
        if request.method == "PATCH" and "force" in q and \
                request.content_type != "application/apply-patch+yaml":
            raise invalid_object("meta.k8s.io", "PatchOptions", "", [Cause(
                "FieldValueForbidden", "Forbidden: may not be specified for non-apply patch",
                "force")])
        validation = q.get("fieldValidation", "Warn")
        if validation not in ("Ignore", "Warn", "Strict"):
            raise bad_request(f"fieldValidation: Unsupported value: \"{validation}\": supported"
                              " values: \"Ignore\", \"Warn\", \"Strict\"")
        force = _truthy(q.get("force"))
        manager = q.get("fieldManager", "")
        if manager:
            validate_field_manager(manager, options_kind=options_kind)
        return WriteOptions(dry_run=bool(dry_run), manager=q.get("fieldManager", ""),
                            field_validation=validation, force=force,
                            user_agent=request.headers.get("User-Agent", ""),
                            user=request.get(USER_KEY))

    # --- watch -----------------------------------------------------------------------------

    async def _watch(self, request: web.Request, target: Target) -> web.StreamResponse:
        q = request.query
        rt = target.rt
        labels = LabelSelector.parse(q.get("labelSelector", ""))
        fields = FieldSelector.for_resource(q.get("fieldSelector", ""), rt)
        if target.name:  # a watch on one object, e.g. /watch/.../pods/x
            fields = FieldSelector.for_resource(",".join(filter(None, [
                q.get("fieldSelector", ""), f"metadata.name={target.name}"])), rt)
        namespace = target.namespace if rt.namespaced else None

        def matches(obj: Json) -> bool:
            meta = obj["metadata"]
            if namespace is not None and meta.get("namespace") != namespace:
                return False
            return labels.matches(meta.get("labels")) and fields.matches(obj)

        rv_param = q.get("resourceVersion", "")
        send_initial = q.get("sendInitialEvents")
        _validate_watch_options(send_initial, q.get("resourceVersionMatch", ""),
                                q.get("continue", ""))
        try:
            timeout = float(q["timeoutSeconds"]) if "timeoutSeconds" in q else (
                self.watch_settings.min_timeout * (1 + random.random()))
        except ValueError:
            raise bad_request("invalid timeoutSeconds") from None
        since: int | None = None
        if rv_param not in ("", "0") and not _truthy(send_initial):
            try:
                since = int(rv_param)
            except ValueError:
                raise unparsable_resource_version(rv_param) from None
        bookmarks = _truthy(q.get("allowWatchBookmarks"))
        plan = WatchPlan(
            rt=rt, namespace=namespace, matches=matches, since=since,
            send_initial=send_initial is None or _truthy(send_initial),
            initial_end_bookmark=_truthy(send_initial) and bookmarks,
            bookmarks=bookmarks, bookmark_interval=self.watch_settings.bookmark_interval,
            timeout=timeout,
            table=q.get("includeObject", "Metadata") if _accept(request) == "Table" else None,
            on_sent=self._watch_counter(target, request.headers.get("User-Agent", "")),
            convert=self.conversions.watch_converter(rt))
        return await serve_watch(request, self.ops.storage, plan)

    def _watch_counter(self, target: Target, user_agent: str) -> Callable[[int, int], None] | None:
        stats = self.stats
        if stats is None:
            return None
        resource = target.rt.plural + (f".{target.rt.group}" if target.rt.group else "")

        def sent(events: int, nbytes: int) -> None:
            stats.record_watch_events(resource, user_agent, events, nbytes)
        return sent


def _with_webhooks(warnings: list[str], opts: WriteOptions) -> list[str]:
    """The write's own warnings, then its webhooks' (as kube-apiserver sends them)."""
    if opts.webhooks is None:
        return warnings
    return [*warnings, *(w for w in opts.webhooks.warnings if w not in warnings)]


def _validate_watch_options(send_initial: str | None, match: str, continue_token: str) -> None:
    """ValidateListOptions of a watch: sendInitialEvents and resourceVersionMatch go together,
    and the only match a watch knows is NotOlderThan."""
    causes = []
    if send_initial is not None and match != "NotOlderThan":
        causes.append(Cause("FieldValueForbidden", "Forbidden: sendInitialEvents requires"
                            " setting resourceVersionMatch to NotOlderThan",
                            "resourceVersionMatch"))
    if match:
        if send_initial is None:
            causes.append(Cause("FieldValueForbidden", "Forbidden: resourceVersionMatch is"
                                " forbidden for watch unless sendInitialEvents is provided",
                                "resourceVersionMatch"))
        if match != "NotOlderThan":
            causes.append(Cause("FieldValueNotSupported", f'Unsupported value: "{match}":'
                                ' supported values: "NotOlderThan"', "resourceVersionMatch"))
        if continue_token:
            causes.append(Cause("FieldValueForbidden", "Forbidden: resourceVersionMatch is"
                                " forbidden when continue is provided", "resourceVersionMatch"))
    if causes:
        raise invalid_object("meta.k8s.io", "ListOptions", "", causes)


_RETURNS_OBJECT_ON_DELETE = {"Pod", "Namespace", "Service", "PersistentVolumeClaim",
                             "CustomResourceDefinition", "Deployment", "ReplicaSet",
                             "StatefulSet", "DaemonSet", "Job", "Node"}


def _success_status(rt: ResourceType, obj: Json) -> Json:
    details: Json = {"name": obj["metadata"]["name"]}
    if rt.group:
        details["group"] = rt.group
    details.update(kind=rt.plural, uid=obj["metadata"].get("uid", ""))
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details}


def _partial(obj: Json) -> Json:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj["metadata"]}


_OTHER_MEDIA = ("application/yaml", "application/vnd.kubernetes.protobuf", "application/*",
                "text/*")


def _accept(request: web.Request) -> str:
    """'Table', 'PartialObjectMetadata' or '' from the Accept header's first usable choice;
    406 when none is usable, worded as kube-apiserver does: go-restful's when no media type
    is served, the negotiator's when only the `as=` parameters are refused."""
    header = request.headers.get("Accept", "")
    refused = False
    for choice in header.split(","):
        params = dict(
            p.strip().split("=", 1) for p in choice.split(";")[1:] if "=" in p)
        media = choice.split(";")[0].strip()
        if media not in ("application/json", "*/*", ""):
            if media in _OTHER_MEDIA and "as" not in params:
                return ""
            continue
        as_ = params.get("as", "")
        if as_ == "Table" and params.get("g") == "meta.k8s.io" and params.get(
                "v", "v1") in ("v1", "v1beta1"):
            return "Table"
        if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            return "PartialObjectMetadata"
        if not as_:
            return ""
        refused = True
    if refused:
        raise ApiError(406, "NotAcceptable", "only the following media types are accepted:"
                       " application/json, application/yaml, application/vnd.kubernetes.protobuf")
    raise ApiError(406, "NotAcceptable", "406: Not Acceptable", empty_details=True)


def _table_version(request: web.Request) -> str:
    """The Table's group/version the Accept header asks for (meta.k8s.io/v1beta1 is still
    served)."""
    for choice in request.headers.get("Accept", "").split(","):
        if "as=Table" in choice:
            return "meta.k8s.io/v1beta1" if "v=v1beta1" in choice else "meta.k8s.io/v1"
    return "meta.k8s.io/v1"


def _truthy(value: str | None) -> bool:
    return value in ("1", "t", "T", "TRUE", "true", "True")  # Go's strconv.ParseBool


def _page_not_found() -> ApiError:
    # A served group's handler answers unknown versions, resources and paths with this Status
    # (details `{}`); a group nobody serves gets the mux's plain `404 page not found`.
    return ApiError(404, "NotFound", "the server could not find the requested resource")


async def _read_body(request: web.Request, yaml_ok: bool = True,
                     kind: str | None = None) -> Any:
    """The decoded body; `kind` for a create or update, whose undecodable JSON is refused as
    kube-apiserver refuses it (decode_errors)."""
    raw = await _raw_body(request)
    if kind is not None and request.content_type in ("application/json", "") and (
            not raw.strip() or raw.lstrip()[:1] != b"{" or raw.rstrip()[-1:] != b"}"):
        refused = decode_errors.unrecognized(kind, raw)
        if refused is not None:
            raise refused
    if not raw.strip():
        raise bad_request("the body of the request was empty")
    content_type = request.content_type
    if content_type == protobuf.CONTENT_TYPE:
        return protobuf.decode_body(raw)
    try:
        if content_type in ("application/json", "application/json-patch+json",
                            "application/merge-patch+json",
                            "application/strategic-merge-patch+json"):
            return json.loads(raw)
        if yaml_ok and ("yaml" in content_type or content_type == "application/apply-patch+yaml"):
            return go_yaml.load(raw)
        if not request.headers.get("Content-Type"):  # no Content-Type: JSON, the default
            return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        refused = decode_errors.unrecognized(kind, raw) if kind is not None else None
        if refused is None and isinstance(err, json.JSONDecodeError):
            refused = decode_errors.patch_syntax_error(content_type, raw, err)
        raise refused or bad_request(f"couldn't get version/kind; json parse error: {err}"
                                     ) from None
    except yaml.YAMLError as err:
        # An apply's patch is unmarshalled by the patch handler, which names what it decodes.
        prefix = "error decoding YAML: " if content_type == "application/apply-patch+yaml" else ""
        raise bad_request(f"{prefix}error converting YAML to JSON: {go_yaml.go_error(err)}"
                          ) from None
    raise ApiError(415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format - accepted media types"
                   " include: application/json, application/yaml,"
                   " application/vnd.kubernetes.protobuf")


async def _raw_body(request: web.Request) -> bytes:
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise _too_large()
    chunks = []
    size = 0
    async for chunk in request.content.iter_chunked(65536):
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large() -> ApiError:
    return ApiError(413, "RequestEntityTooLarge",
                    f"Request entity too large: limit is {MAX_BODY_BYTES}")


async def _delete_options(request: web.Request) -> Json:
    options: Json = {}
    raw = await _raw_body(request)
    if raw.strip():
        try:
            if request.content_type == protobuf.CONTENT_TYPE:
                body = protobuf.decode_body(raw)
            else:
                body = json.loads(raw)
        except json.JSONDecodeError as err:
            raise bad_request(f"couldn't get version/kind; json parse error: {err}") from None
        if isinstance(body, dict):
            refused = decode_errors.foreign_delete_options(body)
            if refused is not None:
                raise refused
            options.update(body)
    q = request.query
    if "propagationPolicy" in q:
        options["propagationPolicy"] = q["propagationPolicy"]
    if "gracePeriodSeconds" in q:
        with contextlib.suppress(ValueError):
            options["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
    if "orphanDependents" in q:
        options["orphanDependents"] = _truthy(q["orphanDependents"])
    return options


def _aggregated(doc: Json) -> web.Response:
    return web.Response(body=go_encode(doc), headers={
        "Content-Type": discovery.AGGREGATED_MEDIA_TYPE, "Vary": "Accept"})


def _json(obj: Json, code: int = 200, warnings: list[str] | None = None) -> web.Response:
    headers = {}
    if warnings:
        headers["Warning"] = admission.warning_header(warnings)
    return web.Response(body=go_encode(obj), status=code, content_type="application/json",
                        headers=headers)


__all__ = ["MAX_BODY_BYTES", "USER_KEY", "ResourceApi", "WatchSettings"]
