"""KeyLocks: one holder per key, other keys free, no entry left once released."""

from __future__ import annotations

import asyncio

import pytest

from agones.controllers.gameservers.keylocks import KeyLocks

pytestmark = pytest.mark.timeout(10)


async def test_one_key_is_held_by_one_at_a_time_and_forgotten_after() -> None:
    locks = KeyLocks()
    inside: list[str] = []
    most = 0

    async def work(key: str) -> None:
        nonlocal most
        async with locks.hold(key):
            inside.append(key)
            most = max(most, inside.count("a"))
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            inside.remove(key)

    await asyncio.gather(*(work("a") for _ in range(5)), work("b"))
    assert most == 1
    assert len(locks) == 0


async def test_other_keys_do_not_wait() -> None:
    locks = KeyLocks()
    async with locks.hold("a"), locks.hold("b"):
        assert len(locks) == 2
    assert len(locks) == 0


async def test_an_error_inside_releases_the_key() -> None:
    locks = KeyLocks()
    with pytest.raises(RuntimeError):
        async with locks.hold("a"):
            raise RuntimeError("sync failed")
    assert len(locks) == 0
    async with locks.hold("a"):
        pass
