"""In-process autoscaling policies: a Python function instead of a webhook service.

A studio writes `def my_policy(review: FleetAutoscaleReview) -> FleetAutoscaleReview` (or returning
just the `FleetAutoscaleResponse`, or the review as a JSON-shaped dict; `async def` works too) and
registers it under a name, either in code:

    @register_policy("my-policy")
    def my_policy(review): ...

or as an entry point of its package, group `agones.fleetautoscaler_policies` (`my-policy =
studio.scaling:my_policy`), or by naming its module in the controller's
`--autoscaler-policy-modules` flag (imported at start-up; the module registers itself).

A FleetAutoscaler refers to it exactly as to a webhook, with a `python:` URL, so the object stays
wire-compatible with Agones' CRD (on a real Agones the URL simply cannot be reached):

    policy: {type: Webhook, webhook: {url: "python:my-policy"}}

The function gets the same review a webhook would (a fresh copy each call) and its answer is read
by the same rules (`webhook.scale_from_review`). An unknown name, an exception, a wrong return type
or taking longer than the webhook timeout (15 s; sync functions run in a worker thread) is a
`PolicyError`, reported like a failing webhook.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

import msgspec

from ...apis.autoscaling.v1 import FleetAutoscaleResponse, FleetAutoscaleReview
from .policy import PolicyError

ENTRY_POINT_GROUP = "agones.fleetautoscaler_policies"
SCHEME = "python:"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")

PolicyResult = FleetAutoscaleReview | FleetAutoscaleResponse | dict[str, Any]
PolicyFunction = Callable[[FleetAutoscaleReview], PolicyResult | Awaitable[PolicyResult]]


def policy_name(url: object) -> str | None:
    """The in-process policy a webhook URL names (`python:<name>`), or None for a real URL."""
    if isinstance(url, str) and url.startswith(SCHEME):
        return url[len(SCHEME) :]
    return None


class PolicyRegistry:
    """Named in-process policies; entry points are looked up on first miss."""

    def __init__(self, group: str = ENTRY_POINT_GROUP) -> None:
        self.group = group
        self._policies: dict[str, PolicyFunction] = {}

    def register(self, name: str, fn: PolicyFunction) -> None:
        if not NAME_PATTERN.fullmatch(name):
            raise ValueError(f"invalid policy name {name!r}: want {NAME_PATTERN.pattern}")
        self._policies[name] = fn

    def unregister(self, name: str) -> None:
        self._policies.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._policies)

    def get(self, name: str) -> PolicyFunction:
        fn = self._policies.get(name)
        if fn is not None:
            return fn
        for ep in importlib.metadata.entry_points(group=self.group, name=name):
            try:
                loaded = ep.load()
            except Exception as err:  # a broken plugin must not take the controller down
                raise PolicyError(
                    f"python policy {name!r}: cannot load {ep.value}: {err}"
                ) from None
            if callable(loaded):
                fn = cast(PolicyFunction, loaded)
                self._policies[name] = fn
                return fn
        raise PolicyError(f"python policy {name!r} is not registered")

    def import_modules(self, modules: Iterable[str]) -> None:
        """Import modules that register policies (the controller's --autoscaler-policy-modules)."""
        for module in modules:
            importlib.import_module(module)


REGISTRY = PolicyRegistry()


def register_policy(name: str, registry: PolicyRegistry = REGISTRY) -> Callable[[Any], Any]:
    """Decorator: register the function as the in-process policy `name`."""

    def wrap(fn: PolicyFunction) -> PolicyFunction:
        registry.register(name, fn)
        return fn

    return wrap


def _as_review(result: object, name: str) -> FleetAutoscaleReview:
    if isinstance(result, FleetAutoscaleReview):
        return result
    if isinstance(result, FleetAutoscaleResponse):
        return FleetAutoscaleReview(response=result)
    if isinstance(result, dict):
        try:
            return msgspec.convert(result, FleetAutoscaleReview)
        except msgspec.ValidationError as err:
            raise PolicyError(f"python policy {name!r} returned an invalid review: {err}") from None
    raise PolicyError(
        f"python policy {name!r} returned {type(result).__name__}, "
        "want a FleetAutoscaleReview, a FleetAutoscaleResponse or a dict"
    )


async def call_policy(
    registry: PolicyRegistry, name: str, review: FleetAutoscaleReview, timeout: float
) -> FleetAutoscaleReview:
    """Run the policy `name` on a copy of `review`; its answer as a review, or PolicyError."""
    fn = registry.get(name)
    arg = msgspec.convert(msgspec.to_builtins(review), FleetAutoscaleReview)
    try:
        if inspect.iscoroutinefunction(fn):
            result = await asyncio.wait_for(fn(arg), timeout)
        else:
            result = await asyncio.wait_for(asyncio.to_thread(fn, arg), timeout)
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(result, timeout)
    except PolicyError:
        raise
    except TimeoutError:
        raise PolicyError(f"python policy {name!r} gave no answer within {timeout:g}s") from None
    except Exception as err:
        raise PolicyError(f"python policy {name!r} failed: {type(err).__name__}: {err}") from None
    return _as_review(result, name)
