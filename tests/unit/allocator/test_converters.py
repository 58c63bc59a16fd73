"""Conversions between the allocation proto and GameServerAllocation, by tables."""

from __future__ import annotations

import grpc
import msgspec
import pytest
from google.protobuf import json_format

from agones.allocator.converters import (
    AllocationStatusError,
    convert_allocation_request_to_gsa,
    convert_allocation_response_to_gsa,
    convert_gsa_to_allocation_request,
    convert_gsa_to_allocation_response,
)
from agones.allocator.proto import allocation_pb2 as pb
from agones.allocator.service import grpc_code_from_http_status
from agones.apis.allocation.v1 import GameServerAllocation
from agones.featuregates import Feature, FeatureGates

GATES = FeatureGates()
PLAYERS = FeatureGates({Feature.PLAYER_ALLOCATION_FILTER: True})
NO_COUNTS = FeatureGates({Feature.COUNTS_AND_LISTS: False})


def _request(data: dict) -> pb.AllocationRequest:
    return json_format.ParseDict(data, pb.AllocationRequest())


def _gsa(data: dict) -> GameServerAllocation:
    return msgspec.convert(data, GameServerAllocation)


def _spec(gsa: GameServerAllocation) -> dict:
    return msgspec.to_builtins(gsa)["spec"]


@pytest.mark.parametrize(
    ("request_json", "gates", "spec"),
    [
        pytest.param({}, GATES, {"scheduling": "Packed"}, id="empty"),
        pytest.param(
            {"scheduling": "Distributed"}, GATES, {"scheduling": "Distributed"}, id="distributed"
        ),
        pytest.param(
            {
                "gameServerSelectors": [
                    {"matchLabels": {"a": "b"}},
                    {"gameServerState": "ALLOCATED"},
                ]
            },
            GATES,
            {
                "selectors": [
                    {"matchLabels": {"a": "b"}, "gameServerState": "Ready"},
                    {"gameServerState": "Allocated"},
                ],
                "scheduling": "Packed",
            },
            id="selectors-name-their-state",
        ),
        pytest.param(
            {
                "requiredGameServerSelector": {"matchLabels": {"r": "1"}},
                "preferredGameServerSelectors": [{"matchLabels": {"p": "1"}}],
            },
            GATES,
            {
                "required": {"matchLabels": {"r": "1"}, "gameServerState": "Ready"},
                "preferred": [{"matchLabels": {"p": "1"}, "gameServerState": "Ready"}],
                "scheduling": "Packed",
            },
            id="deprecated-required-preferred",
        ),
        pytest.param(
            {"metadata": {"labels": {"m": "1"}}, "metaPatch": {"labels": {"old": "1"}}},
            GATES,
            {"scheduling": "Packed", "metadata": {"labels": {"m": "1"}}},
            id="metadata-wins-over-metapatch",
        ),
        pytest.param(
            {"metaPatch": {"annotations": {"old": "1"}}},
            GATES,
            {"scheduling": "Packed", "metadata": {"annotations": {"old": "1"}}},
            id="metapatch-when-no-metadata",
        ),
        pytest.param(
            {
                "multiClusterSetting": {
                    "enabled": True,
                    "policySelector": {"matchLabels": {"c": "x"}},
                }
            },
            GATES,
            {
                "multiClusterSetting": {
                    "enabled": True,
                    "policySelector": {"matchLabels": {"c": "x"}},
                },
                "scheduling": "Packed",
            },
            id="multi-cluster",
        ),
        pytest.param(
            {"gameServerSelectors": [{"players": {"minAvailable": "1", "maxAvailable": "5"}}]},
            GATES,
            {"selectors": [{"gameServerState": "Ready"}], "scheduling": "Packed"},
            id="players-dropped-without-gate",
        ),
        pytest.param(
            {"gameServerSelectors": [{"players": {"minAvailable": "1", "maxAvailable": "5"}}]},
            PLAYERS,
            {
                "selectors": [
                    {"gameServerState": "Ready", "players": {"minAvailable": 1, "maxAvailable": 5}}
                ],
                "scheduling": "Packed",
            },
            id="players-with-gate",
        ),
        pytest.param(
            {
                "priorities": [{"type": "List", "key": "players", "order": "Descending"}],
                "counters": {"rooms": {"action": "Increment", "amount": "1", "capacity": "10"}},
                "lists": {"players": {"addValues": ["x"], "capacity": "40"}},
                "gameServerSelectors": [
                    {
                        "counters": {"rooms": {"minAvailable": "1"}},
                        "lists": {"players": {"containsValue": "x", "maxAvailable": "3"}},
                    }
                ],
            },
            GATES,
            {
                "selectors": [
                    {
                        "gameServerState": "Ready",
                        "counters": {
                            "rooms": {
                                "minCount": 0,
                                "maxCount": 0,
                                "minAvailable": 1,
                                "maxAvailable": 0,
                            }
                        },
                        "lists": {
                            "players": {"containsValue": "x", "minAvailable": 0, "maxAvailable": 3}
                        },
                    }
                ],
                "priorities": [{"type": "List", "key": "players", "order": "Descending"}],
                "scheduling": "Packed",
                "counters": {"rooms": {"action": "Increment", "amount": 1, "capacity": 10}},
                "lists": {"players": {"addValues": ["x"], "capacity": 40}},
            },
            id="counts-and-lists",
        ),
        pytest.param(
            {"priorities": [{"key": "rooms"}], "counters": {"rooms": {"amount": "1"}}},
            NO_COUNTS,
            {"scheduling": "Packed"},
            id="counts-and-lists-dropped-without-gate",
        ),
    ],
)
def test_request_to_gsa(request_json: dict, gates: FeatureGates, spec: dict) -> None:
    gsa = convert_allocation_request_to_gsa(_request({"namespace": "ns", **request_json}), gates)
    assert gsa.metadata.namespace == "ns"
    assert _spec(gsa) == spec


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(
            {},
            {
                "namespace": "ns",
                "multiClusterSetting": {},
                "metadata": {},
                "metaPatch": {},
            },
            id="empty",
        ),
        pytest.param(
            {
                "selectors": [{"matchLabels": {"p": "1"}}, {"gameServerState": "Allocated"}],
                "scheduling": "Distributed",
                "metadata": {"labels": {"m": "1"}},
                "multiClusterSetting": {
                    "enabled": True,
                    "policySelector": {"matchLabels": {"c": "x"}},
                },
            },
            {
                "namespace": "ns",
                "multiClusterSetting": {
                    "enabled": True,
                    "policySelector": {"matchLabels": {"c": "x"}},
                },
                "requiredGameServerSelector": {"gameServerState": "ALLOCATED"},
                "preferredGameServerSelectors": [{"matchLabels": {"p": "1"}}],
                "scheduling": "Distributed",
                "metaPatch": {"labels": {"m": "1"}},
                "metadata": {"labels": {"m": "1"}},
                "gameServerSelectors": [
                    {"matchLabels": {"p": "1"}},
                    {"gameServerState": "ALLOCATED"},
                ],
            },
            id="selectors-also-as-required-and-preferred",
        ),
        pytest.param(
            {
                "priorities": [{"type": "Counter", "key": "rooms", "order": "Ascending"}],
                "counters": {"rooms": {"action": "Decrement", "amount": 2}},
                "lists": {"players": {"deleteValues": ["a"]}},
            },
            {
                "namespace": "ns",
                "multiClusterSetting": {},
                "metadata": {},
                "metaPatch": {},
                "priorities": [{"key": "rooms"}],
                "counters": {"rooms": {"action": "Decrement", "amount": "2"}},
                "lists": {"players": {"deleteValues": ["a"]}},
            },
            id="counts-and-lists",
        ),
    ],
)
def test_gsa_to_request(spec: dict, want: dict) -> None:
    gsa = _gsa({"metadata": {"namespace": "ns"}, "spec": spec})
    assert json_format.MessageToDict(convert_gsa_to_allocation_request(gsa, GATES)) == want


def test_request_round_trips_through_gsa() -> None:
    request = _request(
        {
            "namespace": "ns",
            "gameServerSelectors": [{"matchLabels": {"a": "b"}}, {"matchLabels": {"c": "d"}}],
            "scheduling": "Distributed",
            "metadata": {"labels": {"x": "y"}, "annotations": {"z": "w"}},
            "counters": {"rooms": {"action": "Increment", "amount": "1"}},
        }
    )
    gsa = convert_allocation_request_to_gsa(request, GATES)
    again = convert_gsa_to_allocation_request(gsa, GATES)
    assert list(again.gameServerSelectors) == list(request.gameServerSelectors)
    assert again.scheduling == request.scheduling
    assert again.metadata == request.metadata
    assert again.counters == request.counters


ALLOCATED = {
    "metadata": {"name": "gs-1", "namespace": "ns"},
    "status": {
        "state": "Allocated",
        "gameServerName": "gs-1",
        "ports": [{"name": "default", "port": 7001}],
        "address": "10.0.0.1",
        "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
        "nodeName": "node-a",
        "source": "local",
        "metadata": {"labels": {"l": "1"}, "annotations": {"a": "1"}},
        "counters": {"rooms": {"count": 1, "capacity": 5}},
        "lists": {"players": {"capacity": 40, "values": ["x7un"]}},
    },
}


def test_allocated_gsa_to_response() -> None:
    response = convert_gsa_to_allocation_response(
        _gsa(ALLOCATED), grpc.StatusCode.RESOURCE_EXHAUSTED, GATES
    )
    assert json_format.MessageToDict(response) == {
        "gameServerName": "gs-1",
        "ports": [{"name": "default", "port": 7001}],
        "address": "10.0.0.1",
        "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
        "nodeName": "node-a",
        "source": "local",
        "metadata": {"labels": {"l": "1"}, "annotations": {"a": "1"}},
        "counters": {"rooms": {"count": "1", "capacity": "5"}},
        "lists": {"players": {"values": ["x7un"], "capacity": "40"}},
    }


def test_response_to_gsa_is_allocated_from_the_endpoint() -> None:
    response = convert_gsa_to_allocation_response(
        _gsa(ALLOCATED), grpc.StatusCode.RESOURCE_EXHAUSTED, GATES
    )
    gsa = convert_allocation_response_to_gsa(response, "10.1.1.1:443", GATES)
    want = dict(ALLOCATED["status"], source="10.1.1.1:443")
    assert msgspec.to_builtins(gsa.status) == want
    assert gsa.metadata.name == "gs-1"


@pytest.mark.parametrize(
    ("state", "unallocated", "code", "message"),
    [
        (
            "UnAllocated",
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "there is no available GameServer to allocate",
        ),
        (
            "UnAllocated",
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.UNAVAILABLE,
            "there is no available GameServer to allocate",
        ),
        (
            "Contention",
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            grpc.StatusCode.ABORTED,
            "too many concurrent requests have overwhelmed the system",
        ),
        ("Surprise", grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNKNOWN, "unknown issue"),
    ],
    ids=["unallocated", "unallocated-configured", "contention", "unknown"],
)
def test_unallocated_states_are_errors(state, unallocated, code, message) -> None:
    gsa = _gsa({"status": {"state": state}})
    with pytest.raises(AllocationStatusError) as err:
        convert_gsa_to_allocation_response(gsa, unallocated, GATES)
    assert (err.value.code, err.value.message) == (code, message)


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, grpc.StatusCode.RESOURCE_EXHAUSTED),
        (503, grpc.StatusCode.UNAVAILABLE),
        (404, grpc.StatusCode.NOT_FOUND),
        (500, grpc.StatusCode.INTERNAL),
        (200, grpc.StatusCode.OK),
        (418, grpc.StatusCode.RESOURCE_EXHAUSTED),
    ],
    ids=["429", "503", "404", "500", "200", "unknown-defaults-to-429"],
)
def test_grpc_code_from_http_status(status: int, code: grpc.StatusCode) -> None:
    assert grpc_code_from_http_status(status) == code
