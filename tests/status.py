"""A failure `Status` as the Kubernetes API server sends it, for the tests' fake servers."""

from __future__ import annotations

from typing import Any


def failure_status(code: int, reason: str, message: str = "") -> dict[str, Any]:
    """A metav1.Status with status Failure; the message defaults to the reason."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message or reason,
    }
