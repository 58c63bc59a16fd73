"""The `extensions` binary's parts (Agones `cmd/extensions`, `pkg/util/webhooks`): admission webhooks."""

from .server import WebhookServer
from .webhooks import ROUTES, ReviewError, review

__all__ = ["ROUTES", "ReviewError", "WebhookServer", "review"]
