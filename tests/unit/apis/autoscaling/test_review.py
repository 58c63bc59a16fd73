import msgspec

from agones.apis.autoscaling.v1 import (
    FleetAutoscaleRequest,
    FleetAutoscaleResponse,
    FleetAutoscaleReview,
)
from agones.apis.meta import schema


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
