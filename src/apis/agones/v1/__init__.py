"""The `agones.dev/v1` API group: GameServer, GameServerSet and Fleet, registered on import."""

from __future__ import annotations

from ...scheme import SCHEME, Kind
from . import fleet, gameserver_validation, gameserverset
from .common import GROUP, VERSION
from .fleet import Fleet
from .gameserver import GameServer
from .gameserverset import GameServerSet

GAME_SERVER_KIND: Kind[GameServer] = Kind(
    GROUP,
    VERSION,
    "GameServer",
    "gameservers",
    GameServer,
    gameserver_validation.validate,
    apply_defaults=gameserver_validation.apply_defaults,
    validate_schema=gameserver_validation.validate_schema_and_metadata,
    mutating_webhook=True,
    short_names=("gs",),
)
GAME_SERVER_SET_KIND: Kind[GameServerSet] = Kind(
    GROUP,
    VERSION,
    "GameServerSet",
    "gameserversets",
    GameServerSet,
    gameserverset.validate,
    apply_defaults=gameserverset.apply_defaults,
    validate_update=gameserverset.validate_update,
    validate_schema=gameserverset.validate_schema_and_metadata,
    short_names=("gss", "gsset"),
)
FLEET_KIND: Kind[Fleet] = Kind(
    GROUP,
    VERSION,
    "Fleet",
    "fleets",
    Fleet,
    fleet.validate,
    apply_defaults=fleet.apply_defaults,
    validate_update=fleet.validate_update,
    validate_schema=fleet.validate_schema_and_metadata,
    mutating_webhook=True,
    short_names=("flt",),
)

for _kind in (GAME_SERVER_KIND, GAME_SERVER_SET_KIND, FLEET_KIND):
    SCHEME.register(_kind)

__all__ = [
    "FLEET_KIND",
    "GAME_SERVER_KIND",
    "GAME_SERVER_SET_KIND",
    "Fleet",
    "GameServer",
    "GameServerSet",
]
