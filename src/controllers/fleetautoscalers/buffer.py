"""The Buffer policy (Go `applyBufferPolicy`): keep `bufferSize` GameServers beyond the Allocated.

* an int buffer wants `allocatedReplicas + bufferSize`;
* a percentage wants the size at which the buffer is that share of the Fleet:
  `ceil(allocatedReplicas * 100 / (100 - pct))` (8 Allocated at 20% → 10);
* the result is clamped to `[minReplicas, maxReplicas]`, and `limited` says it was.
Pure: the Fleet's status is all it reads.
"""

from __future__ import annotations

import math

from ...apis.agones.v1.fleet import Fleet
from ...apis.autoscaling.v1 import BufferPolicy
from ...apis.meta.intstr import IntOrString, Type, get_value_from_int_or_percent
from .policy import PolicyError, Scale
from .status import fleet_status


def compute_desired_fleet_size(buffer: BufferPolicy | None, fleet: Fleet) -> Scale:
    if not isinstance(buffer, BufferPolicy):
        raise PolicyError("bufferPolicy parameter must not be nil")
    status = fleet_status(fleet)
    allocated = status.allocated
    raw = buffer.buffer_size if isinstance(buffer.buffer_size, int | str) else 0
    size = IntOrString.parse(raw)
    if size.type is Type.INT:
        replicas = allocated + size.int_val
    else:
        try:
            percent = get_value_from_int_or_percent(size, 100, True)
        except ValueError as err:
            raise PolicyError(str(err)) from None
        if percent >= 100:
            raise PolicyError(f"bufferSize {size.str_val} leaves no room for Allocated replicas")
        replicas = math.ceil(allocated * 100 / (100 - percent))
    min_replicas = buffer.min_replicas if isinstance(buffer.min_replicas, int) else 0
    max_replicas = buffer.max_replicas if isinstance(buffer.max_replicas, int) else 0
    limited = False
    if replicas < min_replicas:
        replicas, limited = min_replicas, True
    if replicas > max_replicas:
        replicas, limited = max_replicas, True
    return Scale(replicas, limited)
