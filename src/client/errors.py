"""API errors as typed exceptions carrying the server's Status (apimachinery `api/errors`).

`error_from_response(code, body, headers)` builds the most specific class for a failed response:
NotFound 404, AlreadyExists / Conflict 409, Gone 410 (Expired when the reason says so), Invalid 422,
TooManyRequests 429 (with `retry_after` seconds from the header or Status details), Unauthorized 401,
Forbidden 403, BadRequest 400, ServerTimeout 504, InternalError 5xx. Every error keeps `status`
(the decoded Status dict, synthesised when the body was not one), `reason` and `message`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class ApiError(Exception):
    status_code: int = 0

    def __init__(self, status_code: int, status: dict[str, Any], retry_after: float | None = None):
        self.status_code = status_code
        self.status = status
        self.reason: str = status.get("reason") or ""
        self.message: str = status.get("message") or ""
        self.retry_after = retry_after
        super().__init__(f"{status_code} {self.reason}: {self.message}")


class BadRequestError(ApiError):
    pass


class UnauthorizedError(ApiError):
    pass


class ForbiddenError(ApiError):
    pass


class NotFoundError(ApiError):
    pass


class ConflictError(ApiError):
    pass


class AlreadyExistsError(ConflictError):
    pass


class GoneError(ApiError):
    """410: the requested resourceVersion is too old (reason Expired or Gone)."""


class ExpiredError(GoneError):
    pass


class InvalidError(ApiError):
    pass


class TooManyRequestsError(ApiError):
    pass


class InternalError(ApiError):
    pass


class ServerTimeoutError(ApiError):
    pass


_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    422: InvalidError,
    429: TooManyRequestsError,
    504: ServerTimeoutError,
}


def _retry_after(headers: Mapping[str, str], status: Mapping[str, Any]) -> float | None:
    value = headers.get("Retry-After")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            return None
    details = status.get("details") or {}
    seconds = details.get("retryAfterSeconds") if isinstance(details, Mapping) else None
    return float(seconds) if isinstance(seconds, int | float) else None


def error_from_status(
    status_code: int, status: dict[str, Any], headers: Mapping[str, str] | None = None
) -> ApiError:
    reason = status.get("reason") or ""
    cls = _BY_CODE.get(status_code)
    if cls is None:
        cls = InternalError if status_code >= 500 else ApiError
    if status_code == 409 and reason == "AlreadyExists":
        cls = AlreadyExistsError
    if status_code == 410 and reason == "Expired":
        cls = ExpiredError
    return cls(status_code, status, _retry_after(headers or {}, status))


def error_from_response(
    status_code: int, body: bytes, headers: Mapping[str, str] | None = None
) -> ApiError:
    status: dict[str, Any]
    try:
        decoded = json.loads(body) if body else None
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status":
        status = decoded
    else:
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "code": status_code,
            "message": body.decode("utf-8", "replace")[:1024],
        }
    return error_from_status(status_code, status, headers)


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, NotFoundError)


def is_conflict(err: BaseException) -> bool:
    """apimachinery's `IsConflict`: a 409 Conflict; AlreadyExists, the other 409, is not one."""
    return isinstance(err, ConflictError) and not isinstance(err, AlreadyExistsError)


def is_already_exists(err: BaseException) -> bool:
    return isinstance(err, AlreadyExistsError)


def is_gone(err: BaseException) -> bool:
    return isinstance(err, GoneError)


def is_too_many_requests(err: BaseException) -> bool:
    return isinstance(err, TooManyRequestsError)
