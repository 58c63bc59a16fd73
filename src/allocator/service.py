"""The allocation service's handler (Agones `serviceHandler.Allocate` of `cmd/allocator`), exposed as
`allocation.AllocationService/Allocate` over gRPC and as `POST /gameserverallocation` (REST, as
grpc-gateway serves it for Agones).

`AllocationService.allocate(request)` converts the request into a GameServerAllocation, hands it to
the allocate callable (`Allocator.allocate`, which defaults, validates and allocates) and converts
the result: Allocated → `AllocationResponse`; UnAllocated → the gRPC code mapped from
`--http-unallocated-status-code` (429 → RESOURCE_EXHAUSTED); Contention → ABORTED; invalid input
(`GameServerAllocationInvalid`, or anything the allocator rejects with `ValueError`) →
INVALID_ARGUMENT with the field errors; a multi-cluster request without a usable policy →
FAILED_PRECONDITION. Any other error (the API server's, after the allocator's retries) comes out as
UNKNOWN with its text, as Agones returns the allocator's error unwrapped and grpc-go codes it
(grpc-gateway: 500).

gRPC reads the request bytes itself, so undecodable bytes are INVALID_ARGUMENT (not the INTERNAL
of a failed deserializer). REST reads the JSON body with protojson (camelCase or proto names,
unknown keys ignored, int64 as string or number); answers are protojson with every field, int64 as
strings; errors are grpc-gateway's `{"code", "message", "details"}` with its HTTP status for the
code (RESOURCE_EXHAUSTED 429, ABORTED 409, INVALID_ARGUMENT 400).

`in_flight` counts requests being served, for the drain on shutdown.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from aiohttp import web
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from ..apis.allocation.v1 import GameServerAllocation
from ..client.errors import ApiError
from ..controllers.gameserverallocations.allocator import GameServerAllocationInvalid
from ..controllers.gameserverallocations.multicluster import MultiClusterError
from ..featuregates import FeatureGates
from ..grpcserver import ServicerContext
from ..sdkserver.gateway import HTTP_STATUS, error_body
from ..sdkserver.protojson import unmarshal
from .converters import (
    AllocationStatusError,
    convert_allocation_request_to_gsa,
    convert_gsa_to_allocation_response,
)
from .proto import allocation_pb2 as pb

SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["AllocationService"].full_name
ALLOCATE_PATH = "/gameserverallocation"

AllocateFunc = Callable[[GameServerAllocation], Awaitable[GameServerAllocation]]

# Agones' grpcCodeFromHTTPStatus; any other status means RESOURCE_EXHAUSTED.
GRPC_CODE_FROM_HTTP: dict[int, grpc.StatusCode] = {
    200: grpc.StatusCode.OK,
    499: grpc.StatusCode.CANCELLED,
    500: grpc.StatusCode.INTERNAL,
    400: grpc.StatusCode.INVALID_ARGUMENT,
    504: grpc.StatusCode.DEADLINE_EXCEEDED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.ALREADY_EXISTS,
    403: grpc.StatusCode.PERMISSION_DENIED,
    401: grpc.StatusCode.UNAUTHENTICATED,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    501: grpc.StatusCode.UNIMPLEMENTED,
    503: grpc.StatusCode.UNAVAILABLE,
}


def grpc_code_from_http_status(status: int) -> grpc.StatusCode:
    return GRPC_CODE_FROM_HTTP.get(status, grpc.StatusCode.RESOURCE_EXHAUSTED)


def _invalid_message(err: Exception) -> str:
    errors = getattr(err, "errors", None)
    if isinstance(errors, list) and errors:
        return "; ".join(str(e) for e in errors)
    return str(err) or type(err).__name__


def _marshal(message: pb.AllocationResponse) -> dict[str, Any]:
    """protojson as grpc-gateway's default marshaler writes it (JSON names, every field)."""
    data: dict[str, Any] = json_format.MessageToDict(
        message, always_print_fields_with_no_presence=True
    )
    return data


class AllocationService:
    def __init__(
        self,
        allocate: AllocateFunc,
        gates: FeatureGates,
        unallocated_status_code: int = 429,
        logger: Any = None,
    ) -> None:
        self._allocate = allocate
        self.gates = gates
        self.unallocated_code = grpc_code_from_http_status(unallocated_status_code)
        self.log = logger
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def wait_idle(self) -> None:
        """Return once no request is being served."""
        await self._idle.wait()

    async def allocate(self, request: pb.AllocationRequest) -> pb.AllocationResponse:
        """Allocate for one request; `AllocationStatusError` for every answer but a server."""
        self.in_flight += 1
        self._idle.clear()
        try:
            gsa = convert_allocation_request_to_gsa(request, self.gates)
            try:
                result = await self._allocate(gsa)
            except AllocationStatusError:
                raise
            except (GameServerAllocationInvalid, ValueError, TypeError) as err:
                raise AllocationStatusError(
                    grpc.StatusCode.INVALID_ARGUMENT, _invalid_message(err)
                ) from err
            except MultiClusterError as err:
                raise AllocationStatusError(grpc.StatusCode.FAILED_PRECONDITION, str(err)) from err
            except Exception as err:
                if self.log is not None:
                    self.log.error("allocation failed", error=str(err))
                # Go's error text: a Status error's message, without our code and reason
                message = err.message if isinstance(err, ApiError) and err.message else str(err)
                raise AllocationStatusError(grpc.StatusCode.UNKNOWN, message) from err
            return convert_gsa_to_allocation_response(result, self.unallocated_code, self.gates)
        finally:
            self.in_flight -= 1
            if self.in_flight == 0:
                self._idle.set()

    # -- gRPC ---------------------------------------------------------------------------------

    async def _grpc_allocate(self, raw: bytes, context: ServicerContext) -> bytes:
        request = pb.AllocationRequest()
        try:
            request.ParseFromString(raw)
        except (DecodeError, ValueError, RuntimeError) as err:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad request: {err}")
        try:
            response = await self.allocate(request)
        except AllocationStatusError as err:
            await context.abort(err.code, err.message)
        data: bytes = response.SerializeToString()
        return data

    def grpc_handler(self) -> grpc.GenericRpcHandler:
        """The service for `server.add_generic_rpc_handlers` (request bytes read here)."""
        return grpc.method_handlers_generic_handler(
            SERVICE_NAME,
            {
                "Allocate": grpc.unary_unary_rpc_method_handler(
                    self._grpc_allocate, request_deserializer=None, response_serializer=None
                )
            },
        )

    # -- REST ---------------------------------------------------------------------------------

    async def _rest_allocate(self, request: web.Request) -> web.Response:
        message = pb.AllocationRequest()
        try:
            raw = await request.read()
            data = json.loads(raw) if raw.strip() else {}
            unmarshal(data, message)
        except (json_format.ParseError, ValueError, UnicodeDecodeError, TypeError) as err:
            return _error(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        try:
            response = await self.allocate(message)
        except AllocationStatusError as err:
            return _error(err.code, err.message)
        return web.json_response(_marshal(response))

    async def _rest_not_allowed(self, request: web.Request) -> web.Response:
        del request
        return web.json_response(
            {"code": grpc.StatusCode.UNIMPLEMENTED.value[0], "message": "Method Not Allowed"},
            status=405,
        )

    async def _rest_not_found(self, request: web.Request) -> web.Response:
        del request
        return _error(grpc.StatusCode.NOT_FOUND, "Not Found")

    def rest_app(self) -> web.Application:
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app.router.add_post(ALLOCATE_PATH, self._rest_allocate)
        app.router.add_route("*", ALLOCATE_PATH, self._rest_not_allowed)
        app.router.add_route("*", "/{tail:.*}", self._rest_not_found)
        return app


def _error(code: grpc.StatusCode, message: str) -> web.Response:
    return web.json_response(error_body(code, message), status=HTTP_STATUS.get(code, 500))
