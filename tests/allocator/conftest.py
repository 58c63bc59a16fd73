"""Loops of the allocator's tests: `test_server_uvloop` runs on uvloop (what `agones allocator`
runs on), the others on asyncio's own loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import uvloop


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], Any]]:
    del config
    if item.nodeid.split("::")[0].endswith("test_server_uvloop.py"):
        return {"uvloop": uvloop.new_event_loop}
    return {"asyncio": asyncio.new_event_loop}
