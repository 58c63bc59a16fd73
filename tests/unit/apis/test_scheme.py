from typing import Annotated

import msgspec
import pytest
from msgspec import UNSET, UnsetType

from agones.apis.field import FieldError, Path, invalid
from agones.apis.meta.objectmeta import ObjectMeta
from agones.apis.meta.schema import crd
from agones.apis.scheme import DecodeError, Kind, Scheme, UnknownKindError, load
from agones.featuregates import FeatureGates
from tests import gobodies


class WidgetSpec(msgspec.Struct, rename="camel", omit_defaults=True):
    size: Annotated[int, crd(default=3, minimum=1)] | UnsetType = UNSET


class Widget(msgspec.Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: ObjectMeta | UnsetType = UNSET
    spec: WidgetSpec | UnsetType = UNSET


def _validate(obj: Widget, gates: FeatureGates) -> list[FieldError]:
    assert obj.spec is not UNSET and obj.spec.size is not UNSET
    return [invalid(Path("spec", "size"), obj.spec.size, "too big")] if obj.spec.size > 9 else []


@pytest.fixture
def scheme() -> Scheme:
    s = Scheme()
    s.register(Kind("example.dev", "v1", "Widget", "widgets", Widget, _validate))
    return s


def test_decode_encode_round_trip_keeps_presence(scheme: Scheme) -> None:
    data = {
        "apiVersion": "example.dev/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "labels": {}, "generation": 0},
        "spec": {"size": 0},
    }
    obj = scheme.decode(data)
    assert isinstance(obj, Widget)
    assert scheme.encode(obj) == data
    assert scheme.decode_json(Widget, scheme.encode_json(obj)) == obj


def test_decode_errors(scheme: Scheme) -> None:
    with pytest.raises(UnknownKindError):
        scheme.decode({"apiVersion": "example.dev/v1", "kind": "Gadget"})
    with pytest.raises(DecodeError) as err:
        scheme.decode({"kind": "Widget"})
    assert [e.field for e in err.value.errors] == ["apiVersion"]
    with pytest.raises(DecodeError) as err:
        scheme.decode(b"{not json")
    with pytest.raises(DecodeError) as err:
        scheme.decode(b"[1]")


def test_admit_defaults_validates_and_never_raises(scheme: Scheme) -> None:
    ok = scheme.admit({"apiVersion": "example.dev/v1", "kind": "Widget", "spec": {}})
    assert ok.allowed and ok.obj.spec.size == 3
    bad = scheme.admit({"apiVersion": "example.dev/v1", "kind": "Widget", "spec": {"size": 10}})
    assert [str(e) for e in bad.errors] == ["spec.size: Invalid value: 10: too big"]
    garbage = scheme.admit({"apiVersion": "example.dev/v1", "kind": "Widget", "spec": []})
    assert garbage.obj is None and garbage.errors[0].reason == "FieldValueTypeInvalid"
    crashing = scheme.admit({"apiVersion": "example.dev/v1", "kind": "Widget"})  # _validate asserts
    assert crashing.errors[0].reason == "InternalError"


def test_admit_update_applies_schema_defaults_only(scheme: Scheme) -> None:
    applied: list[str] = []
    kind = Kind(
        "example.dev",
        "v1",
        "Widget",
        "widgets",
        Widget,
        _validate,
        apply_defaults=lambda obj, gates: applied.append("webhook"),
    )
    s = Scheme()
    s.register(kind)
    old = s.decode({"apiVersion": "example.dev/v1", "kind": "Widget", "spec": {"size": 5}})
    update = s.admit({"apiVersion": "example.dev/v1", "kind": "Widget", "spec": {}}, old=old)
    assert update.allowed and update.obj.spec.size == 3
    assert applied == []


def test_admit_rejects_non_object_documents_cleanly(scheme: Scheme) -> None:
    for doc in ([1, 2], 3, None):
        admission = scheme.admit(doc)  # type: ignore[arg-type]
        assert admission.obj is None
        assert [e.reason for e in admission.errors] == ["FieldValueInvalid"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(gobodies.game_server("gs"), id="GameServer"),
        pytest.param(gobodies.game_server_set("gss"), id="GameServerSet"),
        pytest.param(gobodies.fleet("fleet"), id="Fleet"),
        pytest.param(gobodies.fleet_autoscaler("fas", "fleet"), id="FleetAutoscaler"),
        pytest.param(
            gobodies.schedule_fleet_autoscaler("s", "fleet"), id="FleetAutoscaler-Schedule"
        ),
        pytest.param(gobodies.chain_fleet_autoscaler("c", "fleet"), id="FleetAutoscaler-Chain"),
        pytest.param(gobodies.game_server_allocation(), id="GameServerAllocation"),
        pytest.param(gobodies.game_server_allocation_policy("p"), id="GameServerAllocationPolicy"),
    ],
)
def test_admit_accepts_every_agones_kind_as_go_encodes_it(body: dict) -> None:
    admission = load().admit(body)
    assert admission.errors == []
    assert admission.obj is not None


def test_go_empty_enums_are_defaulted_by_the_one_mutation_decoder() -> None:
    scheme = load()
    gs = scheme.decode_for_mutation(
        scheme.lookup("agones.dev/v1", "GameServer"), gobodies.game_server("gs")
    )
    scheme.apply_defaults(gs)
    assert scheme.encode(gs)["status"]["state"] == "PortAllocation"
    gsa = scheme.admit(gobodies.game_server_allocation()).obj
    assert scheme.encode(gsa)["spec"]["scheduling"] == "Packed"
