"""A gRPC server on the event loop: HTTP/2 (RFC 9113) and HPACK written for unary and
server-streaming calls, serving the handlers grpc's own registration API builds (see `server`)."""

from .calls import AbortError, ServicerContext
from .server import Server

__all__ = ["AbortError", "Server", "ServicerContext"]
