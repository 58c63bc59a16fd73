import pytest

from agones.featuregates import FEATURES, Feature, FeatureGates, Stage, parse_bool


def test_defaults_match_agones_1_56() -> None:
    gates = FeatureGates()
    on = {f.value for f in Feature if gates.enabled(f)}
    assert on == {
        "DisableResyncOnSDKServer",
        "AutopilotPassthroughPort",
        "CountsAndLists",
        "GKEAutopilotExtendedDurationPods",
        "PortPolicyNone",
        "PortRanges",
        "RollingUpdateFix",
        "ScheduledAutoscaler",
        "FleetAutoscaleRequestMetaData",
        "SidecarContainers",
    }
    assert FEATURES[Feature.PLAYER_TRACKING].stage is Stage.ALPHA


@pytest.mark.parametrize(
    ("query", "feature", "expected"),
    [
        pytest.param("", Feature.COUNTS_AND_LISTS, True, id="empty-keeps-default"),
        pytest.param("PlayerTracking=true", Feature.PLAYER_TRACKING, True, id="alpha-on"),
        pytest.param("CountsAndLists=false", Feature.COUNTS_AND_LISTS, False, id="beta-off"),
        pytest.param("PlayerTracking=1&Example=t", Feature.EXAMPLE, True, id="go-bool-forms"),
        pytest.param(
            "PlayerTracking=true&PlayerTracking=false",
            Feature.PLAYER_TRACKING,
            True,
            id="first-value-wins",
        ),
    ],
)
def test_parse(query: str, feature: Feature, expected: bool) -> None:
    assert FeatureGates.parse(query).enabled(feature) is expected


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param(
            "NoSuchGate=true",
            'Feature Gate "NoSuchGate" is not a valid Feature Gate',
            id="unknown-name",
        ),
        pytest.param(
            "PlayerTracking=yes", "error parsing bool value from flag PlayerTracking", id="bad-bool"
        ),
        pytest.param("PlayerTracking", "error parsing bool value", id="missing-value"),
    ],
)
def test_parse_rejects(query: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FeatureGates.parse(query)


def test_encode_round_trips() -> None:
    gates = FeatureGates.parse("PlayerTracking=true&SidecarContainers=false")
    assert FeatureGates.parse(gates.encode()) == gates
    assert gates.with_values(PlayerTracking=False).enabled(Feature.PLAYER_TRACKING) is False


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_parse_bool_true(text: str) -> None:
    assert parse_bool(text) is True


@pytest.mark.parametrize("text", ["", "yes", "on", "tRuE"])
def test_parse_bool_invalid(text: str) -> None:
    with pytest.raises(ValueError):
        parse_bool(text)
