"""Table tests: a bad `eviction.safe` answered as Agones answers it (issue 15 item 5).

Go's `EvictionSafe` is a string type, so Agones' mutating webhook decodes any string, and
`ApplyDefaults` copies `spec.eviction` into `status.eviction` (forced to `Always` by the pod
template's `cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`); the CRD schema then rejects
the value in both places. A value of another JSON type makes Go's decoder fail: the webhook lets the
object through untouched and the schema reports the type and, as kube-openapi runs its enum check
beside the type check, the enum. A Fleet's webhook does not default its template and a
GameServerSet has no mutating webhook: there is no status twin. Each case goes through
`Scheme.admit` (what `agones validate` runs); the messages are compared in order, exactly.
"""

from __future__ import annotations

from typing import Any

import pytest

from agones.apis.scheme import Scheme
from agones.extensions import review
from agones.featuregates import FeatureGates
from agones.jsonpatch import apply_patch
from tests.unit.extensions.test_webhooks import admission, patch_of

from .manifests import fleet, game_server, game_server_set

SUPPORTED = 'supported values: "Always", "OnUpgrade", "Never"'
SAFE_TO_EVICT = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}


def _gs(safe: Any, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    obj = game_server({"eviction": {"safe": safe}})
    if annotations:
        obj["spec"]["template"]["metadata"] = {"annotations": annotations}
    return obj


def _in_template(build: Any, safe: Any) -> dict[str, Any]:
    obj: dict[str, Any] = build()
    obj["spec"]["template"]["spec"]["eviction"] = {"safe": safe}
    return obj


CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "gameserver-enum-status-twin",
        _gs("Sometimes"),
        [
            f'spec.eviction.safe: Unsupported value: "Sometimes": {SUPPORTED}',
            f'status.eviction.safe: Unsupported value: "Sometimes": {SUPPORTED}',
        ],
    ),
    (
        "gameserver-enum-lower-case",
        _gs("always"),
        [
            f'spec.eviction.safe: Unsupported value: "always": {SUPPORTED}',
            f'status.eviction.safe: Unsupported value: "always": {SUPPORTED}',
        ],
    ),
    (
        "gameserver-enum-status-forced-always",
        _gs("Sometimes", SAFE_TO_EVICT),
        [f'spec.eviction.safe: Unsupported value: "Sometimes": {SUPPORTED}'],
    ),
    (
        "gameserver-integer",
        _gs(5),
        [
            'spec.eviction.safe: Invalid value: "integer": spec.eviction.safe in body must be '
            'of type string: "integer"',
            f"spec.eviction.safe: Unsupported value: 5: {SUPPORTED}",
        ],
    ),
    (
        "gameserver-boolean",
        _gs(True),
        [
            'spec.eviction.safe: Invalid value: "boolean": spec.eviction.safe in body must be '
            'of type string: "boolean"',
            f"spec.eviction.safe: Unsupported value: true: {SUPPORTED}",
        ],
    ),
    (
        "gameserver-array",
        _gs(["Always"]),
        [
            'spec.eviction.safe: Invalid value: "array": spec.eviction.safe in body must be '
            'of type string: "array"',
            'spec.eviction.safe: Unsupported value: []interface {}{"Always"}: ' + SUPPORTED,
        ],
    ),
    (
        "gameserver-eviction-not-an-object",
        game_server({"eviction": "Always"}),
        [
            'spec.eviction: Invalid value: "string": spec.eviction in body must be of type '
            'object: "string"'
        ],
    ),
    (
        "fleet-template-enum-no-twin",
        _in_template(fleet, "Sometimes"),
        [f'spec.template.spec.eviction.safe: Unsupported value: "Sometimes": {SUPPORTED}'],
    ),
    (
        "fleet-template-integer",
        _in_template(fleet, 1),
        [
            'spec.template.spec.eviction.safe: Invalid value: "integer": '
            'spec.template.spec.eviction.safe in body must be of type string: "integer"',
            f"spec.template.spec.eviction.safe: Unsupported value: 1: {SUPPORTED}",
        ],
    ),
    (
        "gameserverset-template-enum-no-twin",
        _in_template(game_server_set, "Sometimes"),
        [f'spec.template.spec.eviction.safe: Unsupported value: "Sometimes": {SUPPORTED}'],
    ),
]


@pytest.mark.parametrize(("obj", "want"), [pytest.param(o, w, id=i) for i, o, w in CASES])
def test_bad_eviction_safe_is_refused_as_agones_refuses_it(
    scheme: Scheme, obj: dict[str, Any], want: list[str]
) -> None:
    admission_ = scheme.admit(obj, FeatureGates())
    assert [str(e) for e in admission_.errors] == want
    reasons = {e.reason for e in admission_.errors}
    assert reasons <= {"FieldValueNotSupported", "FieldValueTypeInvalid"}


@pytest.mark.parametrize(
    ("safe", "annotations", "status"),
    [
        pytest.param("Sometimes", None, "Sometimes", id="copied-verbatim"),
        pytest.param("Sometimes", SAFE_TO_EVICT, "Always", id="forced-always"),
        pytest.param("", None, "Never", id="empty-is-unset"),
        pytest.param("OnUpgrade", None, "OnUpgrade", id="valid"),
    ],
)
def test_mutating_webhook_copies_eviction_to_status_as_go_does(
    safe: str, annotations: dict[str, str] | None, status: str
) -> None:
    obj = _gs(safe, annotations)
    mutated = apply_patch(obj, patch_of(review("/mutate", admission(obj), FeatureGates())))
    assert mutated["spec"]["eviction"] == {"safe": safe or "Never"}
    assert mutated["status"]["eviction"] == {"safe": status}
    assert mutated["status"]["state"] == "PortAllocation"


def test_mutating_webhook_lets_a_wrong_type_through_untouched() -> None:
    obj = _gs(5)
    answer = review("/mutate", admission(obj), FeatureGates())
    assert answer["response"] == {"uid": "req-1", "allowed": True}
