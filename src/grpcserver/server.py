"""A gRPC server as an asyncio protocol: HTTP/2 framing, flow control and HPACK (`hpack`) done here,
on the loop that runs the handlers, so a call costs no thread hand-off and no second socket.

Why: grpc's own asyncio server spends some 250 µs of CPU on a unary call (its C core polls on a
thread of its own and hands every event to the loop), five times what an aiohttp request costs;
and the allocator could only reach it through a loopback relay. `Server` serves the same handlers
(`add_generic_rpc_handlers`, `add_registered_method_handlers`: what the generated
`add_*Servicer_to_server` functions and `grpc.method_handlers_generic_handler` call) on whatever
transport it is given: `Server.protocol` is a protocol factory, for a listener that has already
accepted (and maybe TLS-terminated) the connection.

Calls: unary-unary and unary-stream (a handler that returns, yields or `context.write`s); a
client-streaming or bidirectional method answers UNIMPLEMENTED. Requests may be gzip or deflate
compressed (`grpc-encoding`); answers are not. `grpc-timeout` is a deadline: the handler is
cancelled and the call ends DEADLINE_EXCEEDED. A message over `max_receive_message_length` ends the
call RESOURCE_EXHAUSTED, as grpc does. Status and message come from `context.abort`, `set_code` /
`set_details`, or an exception (UNKNOWN, `Unexpected <class>: text`, as grpc's Python server
says). Unknown services and methods answer UNIMPLEMENTED with grpc-go's wording.

HTTP/2: the connection preface, SETTINGS (the client's max frame size, initial window and table
size honoured; ours: `MAX_CONCURRENT_STREAMS`), PING answered, WINDOW_UPDATE (data waits for
window on both the stream and the connection), RST_STREAM (cancels the handler), CONTINUATION,
padding, PRIORITY ignored, GOAWAY. A protocol violation ends the connection with GOAWAY and its
error code; a stream-level one resets just that stream. Keepalive as the allocator's grpc options
were: a connection without calls for `max_connection_idle` is sent GOAWAY and closed; a client
that pings more than once per `min_ping_interval` with nothing sent in between gets, at the third
such ping, GOAWAY ENHANCE_YOUR_CALM "too_many_pings" (grpc-go's enforcement policy).

`stop(grace)` sends every connection GOAWAY (calls already started run on; new ones are refused),
waits up to `grace` for running calls, cancels the rest and closes the connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

import grpc

from .calls import DEFAULT_MAX_RECEIVE, CallDetails
from .connection import Connection
from .frames import NO_ERROR


class Server:
    """Handlers and the connections serving them (see the module docstring)."""

    def __init__(
        self,
        *,
        max_receive_message_length: int = DEFAULT_MAX_RECEIVE,
        max_connection_idle: float | None = 300.0,
        min_ping_interval: float = 60.0,
    ) -> None:
        self.max_receive = max_receive_message_length
        self.max_connection_idle = max_connection_idle
        self.min_ping_interval = min_ping_interval
        self._methods: dict[str, grpc.RpcMethodHandler] = {}  # registered, and found before
        self._generic: list[grpc.GenericRpcHandler] = []
        self.connections: set[Connection] = set()
        self.stopping = False

    # -- grpc's registration API --------------------------------------------------------------

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self._generic.extend(handlers)

    def add_registered_method_handlers(
        self, service: str, method_handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        for name, handler in method_handlers.items():
            self._methods[f"/{service}/{name}"] = handler

    def lookup(self, path: str) -> grpc.RpcMethodHandler | None:
        found = self._methods.get(path)
        if found is not None:
            return found
        for generic in self._generic:
            found = generic.service(CallDetails(path, ()))
            if found is not None:
                self._methods[path] = found  # only paths served: a client picks the others
                return found
        return None

    # -- connections --------------------------------------------------------------------------

    def protocol(self) -> asyncio.Protocol:
        return Connection(self)

    async def stop(self, grace: float | None) -> None:
        self.stopping = True
        for connection in list(self.connections):
            connection.go_away(NO_ERROR)
        tasks = [t for c in self.connections for t in c.tasks()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for connection in list(self.connections):
            connection.close()
