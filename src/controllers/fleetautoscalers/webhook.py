"""The Webhook policy (Go `applyWebhookPolicy`): ask a service for the Fleet's size.

The controller POSTs a `FleetAutoscaleReview` (the Fleet's name, namespace and status, and with the
FleetAutoscaleRequestMetaData gate its labels and annotations) as JSON to the policy's `url`, or to
`http(s)://<service>.<namespace>.svc:<port, 8000><path>`; https when `caBundle` is set, verified
against that bundle only. The answer must be HTTP 200 with a review whose `response` says
`scale: true` and `replicas` (an int32 ≥ 0) — then that is the size — or `scale: false`, which
keeps the Fleet's current `status.replicas`. The client gives up after 15 s.

Every failure is a `PolicyError` with a one-line message, never an exception of another kind:
unreachable server (`Post "<url>": <reason>`), a status other than 200
(`bad status code <n> from the server: <url>`), a body that is not such a review (bad JSON, wrong
types, no `response`, replicas out of range), or an oversized body (> 4 MiB). Go would panic on a
review without `response`; this port reports it instead.

A `url` with the `python:` scheme names an in-process policy (see `inprocess`) and makes no request.
The pure parts (`build_url_from_webhook_policy`, `scale_from_response`) are table-tested.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ssl
from dataclasses import dataclass

import aiohttp
import msgspec

from ...apis.agones.v1.fleet import Fleet
from ...apis.autoscaling.v1 import (
    FleetAutoscaleResponse,
    FleetAutoscaleReview,
    ServiceReference,
    URLConfiguration,
)
from ...apis.autoscaling.v1.validation import append_certs_from_pem
from .policy import INT32_MAX, PolicyError, Scale
from .status import fleet_status

WEBHOOK_TIMEOUT = 15.0
DEFAULT_SERVICE_PORT = 8000
MAX_RESPONSE_BYTES = 4 << 20

_review_decoder = msgspec.json.Decoder(FleetAutoscaleReview)
_encoder = msgspec.json.Encoder()


@dataclass(frozen=True)
class Target:
    """Where a review goes: the URL, and the CA bundle (PEM) to verify it with, if https."""

    url: str
    ca_bundle: bytes | None = None


def _ca_bundle(w: URLConfiguration) -> bytes | None:
    if not isinstance(w.ca_bundle, str):
        return None
    try:
        bundle = base64.b64decode(w.ca_bundle, validate=True)
    except (binascii.Error, ValueError):
        bundle = w.ca_bundle.encode()
    if not append_certs_from_pem(bundle):
        raise PolicyError("no certs were appended from caBundle")
    return bundle


def _check_request_uri(url: str) -> str:
    """Go's `url.ParseRequestURI` acceptance: an absolute URL or an absolute path."""
    scheme, sep, rest = url.partition(":")
    absolute = bool(sep) and scheme.isascii() and scheme[:1].isalpha() and rest != ""
    if not (absolute or url.startswith("/")) or any(ord(c) < 0x20 for c in url):
        raise PolicyError(f'parse "{url}": invalid URI for request')
    return url


def create_url(scheme: str, service: ServiceReference) -> str:
    """`<scheme>://<name>.<namespace>.svc:<port><path>` (port 8000, namespace default)."""
    name = service.name if isinstance(service.name, str) else ""
    namespace = (
        service.namespace if isinstance(service.namespace, str) and service.namespace else "default"
    )
    port = service.port if isinstance(service.port, int) else DEFAULT_SERVICE_PORT
    path = service.path if isinstance(service.path, str) else ""
    if path and not path.startswith("/"):
        path = "/" + path
    return f"{scheme}://{name}.{namespace}.svc:{port}{path}"


def build_url_from_webhook_policy(w: URLConfiguration | None) -> Target:
    """The URL to POST to and the CA bundle to trust (Go `buildURLFromWebhookPolicy`)."""
    if not isinstance(w, URLConfiguration):
        raise PolicyError("webhookPolicy parameter must not be nil")
    has_url = isinstance(w.url, str)
    service = w.service if isinstance(w.service, ServiceReference) else None
    if has_url and service is not None:
        raise PolicyError("service and URL cannot be used simultaneously")
    bundle = _ca_bundle(w)
    if isinstance(w.url, str):
        if w.url == "":
            raise PolicyError("URL was not provided")
        return Target(_check_request_uri(w.url), bundle)
    if service is None:
        raise PolicyError("service was not provided, either URL or Service must be provided")
    if not service.name:
        raise PolicyError("service name was not provided")
    return Target(create_url("https" if bundle is not None else "http", service), bundle)


def scale_from_review(review: FleetAutoscaleReview, fleet: Fleet) -> Scale:
    """The size a decoded review asks for: `response.replicas` when `scale`, else status.replicas."""
    response = review.response
    if not isinstance(response, FleetAutoscaleResponse):
        raise PolicyError("the FleetAutoscaleReview returned has no response")
    if response.scale is True:
        replicas = response.replicas if isinstance(response.replicas, int) else 0
        if not 0 <= replicas <= INT32_MAX:
            raise PolicyError(
                f"the FleetAutoscaleReview response asks for {replicas} replicas, "
                f"outside [0, {INT32_MAX}]"
            )
        return Scale(replicas, False)
    return Scale(fleet_status(fleet).replicas, False)


def scale_from_response(body: bytes, fleet: Fleet) -> Scale:
    """Decode a webhook's answer and read the size from it (any malformed body → PolicyError)."""
    try:
        review = _review_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as err:
        raise PolicyError(f"invalid FleetAutoscaleReview from the webhook: {err}") from None
    return scale_from_review(review, fleet)


def encode_review(review: FleetAutoscaleReview) -> bytes:
    return _encoder.encode(review)


class WebhookClient:
    """POSTs reviews over one aiohttp session; an SSL context per distinct CA bundle."""

    def __init__(self, timeout: float = WEBHOOK_TIMEOUT) -> None:
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[bytes, ssl.SSLContext] = {}

    def _context(self, bundle: bytes) -> ssl.SSLContext:
        ctx = self._contexts.get(bundle)
        if ctx is None:
            ctx = ssl.create_default_context(cadata=bundle.decode("ascii", "replace"))
            self._contexts[bundle] = ctx
        return ctx

    async def post(self, target: Target, body: bytes) -> bytes:
        """The body of a 200 answer; PolicyError for anything else."""
        session = self._ensure_session()
        try:
            async with session.post(
                target.url,
                data=body,
                headers={"Content-Type": "application/json"},
                ssl=self._ssl(target),
            ) as resp:
                if resp.status != 200:
                    raise PolicyError(
                        f"bad status code {resp.status} from the server: {target.url}"
                    )
                data = await resp.content.read(MAX_RESPONSE_BYTES + 1)
        except TimeoutError:
            raise PolicyError(
                f'Post "{target.url}": no answer within {self.timeout:g}s (Client.Timeout exceeded)'
            ) from None
        except (aiohttp.ClientError, ssl.SSLError, OSError, ValueError) as err:
            raise PolicyError(f'Post "{target.url}": {str(err) or type(err).__name__}') from None
        if len(data) > MAX_RESPONSE_BYTES:
            raise PolicyError(f"the webhook's answer is larger than {MAX_RESPONSE_BYTES} bytes")
        return data

    async def get(self, target: Target, limit: int) -> bytes:
        """The body of a 200 answer to a GET (at most `limit` bytes); PolicyError otherwise."""
        session = self._ensure_session()
        try:
            async with session.get(target.url, ssl=self._ssl(target)) as resp:
                if resp.status != 200:
                    raise PolicyError(
                        f"bad status code {resp.status} from the server: {target.url}"
                    )
                data = await resp.content.read(limit + 1)
        except TimeoutError:
            raise PolicyError(f'Get "{target.url}": no answer within {self.timeout:g}s') from None
        except (aiohttp.ClientError, ssl.SSLError, OSError, ValueError) as err:
            raise PolicyError(f'Get "{target.url}": {str(err) or type(err).__name__}') from None
        if len(data) > limit:
            raise PolicyError(f"{target.url} is larger than {limit} bytes")
        return data

    def _ensure_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self._session

    def _ssl(self, target: Target) -> ssl.SSLContext | bool:
        return self._context(target.ca_bundle) if target.ca_bundle is not None else True

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            await asyncio.sleep(0)
