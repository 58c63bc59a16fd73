"""The simulated-pod path of a `PodRunner`: whether a pod is simulated, and its start.

* `should_simulate(runner)`: whether the pod runs no process (`imagemap.simulation_reason`: the
  annotation, `KubeletConfig.simulate_all`, or no container with a local program), the reason
  kept in `runner.simulated_reason`.
* `start_simulated(runner)`: a GameServer's pod (its SDK sidecar declared) gets a
  `simulated.SimulatedGame`; the pod is Running at once; when the user did not ask for the
  simulation, a `Simulated` event and annotation say why it is simulated.
* `annotate_simulated(runner, reason)`: the `Simulated` annotation, on the pod.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import PODS
from ...featuregates import FeatureGates
from .containers import SIDECAR_NAME, resolve_env
from .imagemap import (
    SIMULATE_ANNOTATION,
    SIMULATED_ANNOTATION,
    ImageProgram,
    local_program,
    simulation_reason,
)
from .podevents import PodEvents
from .simulated import SharedGameServerStore, SimulatedGame, game_options


class Config(Protocol):
    images: list[ImageProgram]
    simulate_all: bool
    gates: FeatureGates


class Host(Protocol):
    @property
    def client(self) -> RESTClient: ...
    @property
    def config(self) -> Config: ...
    @property
    def gameservers(self) -> SharedGameServerStore: ...


class Runner(Protocol):
    """What this module uses of a `podrunner.PodRunner`."""

    namespace: str
    name: str
    pod: dict[str, Any]
    node_ip: str
    events: PodEvents
    sim: SimulatedGame | None
    simulated_reason: str
    _phase: str

    @property
    def kubelet(self) -> Host: ...
    async def write_status(self) -> None: ...


def should_simulate(runner: Runner) -> bool:
    spec = runner.pod.get("spec") or {}
    every = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    images = runner.kubelet.config.images
    runs = [local_program(c, images) is not None for c in every if c.get("name") != SIDECAR_NAME]
    simulate_all = runner.kubelet.config.simulate_all
    runner.simulated_reason = simulation_reason(runner.pod, runs, simulate_all)
    return bool(runner.simulated_reason)


def _simulation_requested(runner: Runner) -> bool:
    """Simulated because the user asked (the annotation, `simulate_all`): nothing to say,
    and no write to pay for it (benchmarks simulate hundreds of pods)."""
    annotations = runner.pod["metadata"].get("annotations") or {}
    requested = annotations.get(SIMULATE_ANNOTATION) == "true"
    return requested or runner.kubelet.config.simulate_all


async def annotate_simulated(runner: Runner, reason: str) -> None:
    """The `Simulated` annotation (on the pod, where `describe` shows it)."""
    annotations = {SIMULATED_ANNOTATION: reason}
    with contextlib.suppress(ApiError):
        await runner.kubelet.client.patch(
            PODS,
            runner.name,
            {"metadata": {"annotations": annotations}},
            namespace=runner.namespace,
        )


async def start_simulated(runner: Runner) -> None:
    spec = runner.pod.get("spec") or {}
    every = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    sidecar = next((c for c in every if c.get("name") == SIDECAR_NAME), None)
    game: dict[str, Any] = next(
        (c for c in spec.get("containers") or [] if c.get("name") != SIDECAR_NAME), {}
    )
    gs_name = runner.pod["metadata"].get("labels", {}).get("agones.dev/gameserver", "")
    if sidecar is not None and gs_name:
        # `resolve_env` resolves each variable on its own: resolving only this one is the same
        named = [e for e in sidecar.get("env") or [] if isinstance(e, dict)]
        wanted = [e for e in named if e.get("name") == "GAMESERVER_NAME"]
        env = resolve_env({**sidecar, "env": wanted}, runner.pod, runner.node_ip)
        gs_name = env.get("GAMESERVER_NAME", gs_name)
        runner.sim = SimulatedGame(
            runner.kubelet.gameservers,
            runner.namespace,
            gs_name,
            game_options(game),
            runner.kubelet.config.gates,
        )
    runner._phase = "Running"
    await runner.write_status()
    if not _simulation_requested(runner):
        reason = f"Pod is simulated by the local cluster: {runner.simulated_reason}"
        runner.events.simulated(reason)
        await annotate_simulated(runner, reason)
    if runner.sim is not None:
        await runner.sim.start()
