"""`compute_desired_fleet_size`: which policy decides, and the Chain policy (Go `fleetautoscalers.go`).

`compute_desired_fleet_size(policy, inputs)` dispatches on `policy.type` to the module of that
policy and returns a `Decision`: the `Scale` and, for a Chain, the entry that decided
(`applied_policy` is then `Chain:<id>:<type>`, else the policy's type). Counter and List need the
CountsAndLists gate, Schedule and Chain ScheduledAutoscaler, Wasm WasmAutoscaler; without it they
fail as Agones' do. A Chain tries its entries in order and the first that answers wins: a Schedule
entry out of its window, or an entry that fails, passes to the next; falling off the end raises
the last entry's error (`InactiveScheduleError` when the last was an inactive Schedule); an empty
Chain keeps the Fleet's current size. Everything it reads comes in `PolicyInputs`; the only I/O is
the Webhook (and Wasm) policy's, through the clients given there.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from msgspec import UnsetType

from ...apis.agones.v1.fleet import Fleet
from ...apis.agones.v1.gameserver import GameServer
from ...apis.autoscaling.v1 import (
    ChainEntry,
    CounterPolicy,
    FleetAutoscalerPolicyType,
    ListPolicy,
    PolicyFields,
    ScheduledPolicy,
    ServiceReference,
    URLConfiguration,
    WasmPolicy,
    new_fleet_autoscale_review,
)
from ...featuregates import Feature, FeatureGates
from . import buffer, counterlist, inprocess, schedule, webhook
from .counterlist import DeletionOrder
from .inprocess import PolicyRegistry
from .policy import InactiveScheduleError, PolicyError, Scale
from .status import fleet_status
from .webhook import WebhookClient

PT = FleetAutoscalerPolicyType
T = TypeVar("T")

WasmRunner = Callable[[WasmPolicy, Fleet, "PolicyInputs"], Awaitable[Scale]]


def _no_game_servers() -> Sequence[GameServer]:
    return []


@dataclass
class PolicyInputs:
    """Everything a policy may read besides the policy itself."""

    fleet: Fleet
    gates: FeatureGates
    now: dt.datetime
    deletion_order: DeletionOrder = _no_game_servers
    webhook_client: WebhookClient | None = None
    registry: PolicyRegistry = field(default_factory=lambda: inprocess.REGISTRY)
    wasm: WasmRunner | None = None
    new_uid: Callable[[], str] = lambda: str(uuid.uuid4())
    webhook_timeout: float = webhook.WEBHOOK_TIMEOUT


@dataclass(frozen=True)
class Decision:
    scale: Scale
    chain_entry: ChainEntry | None = None

    def applied_policy(self, policy_type: str) -> str:
        """`status.lastAppliedPolicy`: the type, or `Chain:<id>:<type>` of the deciding entry."""
        if self.chain_entry is None:
            return policy_type
        return f"Chain:{self.chain_entry.id or ''}:{self.chain_entry.type or ''}"


class ChainPolicyError(PolicyError):
    """No Chain entry could decide; `cause` is the last entry's error."""

    def __init__(self, cause: PolicyError) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _need(gates: FeatureGates, feature: Feature, what: str) -> None:
    if not gates.enabled(feature):
        raise PolicyError(f"cannot apply {what} unless feature flag {feature.value} is enabled")


async def apply_webhook_policy(w: URLConfiguration | None, inputs: PolicyInputs) -> Scale:
    """POST the Fleet's review to the webhook (or call the `python:` policy) and read its answer."""
    if not isinstance(w, URLConfiguration):
        raise PolicyError("webhookPolicy parameter must not be nil")
    review = new_fleet_autoscale_review(inputs.fleet, inputs.new_uid(), inputs.gates)
    name = inprocess.policy_name(w.url)
    if name is not None and not isinstance(w.service, ServiceReference):
        answer = await inprocess.call_policy(inputs.registry, name, review, inputs.webhook_timeout)
        return webhook.scale_from_review(answer, inputs.fleet)
    target = webhook.build_url_from_webhook_policy(w)
    client = inputs.webhook_client
    if client is None:
        raise PolicyError("no webhook client configured")
    body = await client.post(target, webhook.encode_review(review))
    return webhook.scale_from_response(body, inputs.fleet)


async def compute_desired_fleet_size(policy: PolicyFields, inputs: PolicyInputs) -> Decision:
    """The Fleet size `policy` wants (raises PolicyError / InactiveScheduleError)."""
    t = policy.type
    if t == PT.BUFFER:
        return Decision(buffer.compute_desired_fleet_size(_or_none(policy.buffer), inputs.fleet))
    if t == PT.WEBHOOK:
        return Decision(await apply_webhook_policy(_or_none(policy.webhook), inputs))
    if t in (PT.COUNTER, PT.LIST):
        sub: CounterPolicy | ListPolicy | None = (
            _or_none(policy.counter) if t == PT.COUNTER else _or_none(policy.list)
        )
        _need(inputs.gates, Feature.COUNTS_AND_LISTS, f"{t}Policy")
        return Decision(
            counterlist.compute_desired_fleet_size(sub, inputs.fleet, inputs.deletion_order)
        )
    if t == PT.SCHEDULE:
        return await _apply_schedule(policy, inputs)
    if t == PT.CHAIN:
        _need(inputs.gates, Feature.SCHEDULED_AUTOSCALER, "ChainPolicy")
        return await _apply_chain(policy.chain_policy or [], inputs)
    if t == PT.WASM:
        _need(inputs.gates, Feature.WASM_AUTOSCALER, "WasmPolicy")
        wasm = _or_none(policy.wasm)
        if not isinstance(wasm, WasmPolicy):
            raise PolicyError("wasmPolicy parameter must not be nil")
        if inputs.wasm is None:
            raise PolicyError("the Wasm policy runtime is not available")
        return Decision(await inputs.wasm(wasm, inputs.fleet, inputs))
    raise PolicyError("wrong policy type, should be one of: Buffer, Webhook, Counter, List")


async def _apply_schedule(policy: PolicyFields, inputs: PolicyInputs) -> Decision:
    _need(inputs.gates, Feature.SCHEDULED_AUTOSCALER, "SchedulePolicy")
    sched = policy.schedule_policy
    if sched is None:
        raise PolicyError("schedulePolicy parameter must not be nil")
    if not schedule.is_schedule_active(sched, inputs.now):
        raise InactiveScheduleError()
    inner = sched.policy
    if not isinstance(inner, ScheduledPolicy):
        raise PolicyError("the schedule's policy must be set")
    return Decision((await compute_desired_fleet_size(inner, inputs)).scale)


async def _apply_chain(chain: Sequence[ChainEntry], inputs: PolicyInputs) -> Decision:
    last: PolicyError | None = None
    for entry in chain:
        try:
            decided = await compute_desired_fleet_size(entry, inputs)
        except PolicyError as err:
            last = err
            continue
        return Decision(decided.scale, entry)
    if last is not None:
        raise ChainPolicyError(last)
    return Decision(Scale(fleet_status(inputs.fleet).replicas, False))


def _or_none(value: T | UnsetType | None) -> T | None:
    return None if isinstance(value, UnsetType) else value
