"""Test harness: a LocalSDKServer served on ephemeral ports, and free-port helpers."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

from google.protobuf import wrappers_pb2

from agones.featuregates import FeatureGates
from agones.sdk.proto.beta import beta_pb2
from agones.sdkserver.localsdk import LocalSDKServer
from agones.sdkserver.serve import SDKServing, serve_sdk

DEFAULT_CONFORMANCE = (
    "ready,allocate,setlabel,setannotation,gameserver,health,shutdown,watch,reserve"
)
ALPHA_CONFORMANCE = (
    "getplayercapacity,setplayercapacity,playerconnect,playerdisconnect,getplayercount,"
    "isplayerconnected,getconnectedplayers"
)
COUNTS_AND_LISTS = (
    "getcounter,updatecounter,setcountcounter,setcapacitycounter,getlist,updatelist,"
    "addlistvalue,removelistvalue"
)


@dataclass
class Running:
    backend: LocalSDKServer
    serving: SDKServing

    @property
    def grpc_port(self) -> int:
        return self.serving.grpc_port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.serving.http_port}"


@contextlib.asynccontextmanager
async def running_local(
    gates: FeatureGates | None = None, *, expected: str | None = None
) -> AsyncIterator[Running]:
    """A local (or, with `expected`, test-mode) SDK server on 127.0.0.1, ephemeral ports."""
    backend = LocalSDKServer(
        gates or FeatureGates(),
        test_mode=expected is not None,
        expected=expected.split(",") if expected else None,
    )
    if expected is not None:
        backend.generate_uid()
    serving = await serve_sdk(backend, address="127.0.0.1", grpc_port=0, http_port=0)
    try:
        yield Running(backend, serving)
    finally:
        await serving.stop(0)
        backend.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def counter_update(
    name: str = "rooms", count: int | None = None, capacity: int | None = None, diff: int = 0
) -> beta_pb2.UpdateCounterRequest:
    """A beta UpdateCounter request: set count and/or capacity, and/or move by `diff`."""
    update = beta_pb2.CounterUpdateRequest(name=name, countDiff=diff)
    if count is not None:
        update.count.CopyFrom(wrappers_pb2.Int64Value(value=count))
    if capacity is not None:
        update.capacity.CopyFrom(wrappers_pb2.Int64Value(value=capacity))
    return beta_pb2.UpdateCounterRequest(counterUpdateRequest=update)
