"""structlog set-up (Agones `pkg/util/runtime` logging): one call per process, bound loggers per key.

`configure_logging(level, json)` renders JSON lines (in a cluster, or when stdout is not a TTY) or a
readable console format; log level names are Agones' (debug, info, warn/warning, error). Afterwards
`structlog.get_logger().bind(gameserver="ns/name")` gives the per-key logger controllers use.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "fatal": logging.CRITICAL,
    "panic": logging.CRITICAL,
}


def parse_level(level: str) -> int:
    try:
        return _LEVELS[level.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown log level {level!r}; use one of {sorted(_LEVELS)}") from None


def configure_logging(level: str = "info", json: bool | None = None) -> None:
    if json is None:
        json = "KUBERNETES_SERVICE_HOST" in os.environ or not sys.stdout.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(parse_level(level)),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
