"""`agones controller`: the controller process (Agones `cmd/controller`): GameServers, GameServerSets,
Fleets and FleetAutoscalers.

Flags and environment variables (Agones' names; env = upper-case flag, `-` → `_`) map onto
`ControllerConfig` here and nowhere else. `build(context, config)` constructs the controllers on a
runner context and is reusable (e.g. by `agones local up`); `run` wires the REST client (kubeconfig
or in-cluster; `--api-server-qps` / `--api-server-qps-burst` are the budget of each of its
clientsets, Kubernetes and Agones apart, as in Agones), the shared informer factory, the port
allocator, the GameServer controller family, the per-node counter and metrics, the GameServerSet,
Fleet and FleetAutoscaler controllers (with their metrics), leader election when enabled, `/live`
`/ready` `/metrics`, and a SIGTERM drain — all through `agones.controller.ControllerRunner`.
"""

from __future__ import annotations

import argparse
import socket
import uuid
from dataclasses import dataclass, field
from typing import Any

from .. import aioloop
from ..apis.agones.v1.gameserver import DEFAULT_PORT_RANGE
from ..apis.meta.quantity import Quantity, QuantityError
from ..client.config import ConfigError, load_config
from ..client.rest import RESTClient
from ..client.versioned import Clientset
from ..controller import Context, ControllerRunner, ControllerSettings, Runnable
from ..controllers import fleetautoscalers, fleets, gameserversets
from ..controllers.gameservers import Controller, GameServerMetrics, PerNodeCounter, SidecarConfig
from ..featuregates import FeatureGates
from ..logging import configure_logging
from ..portallocator import PortAllocator, PortRange, parse_port_ranges, validate_port_ranges
from . import flags, memtrace

SCHEDULED_WRITE_DELAY = 0.1
"""Default of `--scheduled-write-delay` (seconds)."""


@dataclass
class ControllerConfig:
    """Everything `agones controller` is configured with."""

    settings: ControllerSettings = field(default_factory=ControllerSettings)
    """Process settings shared by every controller binary (workers, QPS, leases, HTTP port)."""
    port_ranges: dict[str, PortRange] = field(default_factory=dict)
    """`default` (from --min-port/--max-port) plus --additional-port-ranges."""
    sidecar: SidecarConfig = field(default_factory=SidecarConfig)
    """How GameServer pods get their SDK server."""
    gates: FeatureGates = field(default_factory=FeatureGates)
    """Feature gates (--feature-gates / FEATURE_GATES)."""
    game_server_sets: gameserversets.GameServerSetSettings = field(
        default_factory=gameserversets.GameServerSetSettings
    )
    """The GameServerSet controller's batch and parallelism limits."""
    autoscaler_policy_modules: list[str] = field(default_factory=list)
    """Modules imported at start-up that register in-process autoscaling policies."""
    scheduled_write_delay: float = SCHEDULED_WRITE_DELAY
    """How long the GameServer controller holds a Scheduled write for an SDK Ready() (agones-py's
    --scheduled-write-delay; 0 = at once, as Agones)."""


def add_flags(parser: argparse.ArgumentParser) -> None:
    s, car = ControllerSettings(), SidecarConfig()
    add = flags.add
    flags.bind_settings(parser, gameserversets.GameServerSetSettings)
    add(parser, "--min-port", int, 0, "Required. The minimum port a GameServer can be allocated")
    add(parser, "--max-port", int, 0, "Required. The maximum port a GameServer can be allocated")
    add(parser, "--additional-port-ranges", str, "", 'named port ranges: {"game": [5000, 6000]}')
    add(parser, "--sidecar-image", str, car.image, "the SDK server image")
    add(parser, "--sidecar-cpu-request", str, car.cpu_request, "sidecar CPU request (0 = none)")
    add(parser, "--sidecar-cpu-limit", str, car.cpu_limit, "sidecar CPU limit (0 = none)")
    add(parser, "--sidecar-memory-request", str, car.memory_request, "sidecar memory request")
    add(parser, "--sidecar-memory-limit", str, car.memory_limit, "sidecar memory limit")
    add(
        parser,
        "--sidecar-run-as-user",
        int,
        car.run_as_user,
        "sidecar UID",
        "--sidercar-run-as-user",  # Agones' spelling of the flag
    )
    add(parser, "--sidecar-run-as-nonroot", flags.go_bool, car.run_as_non_root, "runAsNonRoot")
    add(
        parser,
        "--sidecar-allow-privilege-escalation",
        flags.go_bool,
        car.allow_privilege_escalation,
        "allowPrivilegeEscalation of the sidecar",
        "--sidercar-allow-privilege-escalation",
    )
    add(
        parser,
        "--sidecar-requests-rate-limit",
        flags.go_duration,
        car.requests_rate_limit,
        "how long the sidecar coalesces SDK writes",
    )
    add(
        parser,
        "--scheduled-write-delay",
        flags.go_duration,
        SCHEDULED_WRITE_DELAY,
        "agones-py: how long after a Starting GameServer's pod gets its IPs the Scheduled write"
        " waits for an SDK Ready() that makes it unnecessary (0s: at once, as Agones)",
    )
    add(parser, "--always-pull-sidecar", flags.go_bool, car.always_pull, "pull the sidecar always")
    add(parser, "--sdk-service-account", str, car.sdk_service_account, "GameServer pods' account")
    add(parser, "--num-workers", int, s.num_workers, "workers per work queue")
    add(parser, "--api-server-qps", float, s.api_server_qps, "sustained QPS to the API server")
    add(parser, "--api-server-qps-burst", int, s.api_server_qps_burst, "burst to the API server")
    add(parser, "--http-port", int, s.http_port, "port of /live, /ready and /metrics")
    add(parser, "--kubeconfig", str, "", "kubeconfig (out of cluster)")
    add(parser, "--pod-namespace", str, s.pod_namespace, "namespace of this pod (Lease)")
    add(parser, "--leader-election", flags.go_bool, s.leader_election, "run only while leading")
    add(parser, "--log-level", str, "Info", "Agones log level")
    add(parser, "--prometheus-exporter", flags.go_bool, s.prometheus_exporter, "serve /metrics")
    add(parser, "--feature-gates", str, "", "feature gates, e.g. PlayerTracking=true")
    add(
        parser,
        "--autoscaler-policy-modules",
        str,
        "",
        "comma-separated modules that register in-process FleetAutoscaler policies (python:<name>)",
    )


def _check_resources(request: str, limit: str, name: str) -> list[str]:
    try:
        req, lim = Quantity.parse(request), Quantity.parse(limit)
    except QuantityError as err:
        return [f"could not parse sidecar {name} quantity: {err}"]
    zero = Quantity.parse(0)
    errors = []
    if lim.cmp(zero) != 0 and req.cmp(lim) > 0:
        errors.append(f"Request must be less than or equal to {name} limit")
    if req.is_negative():
        errors.append(f"Resource {name} request value must be non negative")
    if lim.is_negative():
        errors.append(f"Resource {name} limit value must be non negative")
    return errors


def config_from_args(args: argparse.Namespace) -> tuple[ControllerConfig, list[str]]:
    """The config and every configuration error (Agones' texts), both from parsed flags."""
    errors: list[str] = []
    try:
        gates = FeatureGates.parse(args.feature_gates)
    except ValueError as err:
        return ControllerConfig(), [str(err)]
    try:
        ranges = parse_port_ranges(args.additional_port_ranges, gates)
    except ValueError as err:
        ranges, errors = {}, [str(err)]
    ranges[DEFAULT_PORT_RANGE] = PortRange(args.min_port, args.max_port)
    errors += validate_port_ranges(ranges)
    errors += _check_resources(args.sidecar_cpu_request, args.sidecar_cpu_limit, "cpu")
    errors += _check_resources(args.sidecar_memory_request, args.sidecar_memory_limit, "memory")
    settings = ControllerSettings(
        http_port=args.http_port,
        num_workers=args.num_workers,
        api_server_qps=args.api_server_qps,
        api_server_qps_burst=args.api_server_qps_burst,
        leader_election=args.leader_election,
        pod_namespace=args.pod_namespace,
        kubeconfig=args.kubeconfig or None,
        log_level=args.log_level.lower(),
        prometheus_exporter=args.prometheus_exporter,
    )
    sidecar = SidecarConfig(
        image=args.sidecar_image,
        cpu_request=args.sidecar_cpu_request,
        cpu_limit=args.sidecar_cpu_limit,
        memory_request=args.sidecar_memory_request,
        memory_limit=args.sidecar_memory_limit,
        run_as_user=args.sidecar_run_as_user,
        run_as_non_root=args.sidecar_run_as_nonroot,
        allow_privilege_escalation=args.sidecar_allow_privilege_escalation,
        always_pull=args.always_pull_sidecar,
        sdk_service_account=args.sdk_service_account,
        requests_rate_limit=args.sidecar_requests_rate_limit,
    )
    game_server_sets = flags.settings_from_args(gameserversets.GameServerSetSettings, args)
    errors += _check_game_server_set_settings(game_server_sets)
    budget = flags.client_budget_error(settings.api_server_qps, settings.api_server_qps_burst)
    if budget is not None:
        errors.append(budget)
    modules = [m.strip() for m in args.autoscaler_policy_modules.split(",") if m.strip()]
    errors += _import_policy_modules(modules)
    if args.scheduled_write_delay < 0:
        errors.append(
            f"scheduled-write-delay must not be negative, got {args.scheduled_write_delay}s"
        )
    config = ControllerConfig(
        settings, ranges, sidecar, gates, game_server_sets, modules, args.scheduled_write_delay
    )
    return config, errors


def _import_policy_modules(modules: list[str]) -> list[str]:
    """Import the modules that register in-process policies; one error line per failure."""
    errors = []
    for module in modules:
        try:
            fleetautoscalers.REGISTRY.import_modules([module])
        except Exception as err:  # a user module: report any failure as a configuration error
            errors.append(f"could not import autoscaler policy module {module}: {err}")
    return errors


def _check_game_server_set_settings(s: gameserversets.GameServerSetSettings) -> list[str]:
    """Parallelism and batch sizes below 1 would stall the GameServerSet controller."""
    positive = {
        "max-creation-parallelism": s.max_creation_parallelism,
        "max-game-server-creations-per-batch": s.max_game_server_creations_per_batch,
        "max-deletion-parallelism": s.max_deletion_parallelism,
        "max-game-server-deletions-per-batch": s.max_game_server_deletions_per_batch,
        "max-pod-pending-count": s.max_pod_pending_count,
    }
    return [
        f"{name} must be at least 1, got {value}" for name, value in positive.items() if value < 1
    ]


@dataclass
class GameServerControllers:
    """What `build_game_server_controllers` made; other controllers take the per-node counter."""

    controller: Controller
    port_allocator: PortAllocator
    per_node_counter: PerNodeCounter
    metrics: GameServerMetrics | None


def build_game_server_controllers(
    context: Context, config: ControllerConfig
) -> GameServerControllers:
    factory = context.informer_factory
    allocator = PortAllocator(config.port_ranges, config.gates)
    controller = Controller(
        context.client,
        factory,
        context.event_broadcaster,
        allocator,
        config.sidecar,
        config.gates,
        clock=context.clock,
        logger=context.logger,
        scheduled_write_delay=config.scheduled_write_delay,
    )
    metrics = (
        GameServerMetrics(factory, clock=context.clock)
        if config.settings.prometheus_exporter
        else None
    )
    return GameServerControllers(controller, allocator, PerNodeCounter(factory), metrics)


def build_game_server_set_controller(
    context: Context, config: ControllerConfig, counter: PerNodeCounter
) -> gameserversets.Controller:
    controller = gameserversets.Controller(
        Clientset(context.client),
        context.informer_factory,
        counter,
        context.event_broadcaster,
        config.gates,
        config.game_server_sets,
        clock=context.clock,
        logger=context.logger,
    )
    context.health.add_liveness_check("gameserverset-workerqueue", controller.healthy)
    return controller


def build_fleet_controller(context: Context, config: ControllerConfig) -> fleets.Controller:
    controller = fleets.Controller(
        Clientset(context.client),
        context.informer_factory,
        context.event_broadcaster,
        config.gates,
        clock=context.clock,
        logger=context.logger,
    )
    context.health.add_liveness_check("fleet-workerqueue", controller.healthy)
    if config.settings.prometheus_exporter:
        fleets.FleetMetrics(context.informer_factory, config.gates)
    return controller


def build_fleet_autoscaler_controller(
    context: Context, config: ControllerConfig, counter: PerNodeCounter
) -> fleetautoscalers.Controller:
    controller = fleetautoscalers.Controller(
        context.client,
        context.informer_factory,
        context.event_broadcaster,
        config.gates,
        clock=context.clock,
        logger=context.logger,
        node_counts=counter.counts,
    )
    if config.settings.prometheus_exporter:
        fleetautoscalers.FleetAutoscalerMetrics(context.informer_factory)
    context.health.add_liveness_check("fleetautoscaler-workerqueue", controller.healthy)
    return controller


def build(context: Context, config: ControllerConfig) -> list[Runnable]:
    """Construct the controllers on a runner context; return what to run."""
    game_servers = build_game_server_controllers(context, config)
    counter = game_servers.per_node_counter
    game_server_sets = build_game_server_set_controller(context, config, counter)
    fleet_controller = build_fleet_controller(context, config)
    autoscalers = build_fleet_autoscaler_controller(context, config, counter)
    return [game_servers.controller, game_server_sets, fleet_controller, autoscalers]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "controller",
        help="run the GameServer, GameServerSet, Fleet and FleetAutoscaler controllers (Agones cmd/controller)",
    )
    add_flags(parser)
    parser.set_defaults(func=run)


def lease_identity() -> str:
    """`<hostname>_<uuid>`, as client-go's controllers name themselves in a Lease: the hostname
    (the pod's name in a cluster) says which pod leads, the uuid tells its restarts apart."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def run(args: argparse.Namespace) -> int:
    config, errors = config_from_args(args)
    configure_logging(config.settings.log_level)
    if errors:
        for error in errors:
            print(f"error: {error}")
        print("Could not create controller from environment or flags")
        return 2
    try:
        memtrace.install_from_env()
    except memtrace.MemTraceConfigError as err:
        print(f"error: {err}")
        return 2
    try:
        client_config = load_config(config.settings.kubeconfig)
    except ConfigError as err:
        print(f"error: could not create the client configuration: {err}")
        return 2
    client_config.qps = config.settings.api_server_qps
    client_config.burst = config.settings.api_server_qps_burst

    async def main() -> int:
        async with RESTClient(client_config) as client:
            runner = ControllerRunner(
                config.settings, client, lambda ctx: build(ctx, config), identity=lease_identity()
            )
            return await runner.run()

    return aioloop.run(main())
