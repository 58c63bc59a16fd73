"""Client-side throttling: one QPS/burst token bucket per clientset, as Agones' binaries have.

Agones' controller, extensions and allocator build three clientsets from one `rest.Config`: the
Kubernetes clientset (the core group and every built-in group: pods, events, nodes, leases,
secrets, discovery), the apiextensions clientset (CRDs) and Agones' versioned clientset (every
`*.agones.dev` group). client-go's `NewForConfig` gives each clientset a token bucket of its own
when the config carries no rate limiter, so the Events and Pods a controller writes never take from
the budget of its GameServer writes, and the other way round.

Here one `RESTClient` (one HTTP session) stands for the three: `clientset_of(path)` names the
clientset a request belongs to by its API group, and `ClientsetRateLimiters` holds one bucket per
clientset, each at the config's QPS and burst. A QPS of 0 or less turns throttling off.
"""

from __future__ import annotations

from typing import Literal

from ..clock import Clock
from ..flowcontrol import TokenBucketRateLimiter

ClientsetName = Literal["kubernetes", "apiextensions", "agones"]

KUBERNETES: ClientsetName = "kubernetes"
APIEXTENSIONS: ClientsetName = "apiextensions"
AGONES: ClientsetName = "agones"
CLIENTSETS: tuple[ClientsetName, ...] = (KUBERNETES, APIEXTENSIONS, AGONES)

AGONES_GROUP = "agones.dev"
APIEXTENSIONS_GROUP = "apiextensions.k8s.io"


def clientset_of_group(group: str) -> ClientsetName:
    """The clientset that serves an API group (`""` is the core group)."""
    if group == AGONES_GROUP or group.endswith("." + AGONES_GROUP):
        return AGONES
    if group == APIEXTENSIONS_GROUP:
        return APIEXTENSIONS
    return KUBERNETES


def clientset_of(path: str) -> ClientsetName:
    """The clientset of a request path: `/apis/GROUP/...` by its group; `/api/...`, `/apis`,
    `/version` and every other path (discovery, the core group) belong to the Kubernetes one."""
    parts = path.split("/", 3)
    if len(parts) > 2 and parts[1] == "apis":
        return clientset_of_group(parts[2])
    return KUBERNETES


class ClientsetRateLimiters:
    """A token bucket per clientset, all at the same QPS and burst; none when `qps <= 0`."""

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        self.limiters: dict[ClientsetName, TokenBucketRateLimiter] = (
            {name: TokenBucketRateLimiter(qps, burst, clock) for name in CLIENTSETS}
            if qps > 0
            else {}
        )

    def for_path(self, path: str) -> TokenBucketRateLimiter | None:
        """The bucket a request to `path` draws from (None when throttling is off)."""
        if not self.limiters:
            return None
        return self.limiters[clientset_of(path)]

    async def wait(self, path: str) -> None:
        """Block until the bucket of the request's clientset gives a token."""
        limiter = self.for_path(path)
        if limiter is not None:
            await limiter.wait()
