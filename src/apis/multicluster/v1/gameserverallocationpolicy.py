"""GameServerAllocationPolicy (`multicluster.agones.dev/v1`) and the order clusters are tried in
(Go `pkg/apis/multicluster/v1/gameserverallocationpolicy.go`).

A policy names a cluster (`connectionInfo`) with a `priority` (lower is tried first) and a
`weight`. Validation is the CRD schema's (Agones has no webhook for this kind): `priority` and
`weight` required and ≥ 0, `connectionInfo.namespace` required, `allocationEndpoints` non-empty when
given, `serverCa` base64.

`ConnectionInfoIterator(policies, intn)` yields each cluster at most once: priorities ascending;
within a priority, a weighted random pick among the clusters not yet returned, each weighted by
the integer mean of its policies' weights. A priority whose remaining weights sum to 0 yields
nothing more (as in Agones). `intn(n)` returns a number in `[0, n)`; inject it for tests.
"""

from __future__ import annotations

import base64
import binascii
import random
from collections.abc import Callable, Iterable, Iterator
from typing import Annotated, Any

from msgspec import UNSET, Struct, UnsetType

from ....featuregates import FeatureGates
from ...field import FieldError, Path, go_quote, invalid
from ...meta import schema
from ...meta.objectmeta import ObjectMeta, validate_create_metadata
from ...meta.schema import crd

GROUP = "multicluster.agones.dev"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "GameServerAllocationPolicy"


class ClusterConnectionInfo(Struct, rename="camel", omit_defaults=True):
    """How to reach a cluster's allocator; no endpoints means allocate in this cluster."""

    cluster_name: Annotated[str, crd(go="always")] | UnsetType = UNSET
    allocation_endpoints: Annotated[list[str], crd(min_items=1)] | UnsetType | None = UNSET
    # Secret holding the client certificate (tls.crt, tls.key) and optionally ca.crt.
    secret_name: Annotated[str, crd(go="always")] | UnsetType = UNSET
    namespace: Annotated[str, crd(required=True, go="always")] | UnsetType = UNSET
    # PEM server CA, base64 on the wire (Go []byte).
    server_ca: Annotated[str, crd(format="byte")] | UnsetType = UNSET


class GameServerAllocationPolicySpec(Struct, rename="camel", omit_defaults=True):
    priority: (
        Annotated[
            int, crd(required=True, minimum=0, maximum=2**31 - 1, format="int32", go="always")
        ]
        | UnsetType
    ) = UNSET
    weight: (
        Annotated[int, crd(required=True, minimum=0, format="int64", go="always")] | UnsetType
    ) = UNSET
    connection_info: Annotated[ClusterConnectionInfo, crd(go="value")] | UnsetType = UNSET


class GameServerAllocationPolicy(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: ObjectMeta | UnsetType = UNSET
    spec: Annotated[GameServerAllocationPolicySpec, crd(go="value")] | UnsetType = UNSET


class GameServerAllocationPolicyList(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    items: list[GameServerAllocationPolicy] | UnsetType = UNSET


def validate(policy: GameServerAllocationPolicy, gates: FeatureGates) -> list[FieldError]:
    """The apiserver's metadata and CRD schema checks, with its texts; every error at once."""
    del gates
    errs = validate_create_metadata(policy.metadata)
    if not isinstance(policy.spec, GameServerAllocationPolicySpec):
        return errs
    path = Path("spec")
    errs += schema.validate_schema(policy.spec, path)
    info = policy.spec.connection_info
    if isinstance(info, ClusterConnectionInfo) and isinstance(info.server_ca, str):
        try:
            base64.b64decode(info.server_ca, validate=True)
        except (binascii.Error, ValueError):
            p = path.child("connectionInfo", "serverCa")
            errs.append(
                invalid(
                    p,
                    info.server_ca,
                    f"{p} in body must be of type byte: {go_quote(info.server_ca)}",
                )
            )
    return errs


def _spec(policy: GameServerAllocationPolicy) -> GameServerAllocationPolicySpec:
    return (
        policy.spec
        if isinstance(policy.spec, GameServerAllocationPolicySpec)
        else GameServerAllocationPolicySpec()
    )


def _info(policy: GameServerAllocationPolicy) -> ClusterConnectionInfo:
    info = _spec(policy).connection_info
    return info if isinstance(info, ClusterConnectionInfo) else ClusterConnectionInfo()


def _num(value: object) -> int:
    return value if isinstance(value, int) else 0


def _cluster_name(policy: GameServerAllocationPolicy) -> str:
    name = _info(policy).cluster_name
    return name if isinstance(name, str) else ""


class ConnectionInfoIterator(Iterator[ClusterConnectionInfo]):
    """Clusters to try, in Agones' order; see the module docstring."""

    def __init__(
        self,
        policies: Iterable[GameServerAllocationPolicy],
        intn: Callable[[int], int] | None = None,
    ) -> None:
        self._intn = intn or random.randrange
        by_priority: dict[int, dict[str, list[GameServerAllocationPolicy]]] = {}
        for policy in policies:
            group = by_priority.setdefault(_num(_spec(policy).priority), {})
            group.setdefault(_cluster_name(policy), []).append(policy)
        self._priorities = sorted(by_priority)
        self._by_priority = by_priority
        self._current = 0
        self._returned: set[str] = set()

    def __iter__(self) -> ConnectionInfoIterator:
        return self

    def __next__(self) -> ClusterConnectionInfo:
        while self._current < len(self._priorities):
            clusters = self._by_priority[self._priorities[self._current]]
            chosen = self._pick(clusters)
            if chosen is None:
                self._current += 1
                continue
            self._returned.add(chosen[0])
            return chosen[1]
        raise StopIteration

    def _pick(
        self, clusters: dict[str, list[GameServerAllocationPolicy]]
    ) -> tuple[str, ClusterConnectionInfo] | None:
        candidates: list[tuple[str, ClusterConnectionInfo]] = []
        weights: list[int] = []
        for name in sorted(clusters):
            if name in self._returned:
                continue
            policies = clusters[name]
            weights.append(sum(_num(_spec(p).weight) for p in policies) // len(policies))
            candidates.append((name, _info(policies[0])))
        return select_random_weighted(candidates, weights, self._intn)


def select_random_weighted(
    items: list[tuple[str, ClusterConnectionInfo]],
    weights: list[int],
    intn: Callable[[int], int],
) -> tuple[str, ClusterConnectionInfo] | None:
    """Pick an item with probability weight/sum; None when the weights sum to 0 or less."""
    total = sum(weights)
    if total <= 0:
        return None
    point = intn(total)
    running = 0
    for item, weight in zip(items, weights, strict=True):
        running += weight
        if point < running:
            return item
    return None


def connection_order(
    policies: Iterable[GameServerAllocationPolicy], intn: Callable[[int], int] | None = None
) -> list[ClusterConnectionInfo]:
    """Every cluster in the order `ConnectionInfoIterator` would yield them."""
    return list(ConnectionInfoIterator(policies, intn))
