"""The `extensions` binary's parts (Agones `cmd/extensions`, `pkg/util/webhooks`): admission webhooks."""

from .configurations import webhook_configurations
from .server import WebhookServer
from .webhooks import ROUTES, ReviewError, review

__all__ = ["ROUTES", "ReviewError", "WebhookServer", "review", "webhook_configurations"]
