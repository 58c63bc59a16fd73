"""HTTP handlers of the resource API: parse the Kubernetes REST path and query, call the registry,
encode the answer (object, list, Table, Status or a watch stream).

Paths: `/api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]` and the same under
`/apis/{group}/{version}`; the legacy `/watch/` prefix and `?watch=true` both start a watch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import yaml
from aiohttp import web

from ..apis import field
from . import errors
from .meta import now_rfc3339
from .protobuf import ProtobufError, decode_object
from .registry import DeleteOptions, Registry
from .resources import ResourceInfo
from .selectors import (
    FieldSelector,
    LabelSelector,
    fields_match,
    labels_match,
    parse_field_selector,
    parse_label_selector,
)
from .store import Entry
from .table import to_table

JSON = "application/json"
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.decode

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


def json_response(
    body: bytes, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(body=body, status=status, content_type=JSON, headers=headers)


def status_response(err: errors.StatusError) -> web.Response:
    headers = None
    retry = (err.details or {}).get("retryAfterSeconds")
    if retry:
        headers = {"Retry-After": str(retry)}
    return json_response(_encode(err.status()), err.code, headers)


def entry_bytes(entry: Entry, info: ResourceInfo | None = None) -> bytes:
    """The object's JSON as the requested version: converted from its stored form, or relabelled
    when a CRD serves several versions (no-op conversion)."""
    if info is not None and info.from_storage is not None:
        return _encode(info.from_storage(entry.obj))
    if (
        info is not None
        and info.custom is not None
        and entry.obj.get("apiVersion") != info.api_version
    ):
        return _encode({**entry.obj, "apiVersion": info.api_version})
    return entry.raw if entry.raw else _encode(entry.obj)


def _bool(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1")


def _dry_run(query: Any) -> bool:
    values = query.getall("dryRun", [])
    for v in values:
        if v != "All":
            raise errors.bad_request(f"unsupported dry run value: {v!r}")
    return bool(values)


def _strict(query: Any) -> bool:
    value = query.get("fieldValidation", "")
    if value not in ("", "Ignore", "Warn", "Strict"):
        raise errors.bad_request(
            f"fieldValidation must be one of Ignore, Warn, Strict; got {value!r}"
        )
    return bool(value == "Strict")


def _selectors(info: ResourceInfo, query: Any) -> tuple[LabelSelector, FieldSelector]:
    try:
        labels = parse_label_selector(query.get("labelSelector", ""))
        fields = parse_field_selector(query.get("fieldSelector", ""))
    except ValueError as err:
        raise errors.bad_request(str(err)) from None
    for name, _, _ in fields:
        if name not in info.fields:
            raise errors.bad_request(f"field label not supported: {name}")
    return labels, fields


def _wants_table(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    return "as=Table" in accept


async def _body(request: web.Request) -> Any:
    raw = await request.read()
    if not raw:
        raise errors.bad_request("the request body is empty")
    ctype = request.headers.get("Content-Type", JSON).split(";")[0].strip()
    if ctype == "application/vnd.kubernetes.protobuf":
        try:
            return decode_object(raw)
        except ProtobufError as err:
            raise errors.StatusError(415, "UnsupportedMediaType", str(err)) from None
    try:
        if ctype.endswith("yaml"):
            return yaml.safe_load(raw)
        return _decode(raw)
    except (msgspec.DecodeError, yaml.YAMLError) as err:
        raise errors.bad_request(f"the body of the request could not be decoded: {err}") from None


class ResourceHandler:
    """Serves every resource path against one `Registry`."""

    def __init__(self, registry: Registry, bookmark_interval: float = 5.0) -> None:
        self.registry = registry
        self.bookmark_interval = bookmark_interval
        # Hooks set by crd.py for the scale subresource and by the server for APIService proxying.
        self.scale: ScaleHandler | None = None
        self.proxy: ProxyHandler | None = None

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
                    return await self._watch(request, info, ns, target.name)
                entry = self.registry.get(info, ns, target.name)
                if _wants_table(request):
                    return self._table(
                        info,
                        [entry.obj],
                        {"resourceVersion": entry.obj["metadata"]["resourceVersion"]},
                        q,
                    )
                return json_response(entry_bytes(entry, info))
            if target.watch_path or _bool(q.get("watch")):
                return await self._watch(request, info, ns, "")
            return self._list(request, info, ns)
        if target.name == "" and method == "POST":
            body = await _body(request)
            entry = await self.registry.create(info, ns, body, _dry_run(q), strict=_strict(q))
            return json_response(entry_bytes(entry, info), 201)
        if method == "PUT" and target.name:
            body = await _body(request)
            entry = await self.registry.update(
                info, ns, target.name, body, "", _dry_run(q), _strict(q)
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
                return json_response(entry_bytes(entry, info), 200 if gone else 202)
            labels, fields = _selectors(info, q)
            entries = await self.registry.delete_collection(info, ns, labels, fields, opts)
            return self._list_body(info, [e.obj for e in entries], self.registry.store.rv)
        raise errors.method_not_supported(info.group, info.resource, method.lower())

    async def _patch(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str, sub: str
    ) -> web.Response:
        ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
        kind = PATCH_TYPES.get(ctype)
        if kind is None:
            raise errors.unsupported_media_type(ctype)
        body = await _body(request)
        dry_run = _dry_run(request.query)
        if kind == "apply":
            entry, created = await self._apply(
                info, ns, name, body, sub, dry_run, request.query.get("force") == "true"
            )
            return json_response(entry_bytes(entry, info), 201 if created else 200)
        entry = await self.registry.patch(
            info, ns, name, kind, body, sub, dry_run, _strict(request.query)
        )
        return json_response(entry_bytes(entry, info))

    async def _apply(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        body: Any,
        sub: str,
        dry_run: bool,
        force: bool,
    ) -> tuple[Entry, bool]:
        """Server-side apply, simplified: create when absent, else merge the applied configuration
        (strategic merge for built-in kinds, JSON merge for custom resources). No managedFields."""
        if not isinstance(body, dict):
            raise errors.bad_request("apply patch must be an object")
        del force
        if self.registry.store.get(info.key, ns, name) is None and not sub:
            body.setdefault("metadata", {})["name"] = name
            return await self.registry.create(info, ns, body, dry_run), True
        kind = "merge" if info.patch_meta is None else "strategic"
        body = dict(body)
        body["metadata"] = {
            k: v for k, v in (body.get("metadata") or {}).items() if k != "resourceVersion"
        }
        return await self.registry.patch(info, ns, name, kind, body, sub, dry_run), False

    async def _delete_options(self, request: web.Request) -> DeleteOptions:
        q = request.query
        opts = DeleteOptions(dry_run=_dry_run(q))
        opts.propagation = q.get("propagationPolicy", "")
        if q.get("gracePeriodSeconds"):
            try:
                opts.grace_period = int(q["gracePeriodSeconds"])
            except ValueError:
                raise errors.bad_request("invalid gracePeriodSeconds") from None
        if _bool(q.get("orphanDependents")):
            opts.propagation = "Orphan"
        if request.can_read_body:
            raw = await request.read()
            if raw.strip():
                try:
                    body = _decode(raw)
                except msgspec.DecodeError as err:
                    raise errors.bad_request(f"invalid DeleteOptions: {err}") from None
                if isinstance(body, dict):
                    opts.propagation = body.get("propagationPolicy") or opts.propagation
                    if body.get("orphanDependents") is True:
                        opts.propagation = "Orphan"
                    if isinstance(body.get("gracePeriodSeconds"), int):
                        opts.grace_period = body["gracePeriodSeconds"]
                    pre = body.get("preconditions") or {}
                    opts.uid = pre.get("uid")
                    opts.resource_version = pre.get("resourceVersion")
                    if body.get("dryRun"):
                        opts.dry_run = True
        if opts.propagation not in ("", "Foreground", "Background", "Orphan"):
            raise errors.invalid("", "DeleteOptions", "", [])
        return opts

    def _list(self, request: web.Request, info: ResourceInfo, ns: str) -> web.Response:
        q = request.query
        labels, fields = _selectors(info, q)
        try:
            limit = int(q.get("limit", "0") or 0)
        except ValueError:
            raise errors.bad_request(f"invalid limit: {q.get('limit')!r}") from None
        rv_param = q.get("resourceVersion", "")
        match = q.get("resourceVersionMatch", "")
        if match and match not in ("Exact", "NotOlderThan"):
            raise errors.bad_request(f"unsupported resourceVersionMatch: {match!r}")
        if match and not rv_param:
            raise errors.invalid("meta.k8s.io", "ListOptions", "", [])
        if rv_param:
            try:
                rv = int(rv_param)
            except ValueError:
                raise errors.bad_request(f'invalid resource version "{rv_param}"') from None
            if rv > self.registry.store.rv:
                raise errors.timeout(
                    f"Too large resource version: {rv}, current: {self.registry.store.rv}"
                )
            if match == "Exact" and rv != self.registry.store.rv:
                raise errors.gone(f"too old resource version: {rv} ({self.registry.store.rv})")
        result = self.registry.list_entries(info, ns, labels, fields, limit, q.get("continue", ""))
        list_meta: dict[str, Any] = {"resourceVersion": str(result.rv)}
        if result.continue_token:
            list_meta["continue"] = result.continue_token
        if result.remaining is not None:
            list_meta["remainingItemCount"] = result.remaining
        if _wants_table(request):
            return self._table(info, [e.obj for e in result.entries], list_meta, q)
        head = _encode(
            {"kind": f"{info.kind}List", "apiVersion": info.api_version, "metadata": list_meta}
        )
        body = b"".join(
            (
                head[:-1],
                b',"items":[',
                b",".join(entry_bytes(e, info) for e in result.entries),
                b"]}",
            )
        )
        return json_response(body)

    def _list_body(self, info: ResourceInfo, objs: list[dict[str, Any]], rv: int) -> web.Response:
        return json_response(
            _encode(
                {
                    "kind": f"{info.kind}List",
                    "apiVersion": info.api_version,
                    "metadata": {"resourceVersion": str(rv)},
                    "items": objs,
                }
            )
        )

    def _table(
        self, info: ResourceInfo, objs: list[dict[str, Any]], list_meta: dict[str, Any], q: Any
    ) -> web.Response:
        columns = info.custom.printer_columns if info.custom is not None else None
        return json_response(
            _encode(to_table(objs, columns, list_meta, q.get("includeObject", "Metadata")))
        )

    async def _watch(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str
    ) -> web.StreamResponse:
        q = request.query
        labels, fields = _selectors(info, q)
        if name:
            fields = (*fields, ("metadata.name", "=", name))
        rv_param = q.get("resourceVersion", "")
        try:
            since = None if rv_param in ("", "0") else int(rv_param)
        except ValueError:
            raise errors.bad_request(f'invalid resource version "{rv_param}"') from None
        try:
            timeout = float(q.get("timeoutSeconds", "0") or 0) or 1800.0
        except ValueError:
            raise errors.bad_request("invalid timeoutSeconds") from None
        bookmarks = _bool(q.get("allowWatchBookmarks"))
        initial_end = _bool(q.get("sendInitialEvents"))
        if initial_end and not bookmarks:
            raise errors.invalid("meta.k8s.io", "ListOptions", "", [])
        getters = info.fields

        def predicate(obj: dict[str, Any]) -> bool:
            if labels and not labels_match(labels, obj["metadata"].get("labels")):
                return False
            if fields:
                return fields_match(fields, getters, obj)
            return True

        store = self.registry.store
        resp = web.StreamResponse(
            status=200, headers={"Content-Type": JSON, "Cache-Control": "no-cache, private"}
        )
        resp.enable_chunked_encoding()
        try:
            watcher = store.watch(
                info.key,
                ns,
                predicate if (labels or fields) else None,
                since if not initial_end else None,
            )
        except errors.StatusError as err:
            await resp.prepare(request)
            await resp.write(_encode({"type": "ERROR", "object": err.status()}) + b"\n")
            return resp
        await resp.prepare(request)
        transport = request.transport
        if transport is not None:
            watcher.on_overrun = transport.abort
        deadline = time.monotonic() + timeout
        kind_prefix = {"kind": info.kind, "apiVersion": info.api_version}
        table = (
            (
                q.get("includeObject", "Metadata"),
                info.custom.printer_columns if info.custom else None,
            )
            if _wants_table(request)
            else None
        )
        try:
            if initial_end:
                mark = {
                    **kind_prefix,
                    "metadata": {
                        "resourceVersion": str(store.rv),
                        "annotations": {"k8s.io/initial-events-end": "true"},
                    },
                }
                watcher.push(("BOOKMARK", mark, b""))
            next_bookmark = time.monotonic() + self.bookmark_interval
            while True:
                now = time.monotonic()
                if now >= deadline:
                    break
                wait = min(deadline, next_bookmark if bookmarks else deadline) - now
                batch = await watcher.next_batch(max(wait, 0.0))
                if watcher.closed:
                    break
                if batch:
                    chunks = [
                        self._event_line(info, typ, obj, raw, table) for typ, obj, raw in batch
                    ]
                    await resp.write(b"".join(chunks))
                if bookmarks and time.monotonic() >= next_bookmark:
                    mark = {**kind_prefix, "metadata": {"resourceVersion": str(store.rv)}}
                    await resp.write(_encode({"type": "BOOKMARK", "object": mark}) + b"\n")
                    next_bookmark = time.monotonic() + self.bookmark_interval
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            store.stop_watch(info.key, watcher)
        return resp

    @staticmethod
    def _event_line(
        info: ResourceInfo,
        typ: str,
        obj: dict[str, Any] | None,
        raw: bytes,
        table: tuple[str, Any] | None,
    ) -> bytes:
        """One watch event as a JSON line: the stored bytes when they can be used as they are, a
        one-row Table for `as=Table` watches (kubectl get -w)."""
        if info.from_storage is not None and obj is not None and typ not in ("BOOKMARK", "ERROR"):
            obj, raw = info.from_storage(obj), b""
        if table is not None and obj is not None and typ not in ("BOOKMARK", "ERROR"):
            list_meta = {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
            rendered = to_table([obj], table[1], list_meta, table[0])
            return _encode({"type": typ, "object": rendered}) + b"\n"
        if raw and (
            info.custom is None or obj is None or obj.get("apiVersion") == info.api_version
        ):
            return b'{"type":"' + typ.encode() + b'","object":' + raw + b"}\n"
        if info.custom is not None and obj is not None and typ != "BOOKMARK":
            obj = {**obj, "apiVersion": info.api_version}
        return _encode({"type": typ, "object": obj}) + b"\n"

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
                    info, ns, name, await _body(request), "status", _dry_run(request.query)
                )
                return json_response(entry_bytes(entry, info))
            if method == "PATCH":
                return await self._patch(request, info, ns, name, "status")
        if sub == "scale" and self.scale is not None:
            return await self.scale(request, info, ns, name)
        if sub == "binding" and method == "POST":
            return await self._bind(request, info, ns, name)
        raise errors.method_not_supported(info.group, f"{info.resource}/{sub}", method.lower())

    async def _bind(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str
    ) -> web.Response:
        body = await _body(request)
        node = ((body or {}).get("target") or {}).get("name", "")
        if not node:
            raise errors.invalid("", "Binding", name, [field.required("target.name", "")])
        entry = self.registry.get(info, ns, name)
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

        if not _dry_run(request.query):
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
