import msgspec

from agones.apis.agones.v1.fleet import Fleet
from agones.apis.autoscaling.v1 import (
    FleetAutoscaleRequest,
    FleetAutoscaleResponse,
    FleetAutoscaleReview,
)
from agones.apis.autoscaling.v1.review import new_fleet_autoscale_review
from agones.apis.meta import schema
from agones.featuregates import DEFAULT_GATES


def test_request_encodes_as_go_does() -> None:
    review = FleetAutoscaleReview(request=FleetAutoscaleRequest(uid="u1", name="f", namespace="d"))
    schema.go_roundtrip(review)
    assert msgspec.json.decode(msgspec.json.encode(review)) == {
        "request": {
            "uid": "u1",
            "name": "f",
            "namespace": "d",
            "status": {
                "replicas": 0,
                "readyReplicas": 0,
                "reservedReplicas": 0,
                "allocatedReplicas": 0,
            },
        },
        "response": None,
    }


def test_webhook_answer_decodes() -> None:
    body = (
        b'{"request": {"uid": "u1", "name": "f", "namespace": "d", "labels": {"a": "b"},'
        b' "status": {"replicas": 3, "readyReplicas": 1, "reservedReplicas": 0, "allocatedReplicas": 2}},'
        b' "response": {"uid": "u1", "scale": true, "replicas": 5}}'
    )
    review = msgspec.json.decode(body, type=FleetAutoscaleReview)
    assert review.response == FleetAutoscaleResponse(uid="u1", scale=True, replicas=5)
    assert isinstance(review.request, FleetAutoscaleRequest)
    assert review.request.labels == {"a": "b"}
    assert msgspec.json.decode(msgspec.json.encode(review)) == msgspec.json.decode(body)


def _fleet() -> Fleet:
    return msgspec.convert(
        {
            "metadata": {
                "name": "arena",
                "namespace": "games",
                "labels": {"tier": "gold"},
                "annotations": {},
            },
            "spec": {"replicas": 3},
            "status": {
                "replicas": 3,
                "readyReplicas": 1,
                "reservedReplicas": 0,
                "allocatedReplicas": 2,
            },
        },
        Fleet,
    )


def test_new_review_with_metadata_gate() -> None:
    review = new_fleet_autoscale_review(_fleet(), "uid-1", DEFAULT_GATES)
    assert msgspec.json.decode(msgspec.json.encode(review)) == {
        "request": {
            "uid": "uid-1",
            "name": "arena",
            "namespace": "games",
            "status": {
                "replicas": 3,
                "readyReplicas": 1,
                "reservedReplicas": 0,
                "allocatedReplicas": 2,
            },
            "labels": {"tier": "gold"},
        },
        "response": None,
    }


def test_new_review_without_metadata_gate() -> None:
    gates = DEFAULT_GATES.with_values(FleetAutoscaleRequestMetaData=False)
    review = new_fleet_autoscale_review(_fleet(), "uid-2", gates)
    request = msgspec.json.decode(msgspec.json.encode(review))["request"]
    assert "labels" not in request and "annotations" not in request
