"""The SDK's error: an RPC to the sidecar failed (or an argument was refused before sending)."""

from __future__ import annotations

import grpc


class SDKError(Exception):
    """`str()` reads like the Go SDK's wrapped errors: `<what>: rpc error: code = X desc = Y`.

    `code` is the gRPC status code (None when the SDK refused the call itself), `details` the
    server's message.
    """

    def __init__(self, what: str, code: grpc.StatusCode | None = None, details: str = "") -> None:
        self.what = what
        self.code = code
        self.details = details
        if code is None:
            super().__init__(what)
        else:
            name = "".join(p.capitalize() for p in code.name.split("_"))
            super().__init__(f"{what}: rpc error: code = {name} desc = {details}")

    @classmethod
    def from_rpc(cls, what: str, err: grpc.aio.AioRpcError) -> SDKError:
        return cls(what, err.code(), err.details() or "")
