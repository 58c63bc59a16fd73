"""Feature gates with Agones' names, stages and defaults (`pkg/util/runtime/features.go`).

Gates are parsed from a URL query string (`CountsAndLists=true&PlayerTracking=false`), the format
Agones takes from `--feature-gates` / `FEATURE_GATES`. Unknown names and non-boolean values are
rejected with `ValueError`. A `FeatureGates` value is immutable: pass it to whatever needs it rather
than consulting a process-wide global, so tests can run with different gates side by side.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from urllib.parse import parse_qsl, urlencode


class Stage(enum.StrEnum):
    STABLE = "Stable"
    BETA = "Beta"
    ALPHA = "Alpha"
    DEV = "Dev"
    NONE = "None"


class Feature(enum.StrEnum):
    """Every gate Agones 1.56 knows, by its Agones name."""

    DISABLE_RESYNC_ON_SDK_SERVER = "DisableResyncOnSDKServer"
    AUTOPILOT_PASSTHROUGH_PORT = "AutopilotPassthroughPort"
    COUNTS_AND_LISTS = "CountsAndLists"
    GKE_AUTOPILOT_EXTENDED_DURATION_PODS = "GKEAutopilotExtendedDurationPods"
    PORT_POLICY_NONE = "PortPolicyNone"
    PORT_RANGES = "PortRanges"
    ROLLING_UPDATE_FIX = "RollingUpdateFix"
    SCHEDULED_AUTOSCALER = "ScheduledAutoscaler"
    FLEET_AUTOSCALE_REQUEST_META_DATA = "FleetAutoscaleRequestMetaData"
    SIDECAR_CONTAINERS = "SidecarContainers"
    PLAYER_ALLOCATION_FILTER = "PlayerAllocationFilter"
    PLAYER_TRACKING = "PlayerTracking"
    WASM_AUTOSCALER = "WasmAutoscaler"
    PROCESSOR_ALLOCATOR = "ProcessorAllocator"
    EXAMPLE = "Example"


@dataclass(frozen=True)
class FeatureSpec:
    stage: Stage
    default: bool
    since: str


FEATURES: Mapping[Feature, FeatureSpec] = MappingProxyType(
    {
        Feature.DISABLE_RESYNC_ON_SDK_SERVER: FeatureSpec(Stage.STABLE, True, "1.49.0"),
        Feature.AUTOPILOT_PASSTHROUGH_PORT: FeatureSpec(Stage.STABLE, True, "1.54.0"),
        Feature.COUNTS_AND_LISTS: FeatureSpec(Stage.BETA, True, "1.41.0"),
        Feature.GKE_AUTOPILOT_EXTENDED_DURATION_PODS: FeatureSpec(Stage.BETA, True, "1.44.0"),
        Feature.PORT_POLICY_NONE: FeatureSpec(Stage.BETA, True, "1.49.0"),
        Feature.PORT_RANGES: FeatureSpec(Stage.BETA, True, "1.49.0"),
        Feature.ROLLING_UPDATE_FIX: FeatureSpec(Stage.BETA, True, "1.50.0"),
        Feature.SCHEDULED_AUTOSCALER: FeatureSpec(Stage.BETA, True, "1.51.0"),
        Feature.FLEET_AUTOSCALE_REQUEST_META_DATA: FeatureSpec(Stage.BETA, True, "1.54.0"),
        Feature.SIDECAR_CONTAINERS: FeatureSpec(Stage.BETA, True, "1.56.0"),
        Feature.PLAYER_ALLOCATION_FILTER: FeatureSpec(Stage.ALPHA, False, "1.14.0"),
        Feature.PLAYER_TRACKING: FeatureSpec(Stage.ALPHA, False, "1.6.0"),
        Feature.WASM_AUTOSCALER: FeatureSpec(Stage.ALPHA, False, "1.54.0"),
        Feature.PROCESSOR_ALLOCATOR: FeatureSpec(Stage.DEV, False, ""),
        Feature.EXAMPLE: FeatureSpec(Stage.NONE, False, "0.13.0"),
    }
)

# Go's strconv.ParseBool, which Agones uses for each gate's value.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(text: str) -> bool:
    """Parse a boolean the way Go's `strconv.ParseBool` does; `ValueError` otherwise."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


class FeatureGates:
    """An immutable set of gate values: the defaults overlaid with what was given."""

    __slots__ = ("_values",)

    def __init__(self, overrides: Mapping[Feature, bool] | None = None) -> None:
        values = {f: spec.default for f, spec in FEATURES.items()}
        values.update(overrides or {})
        self._values: Mapping[Feature, bool] = MappingProxyType(values)

    @classmethod
    def parse(cls, query: str) -> FeatureGates:
        """Parse `A=true&B=false`; a repeated name keeps its first value (Go's `Values.Get`)."""
        overrides: dict[Feature, bool] = {}
        seen: set[str] = set()
        if ";" in query:
            raise ValueError(
                "error parsing query string for feature gates: invalid semicolon separator in query"
            )
        pairs = parse_qsl(query, keep_blank_values=True)
        for name, value in pairs:
            if name in seen:
                continue
            seen.add(name)
            try:
                feature = Feature(name)
            except ValueError:
                raise ValueError(f'Feature Gate "{name}" is not a valid Feature Gate') from None
            try:
                overrides[feature] = parse_bool(value)
            except ValueError as err:
                raise ValueError(f"error parsing bool value from flag {name} : {err}") from err
        return cls(overrides)

    @classmethod
    def all_enabled(cls) -> FeatureGates:
        return cls(dict.fromkeys(FEATURES, True))

    def enabled(self, feature: Feature) -> bool:
        return self._values[feature]

    def with_values(self, **changes: bool) -> FeatureGates:
        """A copy with gates changed by Agones name: `gates.with_values(PlayerTracking=True)`."""
        overrides = dict(self._values)
        for name, value in changes.items():
            overrides[Feature(name)] = value
        return FeatureGates(overrides)

    def encode(self) -> str:
        """The whole set as a query string, names sorted (Go's url.Values.Encode sorts too)."""
        return urlencode(
            sorted((f.value, "true" if v else "false") for f, v in self._values.items())
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FeatureGates) and dict(self._values) == dict(other._values)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __repr__(self) -> str:
        return f"FeatureGates({self.encode()})"


DEFAULT_GATES = FeatureGates()
