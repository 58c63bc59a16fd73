"""Request and response plumbing shared by the resource handlers: decoding bodies (JSON, YAML,
kubectl's protobuf), query parameters (dryRun, fieldValidation, selectors), and encoding objects and
Status errors as kube-apiserver does.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml
from aiohttp import web

from . import errors, limits
from .protobuf import ProtobufError, decode_object
from .resources import ResourceInfo
from .selectors import FieldSelector, LabelSelector, parse_field_selector, parse_label_selector
from .store import Entry

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


def wants_table(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    return "as=Table" in accept


async def read_body(
    request: web.Request, accepted: tuple[str, ...] | None = limits.BUILTIN_MEDIA_TYPES
) -> Any:
    """The decoded body of a create, update or patch. `accepted` lists the media types the endpoint
    decodes (None: the caller has checked the content type, as for patches)."""
    raw = await limits.read_limited(request)
    if not raw:
        raise errors.bad_request("the request body is empty")
    ctype = request.headers.get("Content-Type", "").split(";")[0].strip().lower() or JSON
    if accepted is not None and ctype not in accepted:
        raise limits.unsupported_media_type(accepted)
    if ctype == limits.PROTOBUF:
        try:
            return decode_object(raw)
        except ProtobufError as err:
            raise errors.StatusError(415, "UnsupportedMediaType", str(err)) from None
    is_yaml = ctype.endswith("yaml")
    try:
        body = yaml.safe_load(raw) if is_yaml else _decode(raw)
    except (msgspec.DecodeError, yaml.YAMLError) as err:
        raise errors.bad_request(f"the body of the request could not be decoded: {err}") from None
    except RecursionError:
        raise limits.nesting_error() from None
    limits.check_depth(raw, body, not is_yaml)
    return body
