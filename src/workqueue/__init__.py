"""Work queues (client-go `util/workqueue`) and Agones' worker-pool wrapper (`util/workerqueue`)."""

from .default_rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    ItemIntervalRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from .delaying_queue import DelayingQueue
from .queue import Queue
from .rate_limiting_queue import RateLimitingQueue
from .workerqueue import Requeue, WorkerQueue, fast_rate_limiter

__all__ = [
    "BucketRateLimiter",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "ItemIntervalRateLimiter",
    "MaxOfRateLimiter",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "Requeue",
    "WorkerQueue",
    "default_controller_rate_limiter",
    "fast_rate_limiter",
]
