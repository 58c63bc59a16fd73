"""Two allocator replicas, 50 concurrent clients, write faults: no GameServer is ever handed out
twice for one Ready period, and the replicas do not fight (agones#1856).

Each replica has its own client, informers and cache, as two processes would, and its own share
of the candidates (`Partition(i, 2)`). A pool of Ready GameServers is re-readied by the test after
each allocation with a new `test/epoch` annotation; a double allocation would show the same
(name, epoch) in two Allocated answers. Every 50th allocation arms a burst of injected write
failures (500 and 409). `ALLOCATION_STRESS_TOTAL` sets the number of allocations (default 1,500
here; `bench/bench_allocation.py --stress` runs 20,000 and prints the same counts).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest

from agones.apis.allocation.v1 import GameServerAllocation
from agones.client.errors import ApiError
from agones.controllers.gameserverallocations import Allocator, AllocatorSettings, Partition
from tests.integration.gameserverallocations.harness import (
    GAME_SERVERS,
    AllocationHarness,
    harness,
)

pytestmark = pytest.mark.slow

EPOCH = "test/epoch"
SELECTOR = {"matchLabels": {"agones.dev/fleet": "green-fleet"}}


@dataclass
class Tally:
    outcomes: Counter[str] = field(default_factory=Counter)
    handed: set[tuple[str, str]] = field(default_factory=set)
    doubles: list[tuple[str, str]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)


async def ready_again(h: AllocationHarness, name: str, epoch: int) -> None:
    """Back to Ready under a new epoch, through whatever faults are armed."""
    while True:
        try:
            gs = await h.rest.get(GAME_SERVERS, name, "default")
            gs["status"]["state"] = "Ready"
            gs["metadata"].setdefault("annotations", {})[EPOCH] = str(epoch)
            await h.rest.update(GAME_SERVERS, gs, "default")
            return
        except ApiError:
            await asyncio.sleep(0.001)


async def stress(
    h: AllocationHarness,
    replicas: list[Allocator],
    total: int,
    clients: int = 50,
    faults: bool = True,
) -> Tally:
    tally = Tally()
    issued = 0
    epochs: Counter[str] = Counter()
    background: set[asyncio.Task[None]] = set()
    loop = asyncio.get_running_loop()

    readied = asyncio.Event()

    async def ready_and_tell(name: str, epoch: int) -> None:
        nonlocal readied
        await ready_again(h, name, epoch)
        readied.set()
        readied = asyncio.Event()

    async def client(n: int) -> None:
        nonlocal issued
        while issued < total:
            issued += 1
            turn = issued
            if faults and issued % 50 == 0:
                h.server.faults.fail_next_writes(random.randint(1, 3), random.choice([500, 409]))
            gsa = msgspec.convert(
                {"metadata": {"namespace": "default"}, "spec": {"selectors": [SELECTOR]}},
                GameServerAllocation,
            )
            start = loop.time()
            try:
                out = await replicas[turn % len(replicas)].allocate(gsa)
            except ApiError:
                tally.outcomes["error"] += 1
                continue
            tally.latencies.append(loop.time() - start)
            assert out.status is not msgspec.UNSET
            state = str(out.status.state)
            tally.outcomes[state] += 1
            if state != "Allocated":
                # nothing Ready in this replica's view: wait for the next server to come back
                # (or a second) rather than spin, so the share of Allocated answers does not
                # depend on how fast a loaded machine re-readies servers
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(readied.wait(), 1.0)
                continue
            name = out.status.game_server_name
            assert isinstance(name, str)
            meta: Any = out.status.metadata
            key = (name, meta.annotations.get(EPOCH, "0"))
            if key in tally.handed:
                tally.doubles.append(key)
            tally.handed.add(key)
            epochs[name] += 1
            task = asyncio.create_task(ready_and_tell(name, epochs[name]))
            background.add(task)
            task.add_done_callback(background.discard)

    await asyncio.gather(*(client(n) for n in range(clients)))
    await asyncio.gather(*background)
    h.server.faults.clear()
    return tally


async def two_replicas(h: AllocationHarness, partitioned: bool = True) -> list[Allocator]:
    out = []
    for i in range(2):
        partition = Partition(i, 2) if partitioned else Partition()
        out.append(await h.allocator(AllocatorSettings(partition=partition)))
    return out


async def fill(h: AllocationHarness, replicas: list[Allocator], count: int) -> None:
    for i in range(count):
        await h.create_ready(f"gs-{i:04d}", node=f"node-{'abc'[i % 3]}")
    for replica in replicas:
        for _ in range(1000):
            if len(replica.allocation_cache) >= count:
                break
            await asyncio.sleep(0.01)


async def test_two_replicas_never_double_allocate_under_write_faults() -> None:
    total = int(os.environ.get("ALLOCATION_STRESS_TOTAL", "1500"))
    async with harness() as h:
        replicas = await two_replicas(h)
        await fill(h, replicas, 100)
        tally = await stress(h, replicas, total)
        print(f"\n{total} allocations by 2 replicas, 50 clients: {dict(tally.outcomes)}")
        assert tally.doubles == []
        assert sum(tally.outcomes.values()) == total
        # progress through the faults: at least a pool's worth handed out (how many more depends
        # on how fast a loaded machine re-readies servers, which is not what this test checks)
        assert tally.outcomes["Allocated"] >= 100
        assert h.server.faults.injected > 0


def retries(allocator: Allocator) -> int:
    """Attempts beyond the first, from `agones_gameserver_allocations_retry_total`."""
    total = count = 0.0
    for family in allocator.retries.collect():
        for sample in family.samples:
            if sample.name.endswith("_sum"):
                total += sample.value
            elif sample.name.endswith("_count"):
                count += sample.value
    return int(total - count)


async def test_partitioned_replicas_do_not_fight_where_shared_ones_do() -> None:
    """The same load on two replicas that share every candidate (Agones) and on two that
    partition them: the partitioned pair needs fewer retries (in practice none)."""
    found = {}
    for partitioned in (False, True):
        async with harness() as h:
            replicas = await two_replicas(h, partitioned)
            await fill(h, replicas, 200)
            tally = await stress(h, replicas, 1000, faults=False)
            assert tally.doubles == []
            found[partitioned] = (sum(retries(r) for r in replicas), dict(tally.outcomes))
    print(f"\nretries and outcomes, shared: {found[False]}, partitioned: {found[True]}")
    assert found[True][0] < found[False][0]
