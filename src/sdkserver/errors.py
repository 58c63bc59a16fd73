"""SDK errors as values carrying a gRPC status code.

Backends raise `SDKError`; the gRPC layer aborts the call with its code and message, the REST
gateway maps the code to an HTTP status the way grpc-gateway does. Agones' local and test modes
return plain Go errors, which reach clients as UNKNOWN; `plain_error` builds those, and `go_value`
formats a message in them as Go's `%v` does (its compact prototext, `<nil>` when unset).
"""

from __future__ import annotations

import json

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message


class SDKError(Exception):
    """An RPC failure: `code` and `message` are what the client receives."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"SDKError({self.code.name}, {self.message!r})"


def plain_error(message: str) -> SDKError:
    """A Go `errors.New`/`Errorf` returned from a handler: status UNKNOWN."""
    return SDKError(grpc.StatusCode.UNKNOWN, message)


def go_value(message: Message, present: bool = True) -> str:
    """`fmt.Sprintf("%v", msg)` of a Go protobuf message: `<nil>` when unset, else its compact
    prototext (`name:"rooms" count:{value:3}`; Go may pad it with a space, a detail not kept)."""
    if not present:
        return "<nil>"
    parts: list[str] = []
    for field, value in message.ListFields():
        values = list(value) if field.is_repeated else [value]
        parts.extend(f"{field.name}:{_go_scalar(field, v)}" for v in values)
    return " ".join(parts)


def _go_scalar(field: FieldDescriptor, value: object) -> str:
    if isinstance(value, Message):
        return "{" + go_value(value) + "}"
    if field.type == FieldDescriptor.TYPE_STRING:
        return json.dumps(value, ensure_ascii=False)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "true" if value else "false"
    return str(value)
