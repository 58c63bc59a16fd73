"""Agones' admission webhooks as pure functions over AdmissionReview v1 JSON (`pkg/util/webhooks`).

`review(path, body, gates)` answers one AdmissionReview for `/mutate` or `/validate` and never
raises: what it cannot handle is allowed (as Agones' webhook does for a kind/operation it has no
handler for). Routes follow Agones (reference §4.8):

| path        | kind                         | operations     | action                      |
|-------------|------------------------------|----------------|-----------------------------|
| `/mutate`   | GameServer, Fleet            | CREATE         | apply defaults (JSON patch) |
| `/mutate`   | FleetAutoscaler              | CREATE, UPDATE | apply defaults              |
| `/mutate`   | Pod (AutopilotPassthroughPort)| CREATE        | Passthrough containerPort   |
| `/validate` | GameServer                   | CREATE         | validate                    |
| `/validate` | Fleet, GameServerSet, FleetAutoscaler | CREATE, UPDATE | validate (+ update rules) |

Kinds are looked up in the API scheme at request time, so a kind registered later (e.g.
FleetAutoscaler) is served without changes here; an unregistered kind is allowed with a warning.
`/mutate` reads the object as Agones' Go webhook does, through the decoder `agones validate` uses
(`Scheme.decode_for_mutation`): Go's enums are string types, so `""` in an enum is unset and gets
defaulted (the zero values Go clients send for unset fields, `status.state: ""`, are accepted) and
a string outside the enum is kept and copied on by the defaults (`spec.eviction` → `status.eviction`),
for the schema to reject in both places. A mutation whose object cannot be decoded (a value of the
wrong JSON type) is allowed unchanged (schema validation then reports it).
A denial carries the Status Agones builds: `422 Invalid` with `<Kind>.<group> "<name>" is invalid:
...` and one cause per field error; the kube-apiserver, not this code, prefixes
`admission webhook "validations.agones.dev" denied the request: `. An object that decodes for
neither defaults nor validation gets Agones' handler error: `400 InternalError`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import msgspec

from ..apis.field import FieldError, aggregate_message
from ..apis.scheme import DecodeError, Kind, Scheme, UnknownKindError, load
from ..featuregates import Feature, FeatureGates
from ..jsonpatch import diff

ADMISSION_API_VERSION = "admission.k8s.io/v1"
PASSTHROUGH_PORT_ASSIGNMENT_ANNOTATION = "agones.dev/container-passthrough-port-assignment"

CREATE = "CREATE"
UPDATE = "UPDATE"


@dataclass(frozen=True)
class Route:
    path: str
    group: str
    kind: str
    operations: frozenset[str]


ROUTES: tuple[Route, ...] = (
    Route("/mutate", "agones.dev", "GameServer", frozenset({CREATE})),
    Route("/mutate", "agones.dev", "Fleet", frozenset({CREATE})),
    Route("/mutate", "autoscaling.agones.dev", "FleetAutoscaler", frozenset({CREATE, UPDATE})),
    Route("/mutate", "", "Pod", frozenset({CREATE})),
    Route("/validate", "agones.dev", "GameServer", frozenset({CREATE})),
    Route("/validate", "agones.dev", "Fleet", frozenset({CREATE, UPDATE})),
    Route("/validate", "agones.dev", "GameServerSet", frozenset({CREATE, UPDATE})),
    Route("/validate", "autoscaling.agones.dev", "FleetAutoscaler", frozenset({CREATE, UPDATE})),
)


class ReviewError(ValueError):
    """The request body is not an AdmissionReview (the HTTP layer answers 400)."""


def _route(path: str, group: str, kind: str, operation: str) -> Route | None:
    for r in ROUTES:
        if r.path == path and r.group == group and r.kind == kind and operation in r.operations:
            return r
    return None


def _response(uid: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": "AdmissionReview",
        "response": {"uid": uid, "allowed": True, **fields},
    }


def _patched(uid: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
    if not ops:
        return _response(uid)
    patch = base64.b64encode(json.dumps(ops, separators=(",", ":")).encode()).decode()
    return _response(uid, patchType="JSONPatch", patch=patch)


def invalid_status(group: str, kind: str, name: str, errors: list[FieldError]) -> dict[str, Any]:
    """The Status of `k8serrors.NewInvalid(kind, name, errs)`."""
    details: dict[str, Any] = {"group": group, "kind": kind}
    if name:
        details["name"] = name
    details["causes"] = [e.to_cause() for e in errors]
    return {
        "metadata": {},
        "status": "Failure",
        "message": aggregate_message(kind, group, name, errors),
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }


def internal_error_status(group: str, kind: str, name: str, message: str) -> dict[str, Any]:
    """What Agones' webhook framework answers when a handler fails."""
    details: dict[str, Any] = {"group": group, "kind": kind}
    if name:
        details["name"] = name
    details["causes"] = [{"reason": "InternalError", "message": message}]
    return {
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "InternalError",
        "details": details,
        "code": 400,
    }


def _denied(uid: str, status: dict[str, Any]) -> dict[str, Any]:
    out = _response(uid, status=status)
    out["response"]["allowed"] = False
    return out


def _mutate_pod(uid: str, pod: Any) -> dict[str, Any]:
    """Passthrough on GKE Autopilot: containerPort = hostPort for the assigned port indices."""
    if not isinstance(pod, dict):
        return _response(uid)
    metadata = pod.get("metadata") or {}
    annotations = metadata.get("annotations") or {} if isinstance(metadata, dict) else None
    if not isinstance(annotations, dict):
        # Go's decoding of the Pod fails: the handler's error, as for any undecodable object.
        return _denied(
            uid,
            internal_error_status("", "Pod", "", "error unmarshalling Pod json: bad metadata"),
        )
    assignment = annotations.get(PASSTHROUGH_PORT_ASSIGNMENT_ANNOTATION)
    if assignment is None:
        return _response(uid)
    try:
        indices = json.loads(assignment)
        new = json.loads(json.dumps(pod))
        for container in (new.get("spec") or {}).get("containers") or []:
            for i in indices.get(container.get("name"), []):
                port = container["ports"][i]
                port["containerPort"] = port.get("hostPort")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as err:
        return _denied(
            uid,
            internal_error_status(
                "", "Pod", "", f"could not unmarshal annotation {assignment!r}: {err}"
            ),
        )
    return _patched(uid, diff(pod, new))


def _decode(scheme: Scheme, kind: Kind[Any], raw: Any) -> Any:
    return scheme.decode_as(kind.type, raw)


def _mutate(scheme: Scheme, kind: Kind[Any], uid: str, raw: Any, gates: FeatureGates) -> Any:
    try:
        obj = scheme.decode_for_mutation(kind, raw)
    except DecodeError:
        return _response(uid)  # fall through: the schema validation reports it better
    before = scheme.encode(obj)
    scheme.apply_defaults(obj, gates)
    return _patched(uid, diff(before, scheme.encode(obj)))


def _validate(
    scheme: Scheme,
    kind: Kind[Any],
    request: dict[str, Any],
    gates: FeatureGates,
) -> dict[str, Any]:
    uid = str(request.get("uid", ""))
    name = str(request.get("name") or "")
    raw = request.get("object")
    try:
        obj = _decode(scheme, kind, raw)
        old = None
        if request.get("operation") == UPDATE and request.get("oldObject") is not None:
            old = _decode(scheme, kind, request["oldObject"])
    except DecodeError as err:
        text = json.dumps(raw, separators=(",", ":"))
        message = f"error unmarshalling {kind.kind} json after schema validation: {text}: {err}"
        return _denied(uid, internal_error_status(kind.group, kind.kind, name, message))
    if not name and obj.metadata is not msgspec.UNSET:
        name = obj.metadata.get_name()
    errors = scheme.validate(obj, gates) if old is None else scheme.validate_update(old, obj, gates)
    if not errors:
        return _response(uid)
    return _denied(uid, invalid_status(kind.group, kind.kind, name, errors))


def review(
    path: str, body: Any, gates: FeatureGates, scheme: Scheme | None = None
) -> dict[str, Any]:
    """Answer one AdmissionReview; `ReviewError` if `body` is not one."""
    scheme = scheme or load()
    if not isinstance(body, dict) or not isinstance(body.get("request"), dict):
        raise ReviewError("the body is not an AdmissionReview with a request")
    request: dict[str, Any] = body["request"]
    uid = str(request.get("uid", ""))
    gvk = request.get("kind") or {}
    if not isinstance(gvk, dict):
        raise ReviewError("request.kind is not a group/version/kind object")
    group, version, kind_name = (str(gvk.get(k, "")) for k in ("group", "version", "kind"))
    operation = str(request.get("operation", ""))
    route = _route(path, group, kind_name, operation)
    if route is None:
        return _response(uid)
    if route.kind == "Pod":
        if not gates.enabled(Feature.AUTOPILOT_PASSTHROUGH_PORT):
            return _response(uid)
        return _mutate_pod(uid, request.get("object"))
    api_version = f"{group}/{version}" if group else version
    try:
        kind = scheme.lookup(api_version, kind_name)
    except UnknownKindError:
        return _response(uid, warnings=[f"{kind_name}.{group} is not known to this webhook"])
    try:
        if path == "/mutate":
            out: dict[str, Any] = _mutate(scheme, kind, uid, request.get("object"), gates)
            return out
        return _validate(scheme, kind, request, gates)
    except Exception as err:  # a bug in a rule must not take the webhook down
        name = str(request.get("name") or "")
        message = f"{type(err).__name__}: {err}"
        return _denied(uid, internal_error_status(group, kind_name, name, message))
