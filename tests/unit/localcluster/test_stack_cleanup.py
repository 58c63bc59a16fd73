"""A local stack whose start fails releases what it had started."""

from __future__ import annotations

import pytest

from agones.localcluster.stack import LocalStack, StackOptions


async def test_failed_start_stops_the_api_server(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: LocalStack) -> None:
        raise RuntimeError("webhooks could not start")

    monkeypatch.setattr(LocalStack, "_start_webhooks", broken)
    stack = LocalStack(StackOptions(controller=False))
    with pytest.raises(RuntimeError, match="webhooks could not start"):
        async with stack:
            pytest.fail("the stack must not start")
    assert stack.api._runner is None
    assert stack.client is not None and stack.client._session is None
