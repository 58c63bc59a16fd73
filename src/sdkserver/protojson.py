"""JSON for the REST gateway, as grpc-gateway marshals it for Agones' SDK server.

Agones configures protojson with `UseProtoNames` and `EmitUnpopulated` (and `DiscardUnknown` when
reading): keys are proto field names (`object_meta`), every field is present (scalars with their
zero value, unset message fields as `null`), 64-bit integers are JSON strings. Reading accepts proto
names and JSON (lowerCamel) names and ignores unknown keys.

Reading a request body never fails but with `json_format.ParseError` (the gateway's 400): bytes
that are not UTF-8 or not JSON, a JSON value that is not an object where a message is expected
(`123`, `"x"`, `[]`, `null`: Go's protojson "unexpected token"), a field of the wrong type, a
number out of its field's range, nesting deeper than the decoder goes.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

# Well-known types whose JSON form is not an object of their fields.
_SPECIAL_JSON = {
    "google.protobuf.Any",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
    "google.protobuf.FieldMask",
    "google.protobuf.Struct",
    "google.protobuf.Value",
    "google.protobuf.ListValue",
    "google.protobuf.Int64Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Int32Value",
    "google.protobuf.UInt32Value",
    "google.protobuf.BoolValue",
    "google.protobuf.StringValue",
    "google.protobuf.BytesValue",
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
}


def marshal(message: Message) -> dict[str, Any]:
    """The message as a JSON-ready dict, with grpc-gateway's options for the SDK."""
    data: dict[str, Any] = json_format.MessageToDict(
        message, always_print_fields_with_no_presence=True, preserving_proto_field_name=True
    )
    _fill_nulls(message, data)
    ordered: dict[str, Any] = _ordered(message.DESCRIPTOR, data)
    return ordered


def _ordered(descriptor: Descriptor, data: Any) -> Any:
    """Keys in declaration order, as Go's protojson writes them."""
    if not isinstance(data, dict) or descriptor.full_name in _SPECIAL_JSON:
        return data
    result: dict[str, Any] = {}
    for field in descriptor.fields:
        if field.name not in data:
            continue
        value = data[field.name]
        if field.type == FieldDescriptor.TYPE_MESSAGE and value is not None:
            if _is_map(field):
                value_field = field.message_type.fields_by_name["value"]
                if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                    value = {k: _ordered(value_field.message_type, v) for k, v in value.items()}
            elif field.is_repeated:
                value = [_ordered(field.message_type, v) for v in value]
            else:
                value = _ordered(field.message_type, value)
        result[field.name] = value
    return result


def _is_map(field: FieldDescriptor) -> bool:
    return bool(
        field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry
    )


def _fill_nulls(message: Message, data: dict[str, Any]) -> None:
    descriptor: Descriptor = message.DESCRIPTOR
    if descriptor.full_name in _SPECIAL_JSON:
        return
    for field in descriptor.fields:
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        value = getattr(message, field.name)
        if _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                for key, item in value.items():
                    _fill_nulls(item, data[field.name][str(key)])
        elif field.is_repeated:
            for item, item_data in zip(value, data[field.name], strict=True):
                if isinstance(item_data, dict):
                    _fill_nulls(item, item_data)
        elif field.containing_oneof is not None:
            continue
        elif not message.HasField(field.name):
            data[field.name] = None
        elif isinstance(data.get(field.name), dict):
            _fill_nulls(value, data[field.name])


def unmarshal(data: Any, message: Message) -> None:
    """Merge JSON `data` into `message`; `json_format.ParseError` when it does not fit."""
    if not isinstance(data, dict) and message.DESCRIPTOR.full_name not in _SPECIAL_JSON:
        raise json_format.ParseError(
            f"proto: syntax error (line 1:1): unexpected token {_go_token(data)}"
        )
    try:
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except json_format.ParseError:
        raise
    except (TypeError, ValueError, AttributeError, OverflowError, RecursionError) as err:
        raise json_format.ParseError(f"proto: {err}") from None


def _go_token(value: Any) -> str:
    """How Go's JSON tokenizer names the first token of `value` in its errors."""
    if isinstance(value, list):
        return "["
    return json.dumps(value, ensure_ascii=False)


def decode_values(raw: bytes, limit: int | None = None) -> list[Any]:
    """The JSON values of a body one after the other (at most `limit`), as Go's `json.Decoder`
    reads them: a unary request reads only the first, a client stream every one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise json_format.ParseError(f"invalid UTF-8 in request body: {err.reason}") from None
    decoder = json.JSONDecoder(parse_constant=_no_constants)
    values: list[Any] = []
    pos = 0
    while limit is None or len(values) < limit:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            raise json_format.ParseError(_go_syntax_error(err)) from None
        except RecursionError:
            raise json_format.ParseError("exceeded max depth") from None
        values.append(value)
    return values


def _no_constants(name: str) -> Any:
    """`NaN`, `Infinity`, `-Infinity` are Python's extensions; Go's decoder knows no such value."""
    raise json_format.ParseError(f"invalid character '{name[0]}' looking for beginning of value")


def _go_syntax_error(err: json.JSONDecodeError) -> str:
    """encoding/json's words for the common syntax errors, else the decoder's own."""
    if err.pos >= len(err.doc):
        return "unexpected EOF"
    char = json.dumps(err.doc[err.pos])[1:-1].replace("'", "\\'")
    if err.msg == "Expecting value":
        return f"invalid character '{char}' looking for beginning of value"
    return f"invalid character '{char}': {err.msg.lower()}"
