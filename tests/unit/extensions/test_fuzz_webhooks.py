"""Property: Agones' admission webhooks answer every AdmissionReview, however malformed its
object, with a well-formed review (allowed, or denied with a 4xx Status) and a patch that applies;
they never raise and never change the object they were given. Over HTTP, any body gets 200 or 400
and the server logs no traceback.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import http.client
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from agones.extensions.server import WebhookServer
from agones.extensions.webhooks import ROUTES, review
from agones.featuregates import DEFAULT_GATES, FeatureGates
from agones.jsonpatch import PatchError
from agones.jsonpatch import apply_patch as apply_json_patch
from tests.fuzzing import (
    REQUIRED_PER_SURFACE,
    LogRecorder,
    count,
    examples,
    json_values,
    mutated,
    texts,
)

ORACLE = Path(__file__).parents[2] / "fixtures" / "agones-oracle" / "valid"
VALID = [json.loads(p.read_text())["input"] for p in sorted(ORACLE.glob("*.json"))]
KINDS = sorted({(r.group, r.kind) for r in ROUTES})
GATES = [DEFAULT_GATES, FeatureGates.parse("AutopilotPassthroughPort=true&PlayerTracking=true")]


# Strategies built once (one built inside each draw is validated again every time).
PATHS = st.sampled_from(["/mutate", "/validate"])
KIND = st.sampled_from(KINDS)
SAME_KIND = {
    kind: st.sampled_from([v for v in VALID if v.get("kind") == kind] or VALID) for _, kind in KINDS
}
OPERATIONS = st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT", ""])


@st.composite
def reviews(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    path = draw(PATHS)
    group, kind = draw(KIND)
    valid = draw(SAME_KIND[kind])
    obj = draw(json_values) if draw(st.integers(0, 2)) == 2 else draw(mutated(valid))
    operation = draw(OPERATIONS)
    request: dict[str, Any] = {
        "uid": draw(texts) if draw(st.booleans()) else "u1",
        "kind": {"group": group, "version": "v1", "kind": kind},
        "operation": operation,
        "object": obj,
    }
    if operation == "UPDATE":
        request["oldObject"] = draw(mutated(valid)) if draw(st.booleans()) else valid
    if draw(st.integers(0, 9)) == 0:
        request["kind"] = draw(json_values)
    return path, {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": request,
    }


def _check_answer(body: dict[str, Any], answer: dict[str, Any]) -> None:
    response = answer["response"]
    assert response["uid"] == str(body["request"].get("uid", ""))
    assert isinstance(response["allowed"], bool)
    if not response["allowed"]:
        status = response["status"]
        assert 400 <= status["code"] < 500, status
        assert status["message"], status
    if "patch" in response:
        assert response["patchType"] == "JSONPatch"
        ops = json.loads(base64.b64decode(response["patch"]))
        try:
            patched = apply_json_patch(body["request"]["object"], ops)
        except PatchError as err:
            raise AssertionError(f"the webhook's patch does not apply: {err}: {ops}") from None
        assert isinstance(patched, dict)


REVIEWS_PER_EXAMPLE = 3
"""ci: 3,500 examples of 3 reviews each, 10,500 reviews (the webhook is a pure function)."""
SURFACE = "webhooks"


def test_every_review_gets_a_well_formed_answer() -> None:
    answered = 0

    @settings(max_examples=examples(3500))
    @given(
        cases=st.lists(reviews(), min_size=REVIEWS_PER_EXAMPLE, max_size=REVIEWS_PER_EXAMPLE),
        gates=st.sampled_from(GATES),
    )
    def run(cases: list[tuple[str, dict[str, Any]]], gates: FeatureGates) -> None:
        nonlocal answered
        for path, body in cases:
            before = copy.deepcopy(body)
            answered += 1
            count(SURFACE)
            if not isinstance(body["request"]["kind"], dict):
                continue  # refused as not a review: covered over HTTP below
            answer = review(path, body, gates)
            _check_answer(body, answer)
            assert body == before, "the webhook changed the object it was given"

    run()
    assert answered >= examples(REQUIRED_PER_SURFACE)


class ThreadedWebhooks:
    """A WebhookServer (plain HTTP) on its own loop in a thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = WebhookServer(DEFAULT_GATES, None, CollectorRegistry())
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> int:
        self.thread.start()
        start = self.server.start("127.0.0.1", 0)
        asyncio.run_coroutine_threadsafe(start, self.loop).result(10)
        assert self.server.port is not None
        return self.server.port

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def webhooks() -> Iterator[tuple[http.client.HTTPConnection, LogRecorder]]:
    recorder = LogRecorder()
    loggers = [logging.getLogger(n) for n in ("agones", "aiohttp")]
    for logger in loggers:
        logger.addHandler(recorder)
    with ThreadedWebhooks() as port:
        yield http.client.HTTPConnection("127.0.0.1", port, timeout=30), recorder
    for logger in loggers:
        logger.removeHandler(recorder)


@settings(max_examples=examples(1000))
@given(
    path=st.sampled_from(["/mutate", "/validate"]),
    body=st.one_of(
        reviews().map(lambda c: json.dumps(c[1]).encode()),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=64),
    ),
)
def test_any_body_over_http_is_answered_200_or_400(
    webhooks: tuple[http.client.HTTPConnection, LogRecorder], path: str, body: bytes
) -> None:
    conn, recorder = webhooks
    recorder.records.clear()
    count(SURFACE)
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    assert resp.status in (200, 400), (path, body, resp.status, raw)
    if resp.status == 200:
        answer = json.loads(raw)
        assert answer["kind"] == "AdmissionReview"
        assert isinstance(answer["response"]["allowed"], bool)
    assert [r for r in recorder.records if r.exc_info] == [], recorder.problems()
