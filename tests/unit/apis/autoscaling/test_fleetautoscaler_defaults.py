from typing import Any

import msgspec
import pytest

from tests.unit.apis.autoscaling.helpers import buffer_spec, defaulted, fas

SYNC_30 = {"type": "FixedInterval", "fixedInterval": {"seconds": 30}}


def spec_after_defaults(spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(defaulted(fas(spec)).spec)
    return out


def with_sync(spec: dict[str, Any], sync: Any) -> dict[str, Any]:
    return {**spec, "sync": sync}


SCHEDULE = {
    "between": {"start": "2024-07-04T16:04:04-07:00", "end": "2100-09-21T16:04:04.5-07:00"},
    "activePeriod": {"timezone": "America/Los_Angeles", "startCron": "0 1 * * 0", "duration": "5h"},
    "policy": {"type": "Buffer", "buffer": {"bufferSize": 5, "minReplicas": 10, "maxReplicas": 20}},
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(buffer_spec(), with_sync(buffer_spec(), SYNC_30), id="sync-added"),
        pytest.param(
            with_sync(buffer_spec(), {"type": "FixedInterval", "fixedInterval": {"seconds": 0}}),
            with_sync(buffer_spec(), SYNC_30),
            id="sync-seconds-0-replaced",
        ),
        pytest.param(
            with_sync(buffer_spec(), {"type": "FixedInterval"}),
            with_sync(buffer_spec(), SYNC_30),
            id="sync-fixed-interval-added",
        ),
        pytest.param(
            with_sync(buffer_spec(), {"fixedInterval": {"seconds": 15}}),
            with_sync(buffer_spec(), {"type": "FixedInterval", "fixedInterval": {"seconds": 15}}),
            id="sync-type-added-seconds-kept",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {"type": "Buffer", "buffer": {"maxReplicas": 3, "bufferSize": 1}},
            },
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "Buffer",
                        "buffer": {"maxReplicas": 3, "minReplicas": 0, "bufferSize": 1},
                    },
                },
                SYNC_30,
            ),
            id="go-writes-min-replicas-0",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {"type": "Counter", "counter": {"bufferSize": 1, "maxCapacity": 9}},
            },
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "Counter",
                        "counter": {"key": "", "bufferSize": 1, "minCapacity": 0, "maxCapacity": 9},
                    },
                },
                SYNC_30,
            ),
            id="counter-key-empty-string",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {
                    "type": "List",
                    "list": {"key": "p", "bufferSize": "10%", "minCapacity": 1, "maxCapacity": 9},
                },
            },
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "List",
                        "list": {
                            "key": "p",
                            "bufferSize": "10%",
                            "minCapacity": 1,
                            "maxCapacity": 9,
                        },
                    },
                },
                SYNC_30,
            ),
            id="list-unchanged",
        ),
        pytest.param(
            {"fleetName": "f", "policy": {"type": "Schedule", "schedule": SCHEDULE}},
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "Schedule",
                        "schedule": {
                            **SCHEDULE,
                            "between": {
                                "start": "2024-07-04T23:04:04Z",
                                "end": "2100-09-21T23:04:04Z",
                            },
                        },
                    },
                },
                SYNC_30,
            ),
            id="between-reserialised-in-utc",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {"type": "Schedule", "schedule": {"policy": SCHEDULE["policy"]}},
            },
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "Schedule",
                        "schedule": {
                            "between": {},
                            "activePeriod": {"timezone": "", "startCron": "", "duration": ""},
                            "policy": SCHEDULE["policy"],
                        },
                    },
                },
                SYNC_30,
            ),
            id="schedule-go-zero-values",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {"type": "Wasm", "wasm": {"from": {"url": {"url": "http://x/m.wasm"}}}},
            },
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "Wasm",
                        "wasm": {"function": "scale", "from": {"url": {"url": "http://x/m.wasm"}}},
                    },
                },
                SYNC_30,
            ),
            id="wasm-function-scale",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {
                    "type": "Wasm",
                    "wasm": {"function": "", "config": {}, "from": {"url": {"url": "u"}}},
                },
            },
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "Wasm",
                        "wasm": {"function": "scale", "from": {"url": {"url": "u"}}},
                    },
                },
                SYNC_30,
            ),
            id="wasm-empty-function-and-config-dropped-then-defaulted",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {
                    "type": "Webhook",
                    "webhook": {"service": {"name": "s", "namespace": "d"}},
                },
            },
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "Webhook",
                        "webhook": {"service": {"name": "s", "namespace": "d"}},
                    },
                },
                SYNC_30,
            ),
            id="webhook-port-not-defaulted",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {
                    "type": "Chain",
                    "chain": [
                        {"id": "a", "type": "Schedule", "schedule": SCHEDULE},
                        {"type": "Buffer", "buffer": {"maxReplicas": 2, "bufferSize": 1}},
                    ],
                },
            },
            with_sync(
                {
                    "fleetName": "f",
                    "policy": {
                        "type": "Chain",
                        "chain": [
                            {
                                "id": "a",
                                "type": "Schedule",
                                "schedule": {
                                    **SCHEDULE,
                                    "between": {
                                        "start": "2024-07-04T23:04:04Z",
                                        "end": "2100-09-21T23:04:04Z",
                                    },
                                },
                            },
                            {
                                "id": "",
                                "type": "Buffer",
                                "buffer": {"maxReplicas": 2, "minReplicas": 0, "bufferSize": 1},
                            },
                        ],
                    },
                },
                SYNC_30,
            ),
            id="chain-entries-defaulted",
        ),
        pytest.param(
            {
                "fleetName": "f",
                "policy": {
                    "type": "Schedule",
                    "schedule": {"between": {"end": ""}, "policy": SCHEDULE["policy"]},
                },
            },
            {
                "fleetName": "f",
                "policy": {
                    "type": "Schedule",
                    "schedule": {"between": {"end": ""}, "policy": SCHEDULE["policy"]},
                },
            },
            id="undecodable-time-left-untouched",
        ),
    ],
)
def test_apply_defaults(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    assert spec_after_defaults(spec) == expected


def test_status_left_alone() -> None:
    obj = defaulted({**fas(buffer_spec()), "status": {"currentReplicas": 3}})
    assert msgspec.to_builtins(obj.status) == {"currentReplicas": 3}
