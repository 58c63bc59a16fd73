"""Request and response plumbing shared by the resource handlers: decoding bodies (JSON, YAML,
Kubernetes protobuf), query parameters (dryRun, fieldValidation, selectors), and encoding objects and
Status errors as kube-apiserver does.

Protobuf (`protobuf.py`): a body sent as `application/vnd.kubernetes.protobuf` is decoded into the
JSON form everything else handles (400 when malformed, 415 for custom resources, which have no
protobuf form); a response whose request's Accept prefers protobuf is encoded as protobuf by
`negotiate_response`, the one place responses change media type (JSON when the kind has no
protobuf form and the client accepts JSON, else 406).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml
from aiohttp import web

from . import errors, limits
from .protobuf import CONTENT_TYPE as PROTOBUF
from .protobuf import ProtobufError, decode_object, encode_object
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
from .watch import Obj, Predicate

JSON = "application/json"
encode = msgspec.json.Encoder().encode
_encode = encode
_decode = msgspec.json.decode


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


def list_item_bytes(entry: Entry, info: ResourceInfo) -> bytes:
    """An object as an item of a list: a built-in kind's items carry no apiVersion or kind (Go's
    typed list items have no TypeMeta set); a custom resource's keep theirs."""
    if info.custom is not None:
        return entry_bytes(entry, info)
    obj = info.from_storage(entry.obj) if info.from_storage is not None else entry.obj
    return _encode({k: v for k, v in obj.items() if k != "apiVersion" and k != "kind"})


def query_bool(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1")


_INT64 = re.compile(r"[+-]?[0-9]+")


def query_int64(query: Any, name: str) -> int | None:
    """An int64 query parameter as apimachinery's parameter codec converts it (strconv.ParseInt):
    absent or empty is None, anything else that is not a base-10 int64 is a 400 in Go's words."""
    value = query.get(name, "")
    if not value:
        return None
    if not _INT64.fullmatch(value):
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax')
    number = int(value)
    if not -(1 << 63) <= number < 1 << 63:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": value out of range')
    return number


def is_dry_run(query: Any) -> bool:
    values = query.getall("dryRun", [])
    for v in values:
        if v != "All":
            raise errors.bad_request(f"unsupported dry run value: {v!r}")
    return bool(values)


def strict_validation(query: Any) -> bool:
    value = query.get("fieldValidation", "")
    if value not in ("", "Ignore", "Warn", "Strict"):
        raise errors.bad_request(
            f"fieldValidation must be one of Ignore, Warn, Strict; got {value!r}"
        )
    return bool(value == "Strict")


def selectors(info: ResourceInfo, query: Any) -> tuple[LabelSelector, FieldSelector]:
    try:
        labels = parse_label_selector(query.get("labelSelector", ""))
        fields = parse_field_selector(query.get("fieldSelector", ""))
    except ValueError as err:
        raise errors.bad_request(str(err)) from None
    for name, _, _ in fields:
        if name not in info.fields:
            raise errors.bad_request(f"field label not supported: {name}")
    return labels, fields


def watch_predicate(
    info: ResourceInfo, labels: LabelSelector, fields: FieldSelector
) -> Predicate | None:
    """The watch filter of a request's selectors (None: everything matches), for watches over
    HTTP and in process alike."""
    if labels.empty() and not fields:
        return None
    getters = info.fields

    def matches(obj: Obj) -> bool:
        if not labels_match(labels, obj["metadata"].get("labels")):
            return False
        return not fields or fields_match(fields, getters, obj)

    return matches


def only_name(fields: FieldSelector) -> str | None:
    """The name a field selector requires (`metadata.name=x`), if it requires one."""
    for label, op, value in fields:
        if label == "metadata.name" and op == "=":
            return value
    return None


def exact_list_version(resource_version: str, match: str, limit: int, current: int) -> int | None:
    """The revision a list must read exactly (None: the current state), as the etcd store
    decides it: resourceVersionMatch=Exact, or, with no match, a non-zero resourceVersion with a
    limit (the legacy rule, so a compacted one answers 410 as on kube-apiserver). A version
    newer than `current` is refused as kube-apiserver refuses it."""
    if not resource_version:
        return None
    try:
        rv = int(resource_version)
    except ValueError:
        raise errors.bad_request(f'invalid resource version "{resource_version}"') from None
    if rv > current:
        raise errors.too_large_resource_version(rv, current)
    legacy_exact = not match and limit > 0 and rv > 0
    return rv if match == "Exact" or legacy_exact else None


def wants_table(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    return "as=Table" in accept


async def read_body(
    request: web.Request,
    info: ResourceInfo | None = None,
    accepted: tuple[str, ...] | None = limits.BUILTIN_MEDIA_TYPES,
) -> Any:
    """The decoded body of a create, update or patch. With `info` (the resource the body is meant
    to be) the media types are that resource's (custom resources have no protobuf) and protobuf
    errors name its kind; else `accepted` lists them (None: the caller has checked the content
    type, as for patches)."""
    raw = await limits.read_limited(request)
    if not raw:
        raise errors.bad_request("the request body is empty")
    ctype = request.headers.get("Content-Type", "").split(";")[0].strip().lower() or JSON
    if info is not None:
        accepted = (
            limits.CUSTOM_MEDIA_TYPES if info.custom is not None else limits.BUILTIN_MEDIA_TYPES
        )
    if accepted is not None and ctype not in accepted:
        raise limits.unsupported_media_type(accepted)
    if ctype == PROTOBUF:
        return decode_protobuf(raw, info.kind if info is not None else "")
    is_yaml = ctype.endswith("yaml")
    try:
        body = yaml.safe_load(raw) if is_yaml else _decode(raw)
    except (msgspec.DecodeError, yaml.YAMLError) as err:
        raise errors.bad_request(f"the body of the request could not be decoded: {err}") from None
    except RecursionError:
        raise limits.nesting_error() from None
    limits.check_depth(raw, body, not is_yaml)
    return body


def decode_protobuf(raw: bytes, into: str = "") -> Any:
    """The JSON object of a protobuf body; a 400 worded as kube-apiserver's transformDecodeError
    words it when the body was meant to be a `into`."""
    try:
        return decode_object(raw)
    except ProtobufError as err:
        if not into:
            raise errors.bad_request(
                f"the body of the request could not be decoded: {err}"
            ) from None
        if err.type_meta is not None and err.type_meta[1]:
            api_version, kind = err.type_meta
            version = api_version.rpartition("/")[2]
            message = f'{kind} in version "{version}" cannot be handled as a {into}: {err}'
        else:
            summary = _summary(raw)
            message = (
                f"the object provided is unrecognized (must be of type {into}): {err} ({summary})"
            )
        raise errors.bad_request(message) from None


def _summary(raw: bytes, limit: int = 30) -> str:
    """apiserver's summarizeData: JSON-looking bodies as text, others as hex."""
    if not raw:
        return "<empty>"
    head = raw[:limit].decode("utf-8", "replace") if raw[:1] == b"{" else raw[:limit].hex()
    return head + (" ..." if len(raw) > limit else "")


def _accepted(accept: str) -> list[str]:
    """The media types of an Accept header, most preferred first (by q, then order)."""
    ranked = []
    for i, clause in enumerate(accept.split(",")):
        media, *params = (p.strip() for p in clause.split(";"))
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        if media and q > 0:
            ranked.append((-q, i, media.lower()))
    return [media for _, _, media in sorted(ranked)]


def _prefers_protobuf(accept: str) -> tuple[bool, bool]:
    """(protobuf is the preferred type, JSON is acceptable)."""
    types = _accepted(accept)
    json_ok = any(t in (JSON, "*/*", "application/*") or t.endswith("yaml") for t in types)
    for t in types:
        if t == PROTOBUF:
            return True, json_ok
        if t in (JSON, "*/*", "application/*") or t.endswith("yaml"):
            return False, True
    return False, json_ok


def wants_protobuf(request: web.Request) -> bool:
    """Whether the request's Accept prefers protobuf (watches: the length-delimited stream)."""
    accept = request.headers.get("Accept", "")
    return PROTOBUF in accept and "as=Table" not in accept and _prefers_protobuf(accept)[0]


def negotiate_response(request: web.Request, resp: web.StreamResponse) -> web.StreamResponse:
    """`resp` as protobuf when the request prefers it and the object has a protobuf form."""
    accept = request.headers.get("Accept", "")
    if PROTOBUF not in accept or "as=Table" in accept:
        return resp
    if not isinstance(resp, web.Response) or resp.content_type != JSON:
        return resp
    wanted, json_ok = _prefers_protobuf(accept)
    if not wanted or not isinstance(resp.body, bytes):
        return resp
    try:
        obj = _decode(resp.body)
    except msgspec.DecodeError:
        return resp
    if not isinstance(obj, dict) or "kind" not in obj:
        return resp  # not an API object (/version, OpenAPI): JSON whatever was asked
    try:
        body = encode_object(obj)
    except ProtobufError:
        if json_ok:
            return resp
        return status_response(errors.not_acceptable(f"{JSON}, application/yaml"))
    headers = {k: v for k, v in resp.headers.items() if k.lower() not in _RECOMPUTED}
    return web.Response(body=body, status=resp.status, content_type=PROTOBUF, headers=headers)


_RECOMPUTED = frozenset({"content-type", "content-length"})
