"""SDK errors as values carrying a gRPC status code.

Backends raise `SDKError`; the gRPC layer aborts the call with its code and message, the REST
gateway maps the code to an HTTP status the way grpc-gateway does. Agones' local and test modes
return plain Go errors, which reach clients as UNKNOWN; `plain_error` builds those.
"""

from __future__ import annotations

import grpc


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
