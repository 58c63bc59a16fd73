"""`agones ping`: the latency-measurement service (Agones `cmd/ping`).

Every flag is a field of `PingSettings` and reads its environment variable (`--http-response` /
`HTTP_RESPONSE`, `--udp-rate-limit` / `UDP_RATE_LIMIT`), as Agones documents them. (Agones' binary
only honours the environment variables: its flags are parsed but never bound; here both work.)
A negative rate limit is refused with Agones' message; SIGTERM closes both servers and exits 0.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import aioloop
from ..logging import configure_logging
from ..ping import PingServer, PingSettings
from . import flags


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "ping", help="HTTP and UDP endpoints for measuring round-trip time to the cluster"
    )
    flags.bind_settings(parser, PingSettings)
    flags.add(parser, "--log-level", str, "Info", "log level")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = flags.settings_from_args(PingSettings, args)
    if settings.udp_rate_limit < 0:
        print("error: UDP Rate limit must be greater that or equal to zero")
        return 1
    configure_logging(args.log_level.lower())
    try:
        aioloop.run(PingServer(settings).run_until_signalled())
    except OSError as err:
        print(f"error: could not listen: {err}")
        return 1
    return 0
