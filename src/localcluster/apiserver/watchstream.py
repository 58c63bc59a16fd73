"""Serving a watch: the chunked stream of JSON lines (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) a
client reads until `timeoutSeconds`, with periodic bookmarks, watch-list initial events, Table
rendering for kubectl, and the connection aborted when its consumer falls too far behind.

A client whose Accept prefers protobuf (client-go's typed clients) gets kube-apiserver's protobuf
stream instead, for built-in kinds: `application/vnd.kubernetes.protobuf;stream=watch`, each event
a 4-byte big-endian length and a `metav1.WatchEvent` whose object is the enveloped object.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from aiohttp import web

from ...apis import field
from . import errors
from .printers import columns_for_resource
from .protobuf import CONTENT_TYPE as PROTOBUF
from .protobuf import ProtobufError, encode_object
from .protowire import length_delimited
from .registry import Registry
from .requests import (
    JSON,
    encode,
    only_name,
    query_bool,
    query_int64,
    selectors,
    wants_protobuf,
    wants_table,
    watch_predicate,
)
from .resources import ResourceInfo
from .selectors import FieldSelector, LabelSelector
from .table import to_table
from .watch import Watcher

_encode = encode


Frame = Callable[[dict[str, Any]], bytes]


@dataclass(frozen=True)
class WatchOptions:
    """What a watch request asks for, read and checked before any byte is sent."""

    labels: LabelSelector
    fields: FieldSelector
    since: int | None
    timeout: float
    bookmarks: bool
    initial_end: bool
    table: tuple[str, Any] | None
    frame: Frame | None  # protobuf framing; None: JSON lines


def watch_options(request: web.Request, info: ResourceInfo, name: str) -> WatchOptions:
    """The watch's query parameters, or the 400/422 kube-apiserver gives for them."""
    q = request.query
    labels, fields = selectors(info, q)
    if name:
        fields = (*fields, ("metadata.name", "=", name))
    rv_param = q.get("resourceVersion", "")
    try:
        since = None if rv_param in ("", "0") else int(rv_param)
    except ValueError:
        raise errors.bad_request(f'invalid resource version "{rv_param}"') from None
    # an int64 in ListOptions: "nan", "inf" or "1.5" do not decode (and "nan" never expires)
    timeout = float(query_int64(q, "timeoutSeconds") or 0) or 1800.0
    bookmarks = query_bool(q.get("allowWatchBookmarks"))
    initial_end = query_bool(q.get("sendInitialEvents"))
    problems = watch_option_errors(
        q.get("resourceVersionMatch", ""), q.get("continue", ""), "sendInitialEvents" in q
    )
    if initial_end and not bookmarks:
        problems.append(
            field.forbidden(
                "sendInitialEvents",
                "sendInitialEvents requires setting allowWatchBookmarks to true",
            )
        )
    if problems:
        raise errors.invalid("meta.k8s.io", "ListOptions", "", problems)
    table = (
        (q.get("includeObject", "Metadata"), columns_for_resource(info))
        if wants_table(request)
        else None
    )
    frame = (
        _protobuf_frame
        if table is None and info.custom is None and wants_protobuf(request)
        else None
    )
    return WatchOptions(labels, fields, since, timeout, bookmarks, initial_end, table, frame)


FRAME_MEMO_SIZE = 512
"""Recent events' protobuf frames kept for the other protobuf watchers of the same events."""

Item = tuple[str, dict[str, Any] | None, bytes]


class WatchServer:
    def __init__(self, registry: Registry, bookmark_interval: float) -> None:
        self.registry = registry
        self.bookmark_interval = bookmark_interval
        # (id(raw), type, id(info)) -> (raw, info, frame): one protobuf encoding per event for
        # all its protobuf watchers (client-go's informers); raw and info are held, so their
        # ids cannot be reused while the entry lives.
        self._frames: dict[tuple[int, str, int], tuple[bytes, ResourceInfo, bytes]] = {}

    async def serve(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str
    ) -> web.StreamResponse:
        opts = watch_options(request, info, name)
        deadline = time.monotonic() + opts.timeout
        store = self.registry.store
        ctype = f"{PROTOBUF};stream=watch" if opts.frame is not None else JSON
        resp = web.StreamResponse(
            status=200, headers={"Content-Type": ctype, "Cache-Control": "no-cache, private"}
        )
        resp.enable_chunked_encoding()
        # Headers first: the watcher is registered only once nothing can fail before the `finally`
        # that removes it (a client gone during `prepare` would leave it filling up unread).
        await resp.prepare(request)
        try:
            watcher = store.watch(
                info.key,
                ns,
                watch_predicate(info, opts.labels, opts.fields),
                opts.since if not opts.initial_end else None,
                only_name(opts.fields),
            )
        except errors.StatusError as err:
            await resp.write(_control_line(opts, {"type": "ERROR", "object": err.status()}))
            return resp
        transport = request.transport
        if transport is not None:
            watcher.on_overrun = transport.abort
        try:
            await self._stream(resp, watcher, info, opts, deadline)
        except ConnectionResetError:
            pass
        finally:
            store.stop_watch(info.key, watcher)
        return resp

    async def _stream(
        self,
        resp: web.StreamResponse,
        watcher: Watcher,
        info: ResourceInfo,
        opts: WatchOptions,
        deadline: float,
    ) -> None:
        """Events (and bookmarks, when asked for) until the deadline or the watcher closes."""
        store = self.registry.store
        kind_prefix = {"kind": info.kind, "apiVersion": info.api_version}
        if opts.initial_end:
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
                return
            wait = min(deadline, next_bookmark if opts.bookmarks else deadline) - now
            batch = await watcher.next_batch(max(wait, 0.0))
            if watcher.closed:
                return
            if batch:
                await resp.write(self._encode_batch(info, batch, opts))
            if opts.bookmarks and time.monotonic() >= next_bookmark:
                mark = {**kind_prefix, "metadata": {"resourceVersion": str(store.rv)}}
                await resp.write(_control_line(opts, {"type": "BOOKMARK", "object": mark}))
                next_bookmark = time.monotonic() + self.bookmark_interval

    def _encode_batch(self, info: ResourceInfo, batch: list[Item], opts: WatchOptions) -> bytes:
        """A batch of events as one chunk of the stream. JSON events whose stored bytes serve as
        they are (the common case) are spliced between their `{"type":…,"object":` prefix and
        `}\n` and joined once, without building each line."""
        if opts.frame is not None:
            return b"".join(self.protobuf_event(info, item) for item in batch)
        table = opts.table
        if table is not None or info.from_storage is not None:
            return b"".join(self._event_line(info, typ, obj, raw, table) for typ, obj, raw in batch)
        custom = info.custom is not None
        api_version = info.api_version
        parts: list[bytes] = []
        for typ, obj, raw in batch:
            if raw and (not custom or obj is None or obj.get("apiVersion") == api_version):
                parts += (_line_prefix(typ), raw, b"}\n")
            else:
                parts.append(self._event_line(info, typ, obj, raw, None))
        return b"".join(parts)

    def protobuf_event(self, info: ResourceInfo, item: Item) -> bytes:
        """An event's protobuf frame, encoded once for every watcher it goes to (an event carries
        its stored bytes; one without them, a selector's synthesized DELETED, is encoded alone)."""
        typ, obj, raw = item
        if not raw:
            return _protobuf_frame(_event(info, typ, obj, raw))
        key = (id(raw), typ, id(info))
        memo = self._frames.get(key)
        if memo is not None and memo[0] is raw and memo[1] is info:
            return memo[2]
        frame = _protobuf_frame(_event(info, typ, obj, raw))
        self._frames[key] = (raw, info, frame)
        if len(self._frames) > FRAME_MEMO_SIZE:
            del self._frames[next(iter(self._frames))]
        return frame

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
            return b"".join((_line_prefix(typ), raw, b"}\n"))
        if info.custom is not None and obj is not None and typ != "BOOKMARK":
            obj = {**obj, "apiVersion": info.api_version}
        return _encode({"type": typ, "object": obj}) + b"\n"


_LINE_PREFIXES = {
    typ: b'{"type":"' + typ.encode() + b'","object":'
    for typ in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR")
}


def _line_prefix(typ: str) -> bytes:
    """What a JSON watch line holds before its object."""
    prefix = _LINE_PREFIXES.get(typ)
    return prefix if prefix is not None else b'{"type":"' + typ.encode() + b'","object":'


def _control_line(opts: WatchOptions, event: dict[str, Any]) -> bytes:
    """A BOOKMARK or ERROR event in the stream's framing."""
    return opts.frame(event) if opts.frame is not None else _encode(event) + b"\n"


def _event(info: ResourceInfo, typ: str, obj: dict[str, Any] | None, raw: bytes) -> dict[str, Any]:
    if obj is None:
        obj = msgspec.json.decode(raw)
    elif info.from_storage is not None and typ not in ("BOOKMARK", "ERROR"):
        obj = info.from_storage(obj)
    return {"type": typ, "object": obj}


def _protobuf_frame(event: dict[str, Any]) -> bytes:
    """One length-delimited `metav1.WatchEvent` {type, object: RawExtension{raw}}, the raw bytes
    being the object's own enveloped protobuf body (a Status for ERROR events)."""
    try:
        typ, obj = event["type"], encode_object(event["object"])
    except ProtobufError as err:  # a stored object the v1.28 messages cannot carry
        typ, obj = "ERROR", encode_object(errors.internal(f"encoding the object: {err}").status())
    body = length_delimited(1, typ.encode()) + length_delimited(2, length_delimited(1, obj))
    return len(body).to_bytes(4, "big") + body


def watch_option_errors(
    match: str, continue_token: str, send_initial_events: bool
) -> list[field.FieldError]:
    """What apimachinery's validateWatchOptions refuses (the WatchList feature taken as enabled)."""
    out: list[field.FieldError] = []
    if send_initial_events and match != "NotOlderThan":
        out.append(
            field.forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        )
    if match:
        if not send_initial_events:
            out.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                )
            )
        if match != "NotOlderThan":
            out.append(field.not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
        if continue_token:
            out.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
    return out
