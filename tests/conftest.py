"""Fixtures shared by every test package.

`cluster` (session): the local API server by default, or the cluster KUBECONFIG points at.
`namespace`: a fresh namespace per test module, deleted afterwards.
Every test gets structlog's configuration back as it found it. structlog's default printer
writes to the stdout pytest captures; a line a background thread logs between two tests, when
pytest holds the terminal for its progress dots, is dropped rather than printed into them.

The process runs under the agones processes' garbage-collector settings once tests are collected.

Hypothesis profiles: `ci` (the default) keeps the property-based suites CI-sized and
deterministic (derandomized, no deadline: the machine is shared); `HYPOTHESIS_PROFILE=thorough`
runs ten times the examples with fresh randomness.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
import structlog
from hypothesis import HealthCheck, settings

from tests.cluster import Cluster, start_cluster

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=_SLOW_OK, database=None
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=_SLOW_OK, max_examples=10 * 100
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class _CapturedStdout:
    """The file of structlog's default `PrintLogger` in tests: whatever `sys.stdout` is at the
    moment of writing, unless that is the terminal while pytest captures output (its capture
    is suspended between test phases, and the terminal holds its progress dots)."""

    capturing = False

    def write(self, text: str) -> None:
        if not (self.capturing and sys.stdout is sys.__stdout__):
            sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


_STDOUT = _CapturedStdout()
structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=_STDOUT))  # type: ignore[arg-type]


def pytest_configure(config: pytest.Config) -> None:
    _STDOUT.capturing = config.getoption("capture") != "no"


def pytest_collection_finish(session: pytest.Session) -> None:
    """The test process collects garbage as every agones process does (`aioloop.tune_gc`): what
    collection imported is frozen, and the thresholds are the servers'. Under CPython's default
    thresholds a full collection walked the whole heap of the in-process servers and clients
    every few tens of thousands of allocations (over a minute of a CI run)."""
    from agones import aioloop

    aioloop.tune_gc()


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    """A test that configures logging in-process (a command's `run`) must not change what later
    tests' `structlog.testing.capture_logs()` sees: put structlog's configuration back."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    c, runner = start_cluster()
    try:
        yield c
    finally:
        if runner is not None:
            runner.stop()


@pytest.fixture(scope="module")
def namespace(cluster: Cluster) -> Iterator[str]:
    name = cluster.create_namespace()
    try:
        yield name
    finally:
        cluster.delete_namespace(name)


@pytest.fixture
def local_only(cluster: Cluster) -> Cluster:
    """Skip on a real cluster (fault injection and local-only knobs)."""
    if not cluster.local:
        pytest.skip("needs the local API server (fault injection)")
    return cluster


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The malformed inputs each property suite sent in this run, by surface."""
    from tests.fuzzing import SENT

    if not SENT:
        return
    terminalreporter.section("malformed inputs sent")
    for surface, n in sorted(SENT.items()):
        terminalreporter.write_line(f"{surface}: {n:,}")
