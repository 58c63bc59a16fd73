"""The simple-game-server text protocol (Agones `examples/simple-game-server/handlers.go`).

`handle_response(text, sdk, stop_health)` interprets one command line and returns
`(response, add_ack, error)`: the listener frames it as `ERROR: <response>\\n` on error,
`ACK: <response>\\n` (UDP) / `ACK TCP: <response>\\n` (TCP) when `add_ack`, else sends the
response as is. Unknown text is echoed with an ACK. Replies match the Go server's byte for byte,
including its quirks (e.g. the value-returning commands end in a newline of their own).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from google.protobuf import json_format

from agones.sdk import AsyncSDK, GameServer, SDKError
from agones.sdk.duration import parse_go_duration

log = logging.getLogger("simple-game-server")

Result = tuple[str, bool, Exception | None]
Handler = Callable[[AsyncSDK, list[str], Callable[[], None]], Awaitable[Result]]


class CommandError(Exception):
    pass


def fatal(message: str) -> None:
    """Go's log.Fatalf: log and exit 1 at once."""
    log.critical(message)
    exit_now(1)


def exit_now(code: int) -> None:
    """Go's os.Exit: no cleanup, no waiting for the event loop."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def default_reply(parts: list[str]) -> tuple[str, bool]:
    return " ".join(parts), True


def go_parse_int(text: str, func: str = "ParseInt") -> int:
    try:
        if not text or text.strip() != text or "_" in text:
            raise ValueError
        return int(text, 10)
    except ValueError:
        raise CommandError(f'strconv.{func}: parsing "{text}": invalid syntax') from None


def gs_json(gs: GameServer) -> str:
    return json.dumps(json_format.MessageToDict(gs, preserving_proto_field_name=True))


async def handle_exit(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    # the listener shuts down after replying
    response, ack = default_reply(parts)
    return response, ack, None


async def handle_unhealthy(sdk: AsyncSDK, parts: list[str], stop: Callable[[], None]) -> Result:
    response, ack = default_reply(parts)
    stop()
    return response, ack, None


async def handle_game_server(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    try:
        gs = await sdk.game_server()
    except SDKError as err:
        fatal(f"Could not retrieve GameServer: {err}")
        raise
    log.info("GameServer: %s", gs_json(gs))
    return f"NAME: {gs.object_meta.name}\n", False, None


async def _sdk_action(parts: list[str], action: Callable[[], Awaitable[None]], what: str) -> Result:
    response, ack = default_reply(parts)
    try:
        await action()
    except SDKError as err:
        fatal(f"{what}: {err}")
    return response, ack, None


async def handle_ready(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    return await _sdk_action(parts, sdk.ready, "Could not send ready message")


async def handle_allocate(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    return await _sdk_action(parts, sdk.allocate, "could not allocate gameserver")


async def handle_reserve(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    response, ack = default_reply(parts)
    if len(parts) != 2:
        message = "Invalid RESERVE, should have 1 argument"
        return message, False, CommandError(message)
    try:
        seconds = parse_go_duration(parts[1])
    except ValueError as err:
        return f"{err}\n", False, err
    try:
        await sdk.reserve(seconds)
    except SDKError as err:
        fatal(f"could not reserve gameserver: {err}")
    return response, ack, None


async def handle_watch(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    response, ack = default_reply(parts)
    await sdk.watch_game_server(lambda gs: log.info("GameServer Event: %s", gs_json(gs)))
    return response, ack, None


async def handle_label(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    response, ack = default_reply(parts)
    if len(parts) == 1:
        await _set(sdk.set_label, "timestamp", str(int(time.time())), "label")
    elif len(parts) == 3:
        await _set(sdk.set_label, parts[1], parts[2], "label")
    else:
        message = "Invalid LABEL command, must use zero or 2 arguments"
        return message, ack, CommandError(message)
    return response, ack, None


async def handle_annotation(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    response, ack = default_reply(parts)
    if len(parts) == 1:
        await _set(sdk.set_annotation, "timestamp", go_time_string(datetime.now(UTC)), "annotation")
    elif len(parts) == 3:
        await _set(sdk.set_annotation, parts[1], parts[2], "annotation")
    else:
        message = "Invalid ANNOTATION command, must use zero or 2 arguments"
        return message, ack, CommandError(message)
    return response, ack, None


def go_time_string(now: datetime) -> str:
    """Go's `time.Now().UTC().String()`, e.g. `2024-01-02 03:04:05.123456 +0000 UTC`."""
    fraction = f"{now.microsecond:06d}".rstrip("0")
    return now.strftime("%Y-%m-%d %H:%M:%S") + (f".{fraction}" if fraction else "") + " +0000 UTC"


async def _set(fn: Callable[[str, str], Awaitable[None]], key: str, value: str, what: str) -> None:
    log.info("Setting %s %s=%s", what, key, value)
    try:
        await fn(key, value)
    except SDKError as err:
        fatal(f"could not set {what}: {err}")


async def handle_crash(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    log.info("Crashing.")
    code = 1
    if len(parts) > 1:
        try:
            code = int(parts[1])
        except ValueError:
            code = 1
    exit_now(code)
    raise AssertionError("unreachable")


async def handle_player_capacity(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    response, ack = default_reply(parts)
    if len(parts) == 1:
        try:
            capacity = await sdk.alpha.get_player_capacity()
        except SDKError as err:
            fatal(f"could not get capacity: {err}")
            raise
        return f"{capacity}\n", False, None
    if len(parts) == 2:
        try:
            capacity = go_parse_int(parts[1], "Atoi")
        except CommandError as err:
            return str(err), ack, err
        try:
            await sdk.alpha.set_player_capacity(capacity)
        except SDKError as err:
            fatal(f"could not set capacity: {err}")
        return response, ack, None
    message = "Invalid PLAYER_CAPACITY, should have 0 or 1 arguments"
    return message, ack, CommandError(message)


async def handle_player_connect(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    response, ack = default_reply(parts)
    if len(parts) < 2:
        message = "Invalid PLAYER_CONNECT, should have 1 argument"
        return message, ack, CommandError(message)
    try:
        await sdk.alpha.player_connect(parts[1])
    except SDKError as err:
        fatal(f"could not connect player: {err}")
    return response, ack, None


async def handle_player_disconnect(
    sdk: AsyncSDK, parts: list[str], _: Callable[[], None]
) -> Result:
    response, ack = default_reply(parts)
    if len(parts) < 2:
        message = "Invalid PLAYER_DISCONNECT, should have 1 argument"
        return message, ack, CommandError(message)
    try:
        await sdk.alpha.player_disconnect(parts[1])
    except SDKError as err:
        fatal(f"could not disconnect player: {err}")
    return response, ack, None


async def handle_player_connected(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    if len(parts) < 2:
        message = "Invalid PLAYER_CONNECTED, should have 1 argument"
        return message, False, CommandError(message)
    try:
        connected = await sdk.alpha.is_player_connected(parts[1])
    except SDKError as err:
        fatal(f"could not retrieve if player is connected: {err}")
        raise
    return f"{str(connected).lower()}\n", False, None


async def handle_get_players(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    try:
        players = await sdk.alpha.get_connected_players()
    except SDKError as err:
        fatal(f"could not retrieve connected players: {err}")
        raise
    return ",".join(players) + "\n", False, None


async def handle_player_count(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
    try:
        count = await sdk.alpha.get_player_count()
    except SDKError as err:
        fatal(f"could not retrieve player count: {err}")
        raise
    return f"{count}\n", False, None


def _beta_getter(
    command: str,
    nargs: int,
    call: Callable[..., Awaitable[object]],
    render: Callable[[object], str],
    failed: Callable[[], str],
) -> Handler:
    async def handler(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
        if len(parts) < nargs + 1:
            plural = "argument" if nargs == 1 else "arguments"
            message = f"Invalid {command}, should have {nargs} {plural}"
            return message, False, CommandError(message)
        try:
            value = await call(sdk.beta, *parts[1 : nargs + 1])
        except SDKError as err:
            log.info("Error running %s: %s", command, err)
            return failed(), False, err
        return render(value), False, None

    return handler


def _beta_setter(
    command: str, call: Callable[..., Awaitable[None]], numeric: str | None
) -> Handler:
    async def handler(sdk: AsyncSDK, parts: list[str], _: Callable[[], None]) -> Result:
        if len(parts) < 3:
            message = f"Invalid {command}, should have 2 arguments"
            return message, False, CommandError(message)
        argument: object = parts[2]
        if numeric is not None:
            try:
                argument = go_parse_int(parts[2])
            except CommandError as err:
                return str(err), False, CommandError(numeric.format(parts[1], parts[2], err))
        try:
            await call(sdk.beta, parts[1], argument)
        except SDKError as err:
            log.info("Error running %s: %s", command, err)
            return str(err), False, err
        return "SUCCESS\n", False, None

    return handler


def _b(name: str) -> Callable[..., Awaitable[object]]:
    async def call(beta: object, *args: object) -> object:
        result: object = await getattr(beta, name)(*args)
        return result

    return call


RESPONSE_MAP: dict[str, Handler] = {
    "EXIT": handle_exit,
    "UNHEALTHY": handle_unhealthy,
    "GAMESERVER": handle_game_server,
    "READY": handle_ready,
    "ALLOCATE": handle_allocate,
    "RESERVE": handle_reserve,
    "WATCH": handle_watch,
    "LABEL": handle_label,
    "CRASH": handle_crash,
    "ANNOTATION": handle_annotation,
    "PLAYER_CAPACITY": handle_player_capacity,
    "PLAYER_CONNECT": handle_player_connect,
    "PLAYER_DISCONNECT": handle_player_disconnect,
    "PLAYER_CONNECTED": handle_player_connected,
    "GET_PLAYERS": handle_get_players,
    "PLAYER_COUNT": handle_player_count,
    "GET_COUNTER_COUNT": _beta_getter(
        "GET_COUNTER_COUNT", 1, _b("get_counter_count"), lambda v: f"COUNTER: {v}\n", lambda: "-1"
    ),
    "INCREMENT_COUNTER": _beta_setter(
        "INCREMENT_COUNTER",
        _b("increment_counter"),
        "Could not increment Counter {} by unparseable amount {}: {}",
    ),
    "DECREMENT_COUNTER": _beta_setter(
        "DECREMENT_COUNTER",
        _b("decrement_counter"),
        "could not decrement Counter {} by unparseable amount {}: {}",
    ),
    "SET_COUNTER_COUNT": _beta_setter(
        "SET_COUNTER_COUNT",
        _b("set_counter_count"),
        "could not set Counter {} to unparseable amount {}: {}",
    ),
    "GET_COUNTER_CAPACITY": _beta_getter(
        "GET_COUNTER_CAPACITY",
        1,
        _b("get_counter_capacity"),
        lambda v: f"CAPACITY: {v}\n",
        lambda: "-1",
    ),
    "SET_COUNTER_CAPACITY": _beta_setter(
        "SET_COUNTER_CAPACITY",
        _b("set_counter_capacity"),
        "could not set Counter {} to unparseable amount {}: {}",
    ),
    "GET_LIST_CAPACITY": _beta_getter(
        "GET_LIST_CAPACITY", 1, _b("get_list_capacity"), lambda v: f"CAPACITY: {v}\n", lambda: "-1"
    ),
    "SET_LIST_CAPACITY": _beta_setter(
        "SET_LIST_CAPACITY",
        _b("set_list_capacity"),
        "could not set List {} to unparseable amount {}: {}",
    ),
    "LIST_CONTAINS": _beta_getter(
        "LIST_CONTAINS",
        2,
        _b("list_contains"),
        lambda v: f"FOUND: {str(v).lower()}\n",
        lambda: "false",
    ),
    "GET_LIST_LENGTH": _beta_getter(
        "GET_LIST_LENGTH", 1, _b("get_list_length"), lambda v: f"LENGTH: {v}\n", lambda: "-1"
    ),
    "GET_LIST_VALUES": _beta_getter(
        "GET_LIST_VALUES",
        1,
        _b("get_list_values"),
        lambda v: f"VALUES: {','.join(v) if v else '<none>'}\n",  # type: ignore[call-overload]
        lambda: "INVALID LIST NAME",
    ),
    "APPEND_LIST_VALUE": _beta_setter("APPEND_LIST_VALUE", _b("append_list_value"), None),
    "DELETE_LIST_VALUE": _beta_setter("DELETE_LIST_VALUE", _b("delete_list_value"), None),
}


async def handle_response(text: str, sdk: AsyncSDK, stop_health: Callable[[], None]) -> Result:
    """Interpret one command; see the module docstring for the result's meaning."""
    parts = text.strip().split(" ")
    handler = RESPONSE_MAP.get(parts[0])
    if handler is None:
        return text, True, None
    return await handler(sdk, parts, stop_health)
