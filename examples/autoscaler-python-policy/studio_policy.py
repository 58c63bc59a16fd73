"""An in-process FleetAutoscaler policy: a Python function instead of a webhook service.

It keeps a buffer that grows with the share of the Fleet in use: 5 Ready GameServers while less
than half is Allocated, 10 beyond that, never more than 100 GameServers. Run the controller with
`--autoscaler-policy-modules studio_policy` (this directory on PYTHONPATH) and apply
`fleetautoscaler.yaml`: its Webhook policy's `url: python:studio-buffer` names this function.
"""

from __future__ import annotations

from agones.apis.autoscaling.v1 import FleetAutoscaleResponse, FleetAutoscaleReview
from agones.controllers.fleetautoscalers import register_policy

MAX_REPLICAS = 100


@register_policy("studio-buffer")
def studio_buffer(review: FleetAutoscaleReview) -> FleetAutoscaleResponse:
    request = review.request
    status = request.status if request else None
    replicas = (status.replicas if status else 0) or 0
    allocated = (status.allocated_replicas if status else 0) or 0
    buffer = 10 if replicas and allocated * 2 >= replicas else 5
    return FleetAutoscaleResponse(
        uid=request.uid if request else "",
        scale=True,
        replicas=min(allocated + buffer, MAX_REPLICAS),
    )
