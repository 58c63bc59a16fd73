"""Buffer policy table (Agones' TestApplyBufferPolicy cases, plus every clamp)."""

from __future__ import annotations

import pytest

from agones.apis.autoscaling.v1 import BufferPolicy
from agones.controllers.fleetautoscalers import PolicyError, Scale, buffer

from .fixtures import fleet

P = pytest.param


@pytest.mark.parametrize(
    ("replicas", "allocated", "policy", "want"),
    [
        P(50, 40, BufferPolicy(buffer_size=20, max_replicas=100), Scale(60), id="int-scale-up"),
        P(
            50,
            40,
            BufferPolicy(buffer_size=20, min_replicas=65, max_replicas=100),
            Scale(65, True),
            id="min-clamps",
        ),
        P(50, 40, BufferPolicy(buffer_size=20, max_replicas=55), Scale(55, True), id="max-clamps"),
        P(
            50,
            40,
            BufferPolicy(buffer_size=20, max_replicas=60),
            Scale(60),
            id="exactly-max-not-limited",
        ),
        P(
            9,
            0,
            BufferPolicy(buffer_size=9, min_replicas=9, max_replicas=30),
            Scale(9),
            id="talk-settles-at-9",
        ),
        P(
            9,
            9,
            BufferPolicy(buffer_size=9, min_replicas=9, max_replicas=30),
            Scale(18),
            id="talk-allocate-9",
        ),
        P(
            30,
            27,
            BufferPolicy(buffer_size=9, min_replicas=9, max_replicas=30),
            Scale(30, True),
            id="talk-capped-30",
        ),
        P(
            18,
            0,
            BufferPolicy(buffer_size=9, min_replicas=9, max_replicas=30),
            Scale(9),
            id="talk-released",
        ),
        P(
            50,
            50,
            BufferPolicy(buffer_size="20%", max_replicas=100),
            Scale(63),
            id="percent-rounds-up",
        ),
        P(
            1,
            1,
            BufferPolicy(buffer_size="10%", max_replicas=10),
            Scale(2),
            id="percent-one-allocated",
        ),
        P(10, 8, BufferPolicy(buffer_size="20%", max_replicas=100), Scale(10), id="percent-exact"),
        P(
            10,
            9,
            BufferPolicy(buffer_size="20%", max_replicas=100),
            Scale(12),
            id="percent-11.25-to-12",
        ),
        P(
            0,
            0,
            BufferPolicy(buffer_size="50%", min_replicas=1, max_replicas=10),
            Scale(1, True),
            id="percent-none-allocated-min",
        ),
        P(10, 10, BufferPolicy(buffer_size="99%", max_replicas=5000), Scale(1000), id="percent-99"),
        P(
            10,
            10,
            BufferPolicy(buffer_size="99%", max_replicas=500),
            Scale(500, True),
            id="percent-99-max",
        ),
    ],
)
def test_buffer_policy(replicas: int, allocated: int, policy: BufferPolicy, want: Scale) -> None:
    assert buffer.compute_desired_fleet_size(policy, fleet(replicas, allocated)) == want


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        P(
            BufferPolicy(buffer_size="asd", max_replicas=10),
            'invalid value for IntOrString: invalid value "asd": strconv.Atoi: parsing "asd": '
            "invalid syntax",
            id="bad-percent",
        ),
        P(
            BufferPolicy(buffer_size="100%", max_replicas=10),
            "leaves no room",
            id="hundred-percent",
        ),
        P(None, "bufferPolicy parameter must not be nil", id="nil"),
    ],
)
def test_buffer_policy_errors(policy: BufferPolicy | None, message: str) -> None:
    with pytest.raises(PolicyError, match=message.replace("(", r"\(")):
        buffer.compute_desired_fleet_size(policy, fleet(1, 1))
