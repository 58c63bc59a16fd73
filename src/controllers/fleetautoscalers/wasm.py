"""The Wasm policy (Agones' alpha `WasmAutoscaler`): a WebAssembly module computes the size.

The module is fetched once from `wasm.from.url` (a URL or a service, with `caBundle` as for
webhooks), checked against `wasm.hash` (sha256, hex) when given, and run with the Extism runtime
(WASI on) with `wasm.config` as the plugin's config. Each sync calls its exported `function`
(default `scale`) with the same FleetAutoscaleReview JSON a webhook gets and reads the answer as a
webhook's (`webhook.scale_from_response`). Modules are cached by (URL, hash, config); a call runs
in a worker thread, one at a time per module, within the webhook timeout. Every failure (fetch,
hash mismatch `hash mismatch for module`, a missing function, a trap, a malformed answer) is a
`PolicyError`. Extism (`extism`, with its native runtime `extism-sys`) is imported on first use.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ...apis.agones.v1.fleet import Fleet
from ...apis.autoscaling.v1 import (
    URLConfiguration,
    WasmFrom,
    WasmPolicy,
    new_fleet_autoscale_review,
)
from ...apis.autoscaling.v1.fleetautoscaler import DEFAULT_WASM_FUNCTION
from . import webhook
from .fleetautoscalers import PolicyInputs
from .policy import PolicyError, Scale

MAX_MODULE_BYTES = 64 << 20
CACHE_SIZE = 32


@dataclass
class _Module:
    plugin: Any
    lock: asyncio.Lock


def _config(wasm: WasmPolicy) -> dict[str, str]:
    return dict(wasm.config) if isinstance(wasm.config, dict) else {}


class WasmPolicyRunner:
    """Fetches, caches and calls Wasm policy modules (the controller's `wasm` hook)."""

    def __init__(self, client: webhook.WebhookClient | None = None) -> None:
        self.client = client or webhook.WebhookClient()
        self._modules: OrderedDict[tuple[str, str, str], _Module] = OrderedDict()

    async def _module(self, wasm: WasmPolicy) -> _Module:
        source = wasm.from_ if isinstance(wasm.from_, WasmFrom) else WasmFrom()
        url = source.url if isinstance(source.url, URLConfiguration) else URLConfiguration()
        target = webhook.build_url_from_webhook_policy(url)
        want = wasm.hash.lower() if isinstance(wasm.hash, str) else ""
        config = _config(wasm)
        key = (target.url, want, json.dumps(config, sort_keys=True))
        cached = self._modules.get(key)
        if cached is not None:
            self._modules.move_to_end(key)
            return cached
        data = await self.client.get(target, MAX_MODULE_BYTES)
        if want and hashlib.sha256(data).hexdigest() != want:
            raise PolicyError(f"hash mismatch for module {target.url}")
        plugin = await asyncio.to_thread(_new_plugin, data, config)
        module = _Module(plugin, asyncio.Lock())
        self._modules[key] = module
        while len(self._modules) > CACHE_SIZE:
            self._modules.popitem(last=False)
        return module

    async def __call__(self, wasm: WasmPolicy, fleet: Fleet, inputs: PolicyInputs) -> Scale:
        module = await self._module(wasm)
        function = wasm.function if isinstance(wasm.function, str) and wasm.function else None
        function = function or DEFAULT_WASM_FUNCTION
        review = new_fleet_autoscale_review(fleet, inputs.new_uid(), inputs.gates)
        body = webhook.encode_review(review)
        async with module.lock:
            try:
                out = await asyncio.wait_for(
                    asyncio.to_thread(_call, module.plugin, function, body),
                    inputs.webhook_timeout,
                )
            except TimeoutError:
                raise PolicyError(
                    f"wasm function {function} gave no answer within {inputs.webhook_timeout:g}s"
                ) from None
        return webhook.scale_from_response(out, fleet)

    def close(self) -> None:
        self._modules.clear()


def _new_plugin(data: bytes, config: dict[str, str]) -> Any:
    try:
        import extism
    except ImportError as err:
        raise PolicyError(f"the Wasm policy needs the extism package: {err}") from None
    try:
        return extism.Plugin({"wasm": [{"data": data}]}, wasi=True, config=config)
    except extism.Error as err:
        raise PolicyError(f"cannot load the wasm module: {err}") from None


def _call(plugin: Any, function: str, body: bytes) -> bytes:
    import extism

    try:
        return bytes(plugin.call(function, body))
    except extism.Error as err:
        raise PolicyError(f"wasm function {function} failed: {err}") from None
