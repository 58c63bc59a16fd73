"""The leader elector (client-go `tools/leaderelection/leaderelection.go`).

Semantics (and caveats) are client-go's:
* Defaults 15 s lease / 10 s renew deadline / 2 s retry; validation requires
  lease_duration > renew_deadline > JITTER_FACTOR (1.2) x retry_period, each at least 1 s.
* `run()` tries to acquire immediately, then every retry_period stretched by up to 1.2x jitter; a
  lease held by someone else is only taken once it has not changed for its full lease duration as
  observed on *our* monotonic clock (so clock skew between replicas, and steps of the wall clock,
  are tolerated; skew rate is not).
* While leading, the lease is renewed every retry_period: first optimistically over the last record
  we wrote, falling back to GET + update. If no renewal succeeds within renew_deadline, leadership is
  lost: `on_started_leading`'s task is cancelled, `run()` returns.
* When `run()` ends after leading (cancelled, or leadership lost) the lease is released when
  `release_on_cancel` (holder "" and a 1 s duration, so a follower takes over within one jittered
  retry period), as client-go's `renew` does on both paths; unlike client-go, `on_started_leading`'s
  task has been cancelled and awaited first, and a release that conflicts (a renewal cancelled in
  flight landed) re-reads the lease and retries once.
* After a leader dies without releasing, a follower takes over at most
  lease_duration + 2 x retry_period x (1 + jitter) later: it must first observe the last renewal
  (one jittered poll), then wait a full lease_duration, then poll again.
* `on_stopped_leading` is always called when `run()` ends, leader or not (as in Go);
  `on_new_leader(identity)` whenever the observed holder changes.
There is no fencing: work guarded by the lease must stop before the lease can lapse.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog

from ..client.errors import ConflictError, NotFoundError
from ..clock import Clock, RealClock
from .resourcelock import LeaderElectionRecord, ResourceLock

JITTER_FACTOR = 1.2
T = TypeVar("T")


@dataclass
class LeaderCallbacks:
    on_started_leading: Callable[[], Awaitable[None]]
    """Runs as a task while we lead; cancelled when leadership is lost or run() is cancelled."""
    on_stopped_leading: Callable[[], None]
    """Called once when run() ends."""
    on_new_leader: Callable[[str], None] | None = None
    """Called with the new holder's identity whenever it changes (including us)."""


@dataclass
class LeaderElectionConfig:
    lock: ResourceLock
    callbacks: LeaderCallbacks
    lease_duration: float = 15.0
    """How long a non-leader waits after the last observed change before taking over."""
    renew_deadline: float = 10.0
    """How long the leader keeps retrying a renewal before giving up leadership."""
    retry_period: float = 2.0
    """Time between acquire/renew attempts."""
    release_on_cancel: bool = True
    """Release the lease when run() is cancelled (Agones sets it)."""
    name: str = ""
    clock: Clock = field(default_factory=RealClock)
    rand: Callable[[], float] = random.random


def validate(config: LeaderElectionConfig) -> None:
    if config.lease_duration <= config.renew_deadline:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if config.renew_deadline <= JITTER_FACTOR * config.retry_period:
        raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
    for name in ("lease_duration", "renew_deadline", "retry_period"):
        if getattr(config, name) < 1:
            raise ValueError(f"{name} must be at least 1 second")
    if not config.lock.identity():
        raise ValueError("lock identity is empty")


def new_leader_elector(config: LeaderElectionConfig) -> LeaderElector:
    validate(config)
    return LeaderElector(config)


class LeaderElector:
    def __init__(self, config: LeaderElectionConfig) -> None:
        self.config = config
        self.clock = config.clock
        self.observed_record = LeaderElectionRecord()
        self.observed_raw: bytes = b""
        self.observed_time = 0.0
        self.reported_leader = ""
        self.log = structlog.get_logger().bind(
            lock=config.lock.describe(), identity=config.lock.identity()
        )

    # -- observation ---------------------------------------------------------------------------

    def is_leader(self) -> bool:
        return self.observed_record.holder_identity == self.config.lock.identity()

    def get_leader(self) -> str:
        return self.observed_record.holder_identity

    def _is_lease_valid(self, now: float) -> bool:
        return self.observed_time + self.observed_record.lease_duration_seconds > now

    def _set_observed(self, record: LeaderElectionRecord, raw: bytes | None = None) -> None:
        self.observed_record = record
        self.observed_raw = raw if raw is not None else record.raw()
        self.observed_time = self.clock.monotonic()

    def _maybe_report_transition(self) -> None:
        holder = self.observed_record.holder_identity
        if holder == self.reported_leader:
            return
        self.reported_leader = holder
        if self.config.callbacks.on_new_leader is not None:
            self.config.callbacks.on_new_leader(holder)

    # -- one attempt ---------------------------------------------------------------------------

    async def try_acquire_or_renew(self) -> bool:
        lock = self.config.lock
        wall, now = self.clock.now(), self.clock.monotonic()
        record = LeaderElectionRecord(
            holder_identity=lock.identity(),
            lease_duration_seconds=int(self.config.lease_duration),
            acquire_time=wall,
            renew_time=wall,
        )
        # 1. Fast path: the leader renews over the record it last wrote.
        if self.is_leader() and self._is_lease_valid(now):
            record.acquire_time = self.observed_record.acquire_time
            record.leader_transitions = self.observed_record.leader_transitions
            try:
                await lock.update(record)
                self._set_observed(record)
                return True
            except Exception as err:
                self.log.info("optimistic renew failed, falling back", error=str(err))
        # 2. Read (or create) the record.
        try:
            old, old_raw = await lock.get()
        except NotFoundError:
            try:
                await lock.create(record)
            except Exception as err:
                self.log.info("error creating lock", error=str(err))
                return False
            self._set_observed(record)
            return True
        except Exception as err:
            self.log.info("error retrieving lock", error=str(err))
            return False
        # 3. Note any change; respect a live lease held by someone else.
        if old_raw != self.observed_raw:
            self._set_observed(old, old_raw)
        if old.holder_identity and self._is_lease_valid(now) and not self.is_leader():
            return False
        # 4. Take or keep it.
        if self.is_leader():
            record.acquire_time = old.acquire_time
            record.leader_transitions = old.leader_transitions
        else:
            record.leader_transitions = old.leader_transitions + 1
        try:
            await lock.update(record)
        except Exception as err:
            self.log.info("failed to update lock", error=str(err))
            return False
        self._set_observed(record)
        return True

    async def release(self) -> bool:
        if not self.is_leader():
            return True
        now = self.clock.now()
        record = LeaderElectionRecord(
            leader_transitions=self.observed_record.leader_transitions,
            lease_duration_seconds=1,
            renew_time=now,
            acquire_time=now,
        )
        try:
            try:
                await self.config.lock.update(record)
            except ConflictError:
                # A renewal cancelled in flight may have landed: re-read, and release if still ours.
                current, _ = await self.config.lock.get()
                if current.holder_identity != self.config.lock.identity():
                    return True
                record.leader_transitions = current.leader_transitions
                await self.config.lock.update(record)
        except Exception as err:
            self.log.error("failed to release lock", error=str(err))
            return False
        self._set_observed(record)
        return True

    # -- loops ---------------------------------------------------------------------------------

    def _jittered(self, period: float) -> float:
        return period + self.config.rand() * JITTER_FACTOR * period

    async def acquire(self) -> None:
        """Return once we hold the lease (cancel to give up)."""
        self.log.info("attempting to acquire leader lease")
        while True:
            acquired = await self.try_acquire_or_renew()
            self._maybe_report_transition()
            if acquired:
                self.log.info("successfully acquired lease")
                return
            await self.clock.sleep(self._jittered(self.config.retry_period))

    async def _before(self, coro: Coroutine[Any, Any, T], deadline: float) -> tuple[bool, T | None]:
        """Run `coro` until `deadline` (monotonic); (False, None) when the deadline came first."""
        task = asyncio.ensure_future(coro)
        timer = asyncio.ensure_future(self.clock.sleep(max(0.0, deadline - self.clock.monotonic())))
        try:
            await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            task.cancel()
            # Let a request cut off by the deadline finish unwinding before anything else is sent.
            await asyncio.gather(task, timer, return_exceptions=True)
        if not task.cancelled():
            return True, task.result()
        return False, None

    async def renew(self) -> None:
        """Renew every retry_period; return when a renewal could not be made within the deadline."""
        while True:
            deadline = self.clock.monotonic() + self.config.renew_deadline
            renewed = False
            while not renewed:
                finished, ok = await self._before(self.try_acquire_or_renew(), deadline)
                renewed = bool(finished and ok)
                if renewed or self.clock.monotonic() >= deadline:
                    break
                await self._before(self.clock.sleep(self.config.retry_period), deadline)
                if self.clock.monotonic() >= deadline:
                    break
            self._maybe_report_transition()
            if not renewed:
                self.log.warning("failed to renew lease", deadline=self.config.renew_deadline)
                return
            await self.clock.sleep(self.config.retry_period)

    async def run(self) -> None:
        """Acquire, lead (running on_started_leading) while renewals succeed, then return."""
        leading: asyncio.Future[None] | None = None
        try:
            await self.acquire()
            leading = asyncio.ensure_future(self.config.callbacks.on_started_leading())
            await self.renew()
        finally:
            if leading is not None:
                leading.cancel()
                (outcome,) = await asyncio.gather(leading, return_exceptions=True)
                if isinstance(outcome, Exception):
                    self.log.error("leading failed", error=str(outcome), exc_info=outcome)
                if self.config.release_on_cancel:
                    await self.release()
            self.config.callbacks.on_stopped_leading()
