import pytest

from agones.apis import field
from agones.apis.field import GoValue, Path


@pytest.mark.parametrize(
    ("err", "text"),
    [
        pytest.param(
            field.required(Path("spec", "container"), "Container is required"),
            "spec.container: Required value: Container is required",
            id="required",
        ),
        pytest.param(
            field.invalid(Path("spec").child("container"), "", "Could not find"),
            'spec.container: Invalid value: "": Could not find',
            id="invalid-string",
        ),
        pytest.param(
            field.invalid("spec.x", 0, "must be at least 1"),
            "spec.x: Invalid value: 0: must be at least 1",
            id="invalid-int",
        ),
        pytest.param(
            field.invalid("spec.x", None, "bad"),
            "spec.x: Invalid value: null: bad",
            id="invalid-null",
        ),
        pytest.param(
            field.invalid("spec.s", GoValue("intstr.IntOrString{Type:0}"), "bad"),
            "spec.s: Invalid value: intstr.IntOrString{Type:0}: bad",
            id="go-value",
        ),
        pytest.param(
            field.forbidden(Path("spec", "players"), "Value cannot be set"),
            "spec.players: Forbidden: Value cannot be set",
            id="forbidden",
        ),
        pytest.param(
            field.too_long(Path("metadata", "name"), 63),
            "metadata.name: Too long: may not be more than 63 bytes",
            id="too-long",
        ),
        pytest.param(
            field.not_supported(
                Path("spec").child("ports").index(0).child("protocol"),
                "SCTP",
                ["UDP", "TCP", "TCPUDP"],
            ),
            'spec.ports[0].protocol: Unsupported value: "SCTP": supported values: '
            '"UDP", "TCP", "TCPUDP"',
            id="not-supported",
        ),
        pytest.param(
            field.duplicate(Path("spec", "policy").child("webhook", "url"), "x"),
            'spec.policy.webhook.url: Duplicate value: "x"',
            id="duplicate",
        ),
        pytest.param(
            field.invalid(Path("spec", "counters").key("rooms"), "null", "amount"),
            'spec.counters[rooms]: Invalid value: "null": amount',
            id="map-key",
        ),
    ],
)
def test_error_text(err: field.FieldError, text: str) -> None:
    assert str(err) == text


def test_cause_and_aggregate() -> None:
    errs = [
        field.required("spec.container", "Container is required"),
        field.invalid("spec.container", "", "Could not find a container named "),
    ]
    assert errs[0].to_cause() == {
        "reason": "FieldValueRequired",
        "message": "Required value: Container is required",
        "field": "spec.container",
    }
    assert field.aggregate_message("GameServer", "agones.dev", "gs", errs) == (
        'GameServer.agones.dev "gs" is invalid: [spec.container: Required value: Container is '
        'required, spec.container: Invalid value: "": Could not find a container named ]'
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param({}, "map[string]interface {}{}", id="empty-map"),
        pytest.param(
            {"b": 1, "a": "x"}, 'map[string]interface {}{"a":"x", "b":1}', id="map-keys-sorted"
        ),
        pytest.param(
            [1, 1.5, True, None], "[]interface {}{1, 1.5, true, interface {}(nil)}", id="list"
        ),
        pytest.param(
            {"a": [{"b": False}]},
            'map[string]interface {}{"a":[]interface {}{map[string]interface {}{"b":false}}}',
            id="nested",
        ),
        pytest.param("x", '"x"', id="string"),
    ],
)
def test_go_syntax(value: object, text: str) -> None:
    assert field.go_syntax(value) == text
