"""Dynamic admission: Mutating and Validating webhook configurations called as kube-apiserver calls
them.

For each write, the webhooks whose rules (operations, apiGroups, apiVersions, resources with
subresources, scope), namespaceSelector and objectSelector match are called over HTTPS with an
`admission.k8s.io/v1` AdmissionReview: mutating webhooks in order (configurations sorted by name),
each seeing the previous one's JSON patch applied, then validating webhooks. A denial becomes the
webhook's Status prefixed with `admission webhook "<name>" denied the request`; a call that fails
(unreachable, timeout, malformed answer) is rejected with 500 under failurePolicy Fail (the default)
and skipped under Ignore. `matchConditions` (CEL) and reinvocation are not supported.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import uuid
from collections.abc import Callable
from typing import Any

import aiohttp
import msgspec

from ...jsonpatch import PatchError, apply_patch_in_place
from . import errors
from .resources import ResourceInfo
from .selectors import labels_match, selector_from_label_selector
from .services import ServiceUnresolvable, resolve_service
from .store import Store, json_copy

Obj = dict[str, Any]
MUTATING = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING = "admissionregistration.k8s.io/validatingwebhookconfigurations"
USER_INFO = {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]}


def _match_list(values: list[str] | None, want: str) -> bool:
    values = values or []
    return "*" in values or want in values


def rule_matches(rule: Obj, op: str, info: ResourceInfo, sub: str) -> bool:
    """Whether one RuleWithOperations covers this request."""
    if not _match_list(rule.get("operations"), op):
        return False
    if not _match_list(rule.get("apiGroups"), info.group):
        return False
    if not _match_list(rule.get("apiVersions"), info.version):
        return False
    scope = rule.get("scope", "*")
    if scope == "Namespaced" and not info.namespaced:
        return False
    if scope == "Cluster" and info.namespaced:
        return False
    want = f"{info.resource}/{sub}" if sub else info.resource
    for res in rule.get("resources") or []:
        if res in ("*/*", want):
            return True
        if res == "*" and not sub:
            return True
        if "/" in res:
            r, s = res.split("/", 1)
            if sub and (r in ("*", info.resource)) and s in ("*", sub):
                return True
    return False


class WebhookAdmission:
    def __init__(self, store: Store, timeout_cap: float = 30.0) -> None:
        self.store = store
        self.timeout_cap = timeout_cap
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}
        # (configurations, request kind) -> (their resource's write count, webhooks ruled in)
        self._by_rules: dict[tuple[Any, ...], tuple[int, list[Obj]]] = {}

    def mutating_configured(self) -> bool:
        return self.store.count(MUTATING) > 0

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _webhooks(self, key: str, op: str, info: ResourceInfo, sub: str) -> list[Obj]:
        """The webhooks of `key`'s configurations (in name order) whose rules cover the request,
        worked out once per request kind until a configuration is written."""
        writes = self.store.resource(key).writes
        memo = (key, op, info.group, info.version, info.resource, info.namespaced, sub)
        hit = self._by_rules.get(memo)
        if hit is not None and hit[0] == writes:
            return hit[1]
        out: list[Obj] = []
        for entry in self.store.list(key):
            for hook in entry.obj.get("webhooks") or []:
                if any(rule_matches(r, op, info, sub) for r in hook.get("rules") or []):
                    out.append(hook)
        if len(self._by_rules) > 1024:
            self._by_rules.clear()
        self._by_rules[memo] = (writes, out)
        return out

    def _matches(
        self, hook: Obj, op: str, info: ResourceInfo, sub: str, obj: Obj | None, old: Obj | None
    ) -> bool:
        """Whether a webhook whose rules cover the request selects its namespace and object."""
        target = obj if obj is not None else old
        md = (target or {}).get("metadata") or {}
        ns_sel = hook.get("namespaceSelector")
        if ns_sel:
            if info.namespaced:
                ns = self.store.get("/namespaces", "", md.get("namespace", ""))
                labels = (ns.obj["metadata"].get("labels") if ns else None) or {}
                if not labels_match(selector_from_label_selector(ns_sel), labels):
                    return False
            elif (
                info.kind == "Namespace"
                and not info.group
                and not labels_match(selector_from_label_selector(ns_sel), md.get("labels") or {})
            ):
                return False
        obj_sel = hook.get("objectSelector")
        if obj_sel:
            sel = selector_from_label_selector(obj_sel)
            candidates = [o for o in (obj, old) if o is not None]
            if not any(
                labels_match(sel, (o.get("metadata") or {}).get("labels") or {}) for o in candidates
            ):
                return False
        return True

    def _review(
        self, op: str, info: ResourceInfo, sub: str, obj: Obj | None, old: Obj | None, dry_run: bool
    ) -> Obj:
        md = (obj or old or {}).get("metadata") or {}
        kind = {"group": info.group, "version": info.version, "kind": info.kind}
        resource = {"group": info.group, "version": info.version, "resource": info.resource}
        options_kind = {
            "CREATE": "CreateOptions",
            "UPDATE": "UpdateOptions",
            "DELETE": "DeleteOptions",
        }[op]
        request: Obj = {
            "uid": str(uuid.uuid4()),
            "kind": kind,
            "resource": resource,
            "requestKind": kind,
            "requestResource": resource,
            "name": md.get("name", ""),
            "operation": op,
            "userInfo": USER_INFO,
            "object": obj,
            "oldObject": old,
            "dryRun": dry_run,
            "options": {"kind": options_kind, "apiVersion": "meta.k8s.io/v1"},
        }
        if sub:
            request["subResource"] = sub
            request["requestSubResource"] = sub
        if info.namespaced:
            request["namespace"] = md.get("namespace", "")
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}

    async def _call(self, hook: Obj, review: Obj) -> Obj:
        """POST the review; returns the response's `response`, raising on any failure."""
        cfg = hook.get("clientConfig") or {}
        timeout = min(float(hook.get("timeoutSeconds", 10)), self.timeout_cap)
        server_name = None
        if cfg.get("url"):
            url = cfg["url"]
        elif cfg.get("service"):
            svc = cfg["service"]
            target = resolve_service(
                self.store, svc.get("namespace", ""), svc["name"], int(svc.get("port", 443))
            )
            url = target.base_url + (svc.get("path") or "")
            server_name = target.server_name
        else:
            raise ValueError("webhook has neither url nor service")
        # one context per CA bundle, so connections to the webhook are pooled and reused
        ctx = self._contexts.get(cfg.get("caBundle") or "")
        if ctx is None:
            ctx = ssl.create_default_context()
            if cfg.get("caBundle"):
                ctx.load_verify_locations(cadata=base64.b64decode(cfg["caBundle"]).decode())
            self._contexts[cfg.get("caBundle") or ""] = ctx
        if self._session is None:
            self._session = aiohttp.ClientSession()
        sep = "&" if "?" in url else "?"
        full = f"{url}{sep}timeout={int(timeout)}s"
        kwargs: dict[str, Any] = {"ssl": ctx}
        if server_name is not None:
            kwargs["server_hostname"] = server_name
        async with self._session.post(
            full,
            data=msgspec.json.encode(review),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            timeout=aiohttp.ClientTimeout(total=timeout),
            **kwargs,
        ) as resp:
            raw = await resp.read()
            if resp.status != 200:
                raise ValueError(f"expected response code 200, got {resp.status}: {raw[:200]!r}")
        body = msgspec.json.decode(raw)
        response = body.get("response") if isinstance(body, dict) else None
        if not isinstance(response, dict):
            raise ValueError("webhook response was absent")
        if response.get("uid") != review["request"]["uid"]:
            raise ValueError(
                f"expected response.uid={review['request']['uid']!r}, got {response.get('uid')!r}"
            )
        return response

    async def _invoke(self, hook: Obj, review: Obj) -> Obj | None:
        """Call one webhook; None when its failure is ignored."""
        name = hook.get("name", "")
        try:
            return await self._call(hook, review)
        except (
            aiohttp.ClientError,
            TimeoutError,
            ValueError,
            ssl.SSLError,
            ServiceUnresolvable,
            msgspec.DecodeError,
            OSError,
        ) as err:
            if hook.get("failurePolicy", "Fail") == "Ignore":
                return None
            text = str(err) or type(err).__name__
            raise errors.internal(
                f'failed calling webhook "{name}": failed to call webhook: {text}'
            ) from None

    @staticmethod
    def _denied(name: str, response: Obj) -> errors.StatusError:
        result = dict(response.get("status") or {})
        code = int(result.get("code") or 0)
        if code < 400:
            code = 400
        prefix = f'admission webhook "{name}" denied the request'
        if result.get("message"):
            message = f"{prefix}: {result['message']}"
        elif result.get("reason"):
            message = f"{prefix}: {result['reason']}"
        else:
            message = f"{prefix} without explanation"
        return errors.StatusError(code, result.get("reason", ""), message, result.get("details"))

    async def mutate(
        self,
        op: str,
        info: ResourceInfo,
        sub: str,
        obj: Obj | None,
        old: Obj | None,
        dry_run: bool,
        prepare: Callable[[Obj], None] | None = None,
    ) -> Obj | None:
        """The object the matching webhooks' patches make of `obj` (None: none changed it).
        `prepare` (decoding's defaults) is applied to `obj`, in place, before the first call."""
        hooks = self._webhooks(MUTATING, op, info, sub)
        if not hooks or obj is None:
            return None
        current = obj
        changed = False
        for hook in hooks:
            if not self._matches(hook, op, info, sub, current, old):
                continue
            if prepare is not None:
                prepare(current)  # labels, which the selectors match, are not defaulted
                prepare = None
            response = await self._invoke(hook, self._review(op, info, sub, current, old, dry_run))
            if response is None:
                continue
            if not response.get("allowed"):
                raise self._denied(hook.get("name", ""), response)
            patch = response.get("patch")
            if patch:
                if response.get("patchType", "JSONPatch") != "JSONPatch":
                    raise errors.internal(
                        f'failed calling webhook "{hook.get("name", "")}": unsupported patch type {response.get("patchType")!r}'
                    )
                try:
                    ops = msgspec.json.decode(base64.b64decode(patch))
                    # `current` may share subtrees with the stored object: patch a copy.
                    current = apply_patch_in_place(json_copy(current), ops)
                except (PatchError, msgspec.DecodeError, ValueError) as err:
                    raise errors.internal(
                        f'failed calling webhook "{hook.get("name", "")}": JSON patch failed: {err}'
                    ) from None
                changed = True
        return current if changed else None

    async def validate(
        self, op: str, info: ResourceInfo, sub: str, obj: Obj | None, old: Obj | None, dry_run: bool
    ) -> None:
        if not self.store.count(VALIDATING):
            return
        hooks = [
            h
            for h in self._webhooks(VALIDATING, op, info, sub)
            if self._matches(h, op, info, sub, obj, old)
        ]
        if not hooks:
            return
        review = self._review(op, info, sub, obj, old, dry_run)
        # Each call gets its own uid; the review is only read (encoded), so the rest is shared.
        reviews = [review] + [
            review | {"request": {**review["request"], "uid": str(uuid.uuid4())}} for _ in hooks[1:]
        ]
        responses = await asyncio.gather(
            *(self._invoke(h, r) for h, r in zip(hooks, reviews, strict=True))
        )
        for hook, response in zip(hooks, responses, strict=True):
            if response is not None and not response.get("allowed"):
                raise self._denied(hook.get("name", ""), response)
