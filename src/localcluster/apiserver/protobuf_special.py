"""The Kubernetes types whose JSON form is not their message's fields (apimachinery's custom
MarshalJSON): Time and MicroTime (RFC 3339 strings), Duration (a Go duration string), Quantity (its
string), IntOrString (a number or a string), RawExtension, FieldsV1 and apiextensions' JSON (the
embedded JSON itself), the JSONSchemaProps-or-bool/array/string-array unions, and the string-list
wrappers Verbs and ExtraValue.

`from_proto(message, fields)` turns a decoded message (its fields by JSON name, raw bytes under
"") into that JSON value, or `ABSENT` where Go writes a zero as `null` or omits it; `to_proto`
is the inverse and returns the message bytes. Both raise `WireError` for values that have no
form on the other side (an unparsable time, invalid embedded JSON, a wrong JSON type).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ...apis.meta import goduration
from ...apis.meta.gotime import TimeParseError, format_rfc3339, parse_rfc3339
from .protowire import VARINT, WireError, key, length_delimited, varint

META = "k8s.io.apimachinery.pkg.apis.meta.v1"
AE = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1"
TIME = f"{META}.Time"
MICRO_TIME = f"{META}.MicroTime"
DURATION = f"{META}.Duration"
FIELDS_V1 = f"{META}.FieldsV1"
VERBS = f"{META}.Verbs"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
JSON = f"{AE}.JSON"
SCHEMA = f"{AE}.JSONSchemaProps"
OR_BOOL = f"{AE}.JSONSchemaPropsOrBool"
OR_ARRAY = f"{AE}.JSONSchemaPropsOrArray"
OR_STRING_ARRAY = f"{AE}.JSONSchemaPropsOrStringArray"
EXTRA_VALUES = ("k8s.io.api.authentication.v1.ExtraValue", "k8s.io.api.authorization.v1.ExtraValue")
STRING_LISTS = (VERBS, *EXTRA_VALUES)
EMBEDDED_JSON = (RAW_EXTENSION, FIELDS_V1, JSON)

TYPES = frozenset(
    {TIME, MICRO_TIME, DURATION, QUANTITY, INT_OR_STRING, OR_BOOL, OR_ARRAY, OR_STRING_ARRAY}
    | set(STRING_LISTS)
    | set(EMBEDDED_JSON)
)
# Special types whose JSON is a scalar with a zero value: dropped like a scalar unless KEEP_ZERO.
SCALAR_LIKE = frozenset({QUANTITY, INT_OR_STRING, DURATION})

Encode = Callable[[Any, str], bytes]


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def unb64(value: Any, name: str) -> bytes:
    if not isinstance(value, str):
        raise WireError(f"{name}: expected a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise WireError(f"{name}: illegal base64 data") from None


# -- Proto -> JSON ----------------------------------------------------------------------------


def from_proto(message: str, fields: dict[str, Any], name: str) -> Any:
    """The JSON value of a decoded message (unchanged for an ordinary message)."""
    if message not in TYPES:
        return fields
    if message in (TIME, MICRO_TIME):
        return _time_json(message, fields.get("seconds", 0), fields.get("nanos", 0), name)
    if message == DURATION:
        return goduration.format_duration(fields.get("duration", 0))
    if message == QUANTITY:
        return fields.get("string", "")
    if message == INT_OR_STRING:
        return fields.get("strVal", "") if fields.get("type") == 1 else fields.get("intVal", 0)
    if message in EMBEDDED_JSON:
        return _embedded(fields.get("", b""), name)
    if message in STRING_LISTS:
        return fields.get("items", [])
    if message == OR_BOOL:
        return fields["schema"] if "schema" in fields else bool(fields.get("allows"))
    if message == OR_ARRAY:
        return fields.get("jSONSchemas") or fields.get("schema", ABSENT)
    return fields.get("property") or fields.get("schema", ABSENT)


def _time_json(message: str, seconds: int, nanos: int, name: str) -> Any:
    if not seconds and not nanos:
        return ABSENT  # Go's zero time: `null`, replaced by the server where it matters
    try:
        t = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        raise WireError(f"{name}: time {seconds}s is out of range") from None
    if message == TIME:
        return format_rfc3339(t)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{(nanos // 1000) % 1_000_000:06d}Z"


def _embedded(raw: bytes, name: str) -> Any:
    if not raw:
        return ABSENT
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise WireError(f"{name}: the embedded object is not JSON") from None


# -- JSON -> proto ----------------------------------------------------------------------------


def to_proto(message: str, value: Any, name: str, encode: Encode) -> bytes:
    """The message bytes of a special type's JSON value."""
    if message in (TIME, MICRO_TIME):
        seconds, nanos = parse_time(value, name)
        return _varint_field(1, seconds) + _varint_field(2, nanos)
    if message == DURATION:
        return _varint_field(1, parse_duration(value, name))
    if message == QUANTITY:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise WireError(f"{name}: expected a quantity")
        return length_delimited(1, str(value).encode())
    if message == INT_OR_STRING:
        return _int_or_string(value, name)
    if message in EMBEDDED_JSON:
        return length_delimited(1, json.dumps(value, separators=(",", ":")).encode())
    if message in STRING_LISTS:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise WireError(f"{name}: expected a list of strings")
        return b"".join(length_delimited(1, v.encode()) for v in value)
    return _schema_union(message, value, name, encode)


def _varint_field(num: int, value: int) -> bytes:
    return key(num, VARINT) + varint(value) if value else b""


def _int_or_string(value: Any, name: str) -> bytes:
    if isinstance(value, str):
        return _varint_field(1, 1) + length_delimited(3, value.encode())
    if isinstance(value, int) and not isinstance(value, bool):
        return _varint_field(2, value)
    raise WireError(f"{name}: expected an integer or a string")


def _schema_union(message: str, value: Any, name: str, encode: Encode) -> bytes:
    if isinstance(value, dict):
        allows = _varint_field(1, 1) if message == OR_BOOL else b""
        return allows + length_delimited(1 if message != OR_BOOL else 2, encode(value, SCHEMA))
    if message == OR_BOOL and isinstance(value, bool):
        return _varint_field(1, int(value))
    if message != OR_BOOL and isinstance(value, list):
        if message == OR_ARRAY:
            return b"".join(length_delimited(2, encode(v, SCHEMA)) for v in value)
        if all(isinstance(v, str) for v in value):
            return b"".join(length_delimited(2, v.encode()) for v in value)
    raise WireError(f"{name}: not a valid {message.rpartition('.')[2]}")


def parse_time(value: Any, name: str) -> tuple[int, int]:
    """(seconds, nanos) of an RFC 3339 time, parsed as Go parses it."""
    if not isinstance(value, str):
        raise WireError(f"{name}: expected an RFC 3339 time")
    try:
        t = parse_rfc3339(value)
    except TimeParseError as err:
        raise WireError(f"{name}: {err}") from None
    return int(t.timestamp() // 1), t.microsecond * 1000


def parse_duration(value: Any, name: str) -> int:
    """Nanoseconds of a Go duration string."""
    if not isinstance(value, str):
        raise WireError(f"{name}: expected a duration string")
    try:
        return goduration.parse_duration(value)
    except goduration.DurationError as err:
        raise WireError(f"{name}: {err}") from None
