"""The SDK as one Python interface, and its wiring into a grpc.aio server.

`SDKBackend` has one coroutine per RPC of `agones.dev.sdk.SDK`, `.alpha.SDK` and `.beta.SDK`,
named after the RPC in snake case (`GetGameServer` → `get_game_server`). Client streams arrive as
async iterators, server streams are returned as async iterators. Failures are `SDKError`s.
`register_services` builds the gRPC method handlers from the service descriptors, so every RPC of
the proto files is served and nothing can be forgotten; the REST gateway calls the same methods.
Bytes that are no request message never reach the backend: the call ends INTERNAL with grpc-go's
"grpc: error unmarshalling request: ..." (what Agones' Go server answers), and nothing is logged
as a failure of the server.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from ..sdk.proto import sdk_pb2
from ..sdk.proto.alpha import alpha_pb2
from ..sdk.proto.beta import beta_pb2
from .errors import SDKError

SERVICES: tuple[ServiceDescriptor, ...] = (
    sdk_pb2.DESCRIPTOR.services_by_name["SDK"],
    alpha_pb2.DESCRIPTOR.services_by_name["SDK"],
    beta_pb2.DESCRIPTOR.services_by_name["SDK"],
)


class SDKBackend(Protocol):
    """What a sidecar implementation provides; one method per RPC."""

    async def ready(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty: ...
    async def allocate(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty: ...
    async def shutdown(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty: ...
    async def health(self, requests: AsyncIterator[sdk_pb2.Empty]) -> sdk_pb2.Empty: ...
    async def get_game_server(self, request: sdk_pb2.Empty) -> sdk_pb2.GameServer: ...
    def watch_game_server(self, request: sdk_pb2.Empty) -> AsyncIterator[sdk_pb2.GameServer]: ...
    async def set_label(self, request: sdk_pb2.KeyValue) -> sdk_pb2.Empty: ...
    async def set_annotation(self, request: sdk_pb2.KeyValue) -> sdk_pb2.Empty: ...
    async def reserve(self, request: sdk_pb2.Duration) -> sdk_pb2.Empty: ...
    async def player_connect(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool: ...
    async def player_disconnect(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool: ...
    async def set_player_capacity(self, request: alpha_pb2.Count) -> alpha_pb2.Empty: ...
    async def get_player_capacity(self, request: alpha_pb2.Empty) -> alpha_pb2.Count: ...
    async def get_player_count(self, request: alpha_pb2.Empty) -> alpha_pb2.Count: ...
    async def is_player_connected(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool: ...
    async def get_connected_players(self, request: alpha_pb2.Empty) -> alpha_pb2.PlayerIDList: ...
    async def get_counter(self, request: beta_pb2.GetCounterRequest) -> beta_pb2.Counter: ...
    async def update_counter(self, request: beta_pb2.UpdateCounterRequest) -> beta_pb2.Counter: ...
    async def get_list(self, request: beta_pb2.GetListRequest) -> beta_pb2.List: ...
    async def update_list(self, request: beta_pb2.UpdateListRequest) -> beta_pb2.List: ...
    async def add_list_value(self, request: beta_pb2.AddListValueRequest) -> beta_pb2.List: ...
    async def remove_list_value(
        self, request: beta_pb2.RemoveListValueRequest
    ) -> beta_pb2.List: ...


def snake_case(name: str) -> str:
    """`GetGameServer` → `get_game_server`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def message_class(method: MethodDescriptor, output: bool = False) -> type[Message]:
    descriptor = method.output_type if output else method.input_type
    cls: type[Message] = message_factory.GetMessageClass(descriptor)
    return cls


def backend_method(backend: SDKBackend, method: MethodDescriptor) -> Callable[..., Any]:
    fn: Callable[..., Any] = getattr(backend, snake_case(method.name))
    return fn


UNMARSHAL_ERROR = "grpc: error unmarshalling request: proto: cannot parse invalid wire-format data"


class _Undecodable:
    """What the deserializer hands on for bytes that are no request message."""


_UNDECODABLE = _Undecodable()


def _deserializer(cls: type[Message]) -> Callable[[bytes], Any]:
    def deserialize(raw: bytes) -> Any:
        try:
            return cls.FromString(raw)
        except (DecodeError, RuntimeWarning):
            return _UNDECODABLE

    return deserialize


async def _checked(
    requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
) -> AsyncIterator[Message]:
    async for request in requests:
        if request is _UNDECODABLE:
            await context.abort(grpc.StatusCode.INTERNAL, UNMARSHAL_ERROR)
        yield request


def _handler(backend: SDKBackend, method: MethodDescriptor) -> grpc.RpcMethodHandler:
    fn = backend_method(backend, method)
    deserialize = _deserializer(message_class(method))
    serialize: Callable[[Message], bytes] = message_class(method, output=True).SerializeToString
    if method.server_streaming:

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if request is _UNDECODABLE:
                await context.abort(grpc.StatusCode.INTERNAL, UNMARSHAL_ERROR)
            try:
                async for item in fn(request):
                    yield item
            except SDKError as err:
                await context.abort(err.code, err.message)

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=deserialize, response_serializer=serialize
        )

    async def call(request: Any, context: grpc.aio.ServicerContext) -> Message:
        if method.client_streaming:
            request = _checked(request, context)
        elif request is _UNDECODABLE:
            await context.abort(grpc.StatusCode.INTERNAL, UNMARSHAL_ERROR)
        try:
            result: Message = await fn(request)
        except SDKError as err:
            await context.abort(err.code, err.message)
        return result

    factory: Callable[..., grpc.RpcMethodHandler] = (
        grpc.stream_unary_rpc_method_handler
        if method.client_streaming
        else grpc.unary_unary_rpc_method_handler
    )
    return factory(call, request_deserializer=deserialize, response_serializer=serialize)


def register_services(server: grpc.aio.Server, backend: SDKBackend) -> None:
    """Serve every RPC of the three SDK services from `backend`."""
    for service in SERVICES:
        handlers = {m.name: _handler(backend, m) for m in service.methods}
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(service.full_name, handlers),)
        )
