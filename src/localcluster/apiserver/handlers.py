"""HTTP handlers of the resource API: parse the Kubernetes REST path and query, call the registry,
encode the answer (object, list, Table, Status or a watch stream).

Paths: `/api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]` and the same under
`/apis/{group}/{version}`; the legacy `/watch/` prefix and `?watch=true` both start a watch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from aiohttp import web

from ...apis import field
from . import errors, limits, managedfields
from .deletion import DeleteOptions
from .listing import decode_continue
from .meta import now_rfc3339
from .printers import columns_for_resource
from .protobuf import CONTENT_TYPE as PROTOBUF
from .registry import Registry
from .requests import (
    decode_protobuf,
    encode,
    entry_bytes,
    exact_list_version,
    is_dry_run,
    json_response,
    list_item_bytes,
    query_bool,
    query_int64,
    read_body,
    selectors,
    strict_validation,
    wants_table,
)
from .resources import ResourceInfo
from .store import Entry
from .table import to_table
from .watchstream import WatchServer

_encode = encode

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply",
}


ScaleHandler = Callable[[web.Request, ResourceInfo, str, str], Awaitable[web.StreamResponse]]
# Answers requests for group-versions served elsewhere (APIService); None when not proxied.
ProxyHandler = Callable[[web.Request, str, str], Awaitable[web.StreamResponse | None]]


@dataclass
class Target:
    group: str
    version: str
    namespace: str
    resource: str
    name: str
    subresource: str
    watch_path: bool


def parse_path(path: str) -> Target | None:
    parts = [p for p in path.split("/") if p]
    if len(parts) < 3:
        return None
    if parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch_path = False
    if rest and rest[0] == "watch":
        watch_path = True
        rest = rest[1:]
    ns = ""
    if (
        len(rest) >= 3
        and rest[0] == "namespaces"
        and not (len(rest) == 3 and rest[2] in ("status", "finalize"))
    ):
        ns, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        return None
    return Target(
        group,
        version,
        ns,
        rest[0],
        rest[1] if len(rest) > 1 else "",
        rest[2] if len(rest) > 2 else "",
        watch_path,
    )


class ResourceHandler:
    """Serves every resource path against one `Registry`."""

    def __init__(self, registry: Registry, bookmark_interval: float = 5.0) -> None:
        self.registry = registry
        self.watches = WatchServer(registry, bookmark_interval)
        # Hooks set by crd.py for the scale subresource and by the server for APIService proxying.
        self.scale: ScaleHandler | None = None
        self.proxy: ProxyHandler | None = None
        # Subresources served by other components (e.g. a simulated kubelet's pods/log), keyed by
        # (group, resource, subresource).
        self.extra_subresources: dict[tuple[str, str, str], ScaleHandler] = {}

    async def handle(self, request: web.Request, target: Target) -> web.StreamResponse:
        info = self.registry.lookup(target.group, target.version, target.resource)
        if info is None:
            if self.proxy is not None:
                proxied = await self.proxy(request, target.group, target.version)
                if proxied is not None:
                    return proxied
            raise errors.StatusError(
                404, "NotFound", "the server could not find the requested resource", {}
            )
        if target.namespace and not info.namespaced:
            raise errors.StatusError(
                404, "NotFound", "the server could not find the requested resource", {}
            )
        ns = target.namespace
        q = request.query
        method = request.method
        if target.subresource:
            return await self._subresource(request, info, target)
        if method == "GET":
            if target.name:
                if target.watch_path:
                    return await self.watches.serve(request, info, ns, target.name)
                entry = self.registry.get(info, ns, target.name)
                if wants_table(request):
                    return self._table(
                        info,
                        [entry.obj],
                        {"resourceVersion": entry.obj["metadata"]["resourceVersion"]},
                        q,
                    )
                return json_response(entry_bytes(entry, info))
            if target.watch_path or query_bool(q.get("watch")):
                return await self.watches.serve(request, info, ns, "")
            return self._list(request, info, ns)
        if target.name == "" and method == "POST":
            body = await read_body(request, info)
            entry = await self.registry.create(
                info,
                ns,
                body,
                is_dry_run(q),
                strict=strict_validation(q),
                manager=field_manager(request, "CreateOptions"),
            )
            return json_response(entry_bytes(entry, info), 201)
        if method == "PUT" and target.name:
            body = await read_body(request, info)
            entry = await self.registry.update(
                info,
                ns,
                target.name,
                body,
                "",
                is_dry_run(q),
                strict_validation(q),
                field_manager(request, "UpdateOptions"),
            )
            return json_response(entry_bytes(entry, info))
        if method == "PATCH" and target.name:
            return await self._patch(request, info, ns, target.name, "")
        if method == "DELETE":
            opts = await self._delete_options(request)
            if target.name:
                entry, gone = await self.registry.delete(info, ns, target.name, opts)
                if gone and not info.return_deleted:
                    return json_response(_encode(_success(info, entry)))
                accepted = not gone and opts.cascade_requested
                return json_response(entry_bytes(entry, info), 202 if accepted else 200)
            if "deletecollection" not in info.verbs:
                raise errors.method_not_supported(info.group, info.resource, "deletecollection")
            labels, fields = selectors(info, q)
            entries = await self.registry.delete_collection(info, ns, labels, fields, opts)
            return self._list_body(info, entries, self.registry.store.rv)
        raise errors.method_not_supported(info.group, info.resource, method.lower())

    async def _patch(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str, sub: str
    ) -> web.Response:
        ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
        kind = PATCH_TYPES.get(ctype)
        if kind is None:
            raise errors.unsupported_media_type(ctype)
        body = await read_body(request, accepted=None)
        dry_run = is_dry_run(request.query)
        if kind == "apply":
            if not isinstance(body, dict):
                raise errors.bad_request("the apply configuration must be an object")
            entry, created = await self.registry.apply(
                info,
                ns,
                name,
                body,
                request.query.get("fieldManager", ""),
                sub,
                dry_run,
                strict_validation(request.query),
                query_bool(request.query.get("force")),
            )
            return json_response(entry_bytes(entry, info), 201 if created else 200)
        entry = await self.registry.patch(
            info,
            ns,
            name,
            kind,
            body,
            sub,
            dry_run,
            strict_validation(request.query),
            field_manager(request, "PatchOptions"),
        )
        return json_response(entry_bytes(entry, info))

    async def _delete_options(self, request: web.Request) -> DeleteOptions:
        q = request.query
        opts = DeleteOptions(dry_run=is_dry_run(q))
        opts.propagation = q.get("propagationPolicy", "")
        grace = query_int64(q, "gracePeriodSeconds")
        if grace is not None:
            opts.grace_period = grace
        if query_bool(q.get("orphanDependents")):
            opts.propagation = "Orphan"
        elif q.get("orphanDependents") == "false":
            opts.cascade_requested = True
        if request.can_read_body:
            raw = await limits.read_limited(request)
            if raw.strip():
                body = _delete_options_body(request, raw)
                if isinstance(body, dict):
                    opts.propagation = body.get("propagationPolicy") or opts.propagation
                    if body.get("orphanDependents") is True:
                        opts.propagation = "Orphan"
                    elif body.get("orphanDependents") is False:
                        opts.cascade_requested = True
                    if isinstance(body.get("gracePeriodSeconds"), int):
                        opts.grace_period = body["gracePeriodSeconds"]
                    pre = body.get("preconditions") or {}
                    opts.uid = pre.get("uid")
                    opts.resource_version = pre.get("resourceVersion")
                    if body.get("dryRun"):
                        opts.dry_run = True
        if opts.propagation not in ("", "Foreground", "Background", "Orphan"):
            raise errors.invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                [
                    field.not_supported(
                        "propagationPolicy",
                        opts.propagation,
                        ["Foreground", "Background", "Orphan"],
                    )
                ],
            )
        return opts

    def _list(self, request: web.Request, info: ResourceInfo, ns: str) -> web.Response:
        q = request.query
        labels, fields = selectors(info, q)
        query_int64(q, "timeoutSeconds")  # a ListOptions field: decoded, unused by a list
        # A limit of zero or less means no limit, as in the etcd store.
        limit = max(query_int64(q, "limit") or 0, 0)
        rv_param = q.get("resourceVersion", "")
        match = q.get("resourceVersionMatch", "")
        problems = list_option_errors(
            rv_param, match, q.get("continue", ""), "sendInitialEvents" in q
        )
        if problems:
            raise errors.invalid("meta.k8s.io", "ListOptions", "", problems)
        exact: int | None = None
        if q.get("continue", ""):
            # The etcd store reads the token first, and a continue carries its own version.
            decode_continue(q["continue"])
            if rv_param not in ("", "0"):
                raise errors.bad_request(
                    "specifying resource version is not allowed when using continue"
                )
        else:
            exact = exact_list_version(rv_param, match, limit, self.registry.store.rv)
        result = self.registry.list_entries(
            info, ns, labels, fields, limit, q.get("continue", ""), exact
        )
        list_meta: dict[str, Any] = {"resourceVersion": str(result.rv)}
        if result.continue_token:
            list_meta["continue"] = result.continue_token
        if result.remaining is not None:
            list_meta["remainingItemCount"] = result.remaining
        if wants_table(request):
            return self._table(info, [e.obj for e in result.entries], list_meta, q)
        head = _encode(
            {"kind": f"{info.kind}List", "apiVersion": info.api_version, "metadata": list_meta}
        )
        body = b"".join(
            (
                head[:-1],
                b',"items":[',
                b",".join(list_item_bytes(e, info) for e in result.entries),
                b"]}",
            )
        )
        return json_response(body)

    def _list_body(self, info: ResourceInfo, entries: list[Entry], rv: int) -> web.Response:
        head = _encode(
            {
                "kind": f"{info.kind}List",
                "apiVersion": info.api_version,
                "metadata": {"resourceVersion": str(rv)},
            }
        )
        items = b",".join(list_item_bytes(e, info) for e in entries)
        return json_response(b"".join((head[:-1], b',"items":[', items, b"]}")))

    def _table(
        self, info: ResourceInfo, objs: list[dict[str, Any]], list_meta: dict[str, Any], q: Any
    ) -> web.Response:
        columns = columns_for_resource(info)
        return json_response(
            _encode(to_table(objs, columns, list_meta, q.get("includeObject", "Metadata")))
        )

    async def _subresource(
        self, request: web.Request, info: ResourceInfo, target: Target
    ) -> web.StreamResponse:
        sub, ns, name, method = target.subresource, target.namespace, target.name, request.method
        if sub not in info.subresources:
            raise errors.StatusError(
                404, "NotFound", "the server could not find the requested resource", {}
            )
        if sub == "status":
            if method == "GET":
                return json_response(entry_bytes(self.registry.get(info, ns, name), info))
            if method == "PUT":
                entry = await self.registry.update(
                    info,
                    ns,
                    name,
                    await read_body(request, info),
                    "status",
                    is_dry_run(request.query),
                    manager=field_manager(request, "UpdateOptions"),
                )
                return json_response(entry_bytes(entry, info))
            if method == "PATCH":
                return await self._patch(request, info, ns, name, "status")
        extra = self.extra_subresources.get((info.group, info.resource, sub))
        if extra is not None:
            return await extra(request, info, ns, name)
        if sub == "scale" and self.scale is not None:
            return await self.scale(request, info, ns, name)
        if sub == "binding" and method == "POST":
            return await self._bind(request, info, ns, name)
        if sub == "eviction" and method == "POST":
            return await self._evict(request, info, ns, name)
        if sub == "finalize" and method == "PUT":
            return await self._finalize(request, info, name)
        raise errors.method_not_supported(info.group, f"{info.resource}/{sub}", method.lower())

    async def _evict(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str
    ) -> web.Response:
        """policy/v1 Eviction: delete the pod (no PodDisruptionBudget is enforced here)."""
        body = await read_body(request)
        options = body.get("deleteOptions") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(options or {}, dict):
            raise errors.bad_request(
                "Eviction cannot be handled: the body must be an Eviction object"
            )
        options = options or {}
        opts = DeleteOptions(dry_run=is_dry_run(request.query) or bool(options.get("dryRun")))
        if isinstance(options.get("gracePeriodSeconds"), int):
            opts.grace_period = options["gracePeriodSeconds"]
        pre = options.get("preconditions") or {}
        opts.uid, opts.resource_version = pre.get("uid"), pre.get("resourceVersion")
        await self.registry.delete(info, ns, name, opts)
        success = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }
        return json_response(_encode(success), 201)

    async def _finalize(self, request: web.Request, info: ResourceInfo, name: str) -> web.Response:
        """namespaces/{name}/finalize: replace spec.finalizers (a terminating namespace whose
        finalizers are all gone is removed)."""
        body = await read_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("spec") or {}, dict):
            raise errors.bad_request(
                "Namespace cannot be handled: the body must be a Namespace object"
            )
        finalizers = (body.get("spec") or {}).get("finalizers")
        if finalizers is not None and not (
            isinstance(finalizers, list) and all(isinstance(f, str) for f in finalizers)
        ):
            raise errors.invalid(
                "",
                "Namespace",
                name,
                [field.invalid("spec.finalizers", str(finalizers), "must be a list of strings")],
            )
        entry = self.registry.get(info, "", name)
        await self.registry.faults.before_write("", "namespaces", name)

        def replace(obj: dict[str, Any]) -> None:
            spec = obj.setdefault("spec", {})
            if finalizers:
                spec["finalizers"] = list(finalizers)
            else:
                spec.pop("finalizers", None)

        if is_dry_run(request.query):
            return json_response(entry_bytes(entry, info))
        return json_response(entry_bytes(self.registry.force_update(info, entry, replace), info))

    async def _bind(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str
    ) -> web.Response:
        body = await read_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("target") or {}, dict):
            raise errors.bad_request("Binding cannot be handled: the body must be a Binding object")
        node = (body.get("target") or {}).get("name", "")
        if not node:
            raise errors.invalid("", "Binding", name, [field.required("target.name", "")])
        entry = self.registry.get(info, ns, name)
        self.registry.check_namespace(info, ns, name)  # a binding is a create (pods/binding)
        current = entry.obj
        if (current.get("spec") or {}).get("nodeName"):
            raise errors.conflict(
                "",
                "pods",
                name,
                f'pod {name} is already assigned to node "{current["spec"]["nodeName"]}"',
            )
        if current["metadata"].get("deletionTimestamp"):
            raise errors.conflict(
                "", "pods", name, f"pod {name} is being deleted, cannot be assigned to a host"
            )

        def bind(obj: dict[str, Any]) -> None:
            obj["spec"]["nodeName"] = node
            annotations = ((body or {}).get("metadata") or {}).get("annotations")
            if annotations:
                obj["metadata"].setdefault("annotations", {}).update(annotations)
            conds = obj.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
            conds.append(
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": now_rfc3339(),
                }
            )

        if not is_dry_run(request.query):
            await self.registry.faults.before_write("", "pods", name)
            self.registry.force_update(info, entry, bind)
        return json_response(
            _encode(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "code": 201,
                }
            ),
            201,
        )


def field_manager(request: web.Request, options_kind: str) -> str:
    """The manager of a non-apply write (`fieldManager`, else the user agent's product), after
    ValidateFieldManager's checks of the parameter (a 422 about the verb's options kind)."""
    given = request.query.get("fieldManager", "")
    problems = []
    if len(given.encode()) > managedfields.MAX_MANAGER_LENGTH:
        problems.append(field.too_long("fieldManager", managedfields.MAX_MANAGER_LENGTH))
    elif not given.isprintable():
        problems.append(
            field.invalid("fieldManager", given, "must only contain printable characters")
        )
    if problems:
        raise errors.invalid("meta.k8s.io", options_kind, "", problems)
    return managedfields.manager_or_user_agent(given, request.headers.get("User-Agent", ""))


def _success(info: ResourceInfo, entry: Entry) -> dict[str, Any]:
    md = entry.obj["metadata"]
    details: dict[str, Any] = {"name": md["name"], "kind": info.resource, "uid": md.get("uid", "")}
    if info.group:
        details["group"] = info.group
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


def list_option_errors(
    rv: str, match: str, continue_token: str, send_initial_events: bool
) -> list[field.FieldError]:
    """What apimachinery's ValidateListOptions refuses in a list (not watch) request."""
    out: list[field.FieldError] = []
    if match:
        if not rv:
            out.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if continue_token:
            out.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
        if match not in ("Exact", "NotOlderThan"):
            out.append(
                field.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""])
            )
        if match == "Exact" and rv == "0":
            out.append(
                field.forbidden(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if send_initial_events:
        out.append(field.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return out


def _delete_options_body(request: web.Request, raw: bytes) -> Any:
    """A DELETE body: DeleteOptions as JSON or, as client-go sends it, protobuf."""
    if request.headers.get("Content-Type", "").split(";")[0].strip() == PROTOBUF:
        body = decode_protobuf(raw)
        if body.get("kind") != "DeleteOptions":
            raise errors.bad_request(f"invalid DeleteOptions: a {body.get('kind')} was sent")
        return body
    try:
        return msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError) as err:
        raise errors.bad_request(f"invalid DeleteOptions: {err}") from None
