"""API errors as kube-apiserver reports them: a `Status` object with reason, code and details.

Handlers raise `StatusError`; the server turns it into the JSON body and HTTP code. The constructors
mirror apimachinery's `k8s.io/apimachinery/pkg/api/errors` (`NewNotFound`, `NewConflict`, ...), with
the same message wording, so clients that match on reason or message behave as on a real cluster.
"""

from __future__ import annotations

from typing import Any

from ...apis.field import FieldError, aggregate_message


class StatusError(Exception):
    """An API failure carrying the `Status` a kube-apiserver would return."""

    def __init__(
        self, code: int, reason: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def qualified(resource: str, group: str) -> str:
    """`pods` for the core group, `gameservers.agones.dev` otherwise (Go's GroupResource.String)."""
    return f"{resource}.{group}" if group else resource


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    return details


def not_found(group: str, resource: str, name: str) -> StatusError:
    return StatusError(
        404,
        "NotFound",
        f'{qualified(resource, group)} "{name}" not found',
        _details(name, group, resource),
    )


def already_exists(group: str, resource: str, name: str) -> StatusError:
    return StatusError(
        409,
        "AlreadyExists",
        f'{qualified(resource, group)} "{name}" already exists',
        _details(name, group, resource),
    )


def conflict(group: str, resource: str, name: str, why: str) -> StatusError:
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
        _details(name, group, resource),
    )


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(group: str, kind: str, name: str, errors: list[FieldError]) -> StatusError:
    details = _details(name, group, kind)
    details["causes"] = [e.to_cause() for e in errors]
    return StatusError(422, "Invalid", aggregate_message(kind, group, name, errors), details)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(group: str, resource: str, name: str, why: str) -> StatusError:
    what = qualified(resource, group)
    subject = f'{what} "{name}"' if name else what
    return StatusError(
        403, "Forbidden", f"{subject} is forbidden: {why}", _details(name, group, resource)
    )


def method_not_supported(group: str, resource: str, verb: str) -> StatusError:
    return StatusError(
        405,
        "MethodNotAllowed",
        f'{verb} is not supported on resources of kind "{qualified(resource, group)}"',
        _details("", group, resource),
    )


def gone(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def too_many_requests(message: str = "Too many requests, please try again later.") -> StatusError:
    return StatusError(429, "TooManyRequests", message, {"retryAfterSeconds": 1})


def internal(message: str) -> StatusError:
    return StatusError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        {"causes": [{"message": message}]},
    )


def unsupported_media_type(content_type: str) -> StatusError:
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format: {content_type}",
    )


def not_acceptable(accept: str) -> StatusError:
    return StatusError(
        406, "NotAcceptable", f"only the following media types are accepted: {accept}"
    )


def timeout(message: str) -> StatusError:
    return StatusError(504, "Timeout", message)


def too_large_resource_version(rv: int, current: int) -> StatusError:
    """A read newer than anything stored: the 504 whose ResourceVersionTooLarge cause client-go's
    reflector recognises (storage.NewTooLargeResourceVersionError, retry after 1 s)."""
    return StatusError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {rv}, current: {current}",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )
