"""GameServerAllocation validation (Go `GameServerAllocation.Validate`), every error at once.

Paths, reasons and texts are Agones' (the allocation endpoint wraps them in a 422 `Status`
`GameServerAllocation.allocation.agones.dev "" is invalid: ...`). Map keys are visited sorted.
Quirks kept: a bad label selector is reported at `<selector>.labelSelector` with Go's `%#v` of the
selector as the value; the counter action is not checked against Increment/Decrement; a priority
without key shows its *type* as the value (`key must not be nil`); a missing action or amount
shows `"null"` (Go prints a nil pointer as that string, quoted).
"""

from __future__ import annotations

from ....featuregates import Feature, FeatureGates
from ...field import FieldError, GoValue, Path, forbidden, invalid, not_supported
from ...meta.labelselector import SelectorError, go_label_selector, label_selector_as_selector
from ...meta.validation import IS_NEGATIVE_ERROR_MSG, validate_annotations, validate_labels
from .gameserverallocation import (
    GAME_SERVER_STATE_ALLOCATED,
    GAME_SERVER_STATE_READY,
    PRIORITY_ASCENDING,
    PRIORITY_COUNTER,
    PRIORITY_DESCENDING,
    PRIORITY_LIST,
    SCHEDULING_DISTRIBUTED,
    SCHEDULING_PACKED,
    CounterAction,
    CounterSelector,
    GameServerAllocation,
    GameServerAllocationSpec,
    GameServerSelector,
    ListAction,
    ListSelector,
    MetaPatch,
    PlayerSelector,
    Priority,
)


def _n(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _s(value: object) -> str:
    return value if isinstance(value, str) else ""


def _min_max_errors(path: Path, min_name: str, lo: int, max_name: str, hi: int) -> list[FieldError]:
    """Both bounds non-negative, and the maximum 0 (unbounded) or not below the minimum."""
    errs: list[FieldError] = []
    if lo < 0:
        errs.append(invalid(path.child(min_name), lo, IS_NEGATIVE_ERROR_MSG))
    if hi < 0:
        errs.append(invalid(path.child(max_name), hi, IS_NEGATIVE_ERROR_MSG))
    if hi < lo and hi != 0:
        errs.append(invalid(path, hi, f"{max_name} must zero or greater than {min_name} {lo}"))
    return errs


def validate_counter_selectors(
    counters: dict[str, CounterSelector], path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in sorted(counters):
        sel, p = counters[key], path.key(key)
        errs += _min_max_errors(p, "minCount", _n(sel.min_count), "maxCount", _n(sel.max_count))
        errs += _min_max_errors(
            p, "minAvailable", _n(sel.min_available), "maxAvailable", _n(sel.max_available)
        )
    return errs


def validate_list_selectors(lists: dict[str, ListSelector], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in sorted(lists):
        sel, p = lists[key], path.key(key)
        errs += _min_max_errors(
            p, "minAvailable", _n(sel.min_available), "maxAvailable", _n(sel.max_available)
        )
    return errs


def validate_selector(
    selector: GameServerSelector, path: Path, gates: FeatureGates
) -> list[FieldError]:
    """`GameServerSelector.Validate`."""
    errs: list[FieldError] = []
    try:
        label_selector_as_selector(selector)
    except SelectorError as err:
        errs.append(
            invalid(
                path.child("labelSelector"),
                GoValue(go_label_selector(selector)),
                f"Error converting label selector: {err}",
            )
        )
    state = selector.game_server_state
    if isinstance(state, str) and state not in (
        GAME_SERVER_STATE_ALLOCATED,
        GAME_SERVER_STATE_READY,
    ):
        errs.append(
            invalid(
                path.child("gameServerState"),
                state,
                "GameServerState must be either Allocated or Ready",
            )
        )
    players = selector.players
    if gates.enabled(Feature.PLAYER_ALLOCATION_FILTER) and isinstance(players, PlayerSelector):
        min_avail, max_avail = _n(players.min_available), _n(players.max_available)
        p = path.child("players")
        if min_avail < 0:
            errs.append(invalid(p.child("minAvailable"), min_avail, IS_NEGATIVE_ERROR_MSG))
        if max_avail < 0:
            errs.append(invalid(p.child("maxAvailable"), max_avail, IS_NEGATIVE_ERROR_MSG))
        if min_avail > max_avail:
            errs.append(
                invalid(
                    p.child("minAvailable"),
                    min_avail,
                    "minAvailable cannot be greater than maxAvailable",
                )
            )
    has_counters = isinstance(selector.counters, dict)
    has_lists = isinstance(selector.lists, dict)
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        if isinstance(selector.counters, dict):
            errs += validate_counter_selectors(selector.counters, path.child("counters"))
        if isinstance(selector.lists, dict):
            errs += validate_list_selectors(selector.lists, path.child("lists"))
    else:
        if has_counters:
            errs.append(forbidden(path.child("counters"), "Feature CountsAndLists must be enabled"))
        if has_lists:
            errs.append(forbidden(path.child("lists"), "Feature CountsAndLists must be enabled"))
    return errs


def validate_priorities(priorities: list[Priority], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, priority in enumerate(priorities):
        p = path.index(i)
        ptype = _s(priority.type)
        if ptype not in (PRIORITY_COUNTER, PRIORITY_LIST):
            errs.append(invalid(p, ptype, 'type must be "Counter" or "List"'))
        if not _s(priority.key):
            errs.append(invalid(p, ptype, "key must not be nil"))
        order = _s(priority.order)
        if order not in (PRIORITY_ASCENDING, PRIORITY_DESCENDING):
            errs.append(invalid(p, order, 'order must be "Ascending" or "Descending"'))
    return errs


def validate_counter_actions(counters: dict[str, CounterAction], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in sorted(counters):
        action = counters[key]
        p = path.key(key)
        has_amount = isinstance(action.amount, int)
        has_action = isinstance(action.action, str)
        if isinstance(action.amount, int) and action.amount < 0:
            errs.append(invalid(p.child("amount"), action.amount, IS_NEGATIVE_ERROR_MSG))
        if isinstance(action.capacity, int) and action.capacity < 0:
            errs.append(invalid(p.child("capacity"), action.capacity, IS_NEGATIVE_ERROR_MSG))
        if has_amount and not has_action:
            errs.append(
                invalid(
                    p, "null", 'action must be "Increment" or "Decrement" if the amount is not nil'
                )
            )
        if not has_amount and has_action:
            errs.append(invalid(p, "null", "amount must not be nil if action is not nil"))
    return errs


def validate_list_actions(lists: dict[str, ListAction], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in sorted(lists):
        action = lists[key]
        if isinstance(action.capacity, int) and action.capacity < 0:
            errs.append(
                invalid(path.key(key).child("capacity"), action.capacity, IS_NEGATIVE_ERROR_MSG)
            )
    return errs


def validate(gsa: GameServerAllocation, gates: FeatureGates) -> list[FieldError]:
    """`GameServerAllocation.Validate`; call after `apply_defaults`."""
    spec = (
        gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else GameServerAllocationSpec()
    )
    path = Path("spec")
    errs: list[FieldError] = []
    scheduling = _s(spec.scheduling)
    if scheduling not in (SCHEDULING_PACKED, SCHEDULING_DISTRIBUTED):
        errs.append(
            not_supported(
                path.child("scheduling"), scheduling, [SCHEDULING_PACKED, SCHEDULING_DISTRIBUTED]
            )
        )
    required = (
        spec.required if isinstance(spec.required, GameServerSelector) else GameServerSelector()
    )
    errs += validate_selector(required, path.child("required"), gates)
    for i, selector in enumerate(spec.preferred or []):
        errs += validate_selector(selector, path.child("preferred").index(i), gates)
    for i, selector in enumerate(spec.selectors or []):
        errs += validate_selector(selector, path.child("selectors").index(i), gates)
    priorities = spec.priorities if isinstance(spec.priorities, list) else None
    counters = spec.counters if isinstance(spec.counters, dict) else None
    lists = spec.lists if isinstance(spec.lists, dict) else None
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        if priorities is not None:
            errs += validate_priorities(priorities, path.child("priorities"))
        if counters is not None:
            errs += validate_counter_actions(counters, path.child("counters"))
        if lists is not None:
            errs += validate_list_actions(lists, path.child("lists"))
    else:
        if priorities is not None:
            errs.append(
                forbidden(
                    path.child("priorities"),
                    "Feature CountsAndLists must be enabled if Priorities is specified",
                )
            )
        if counters is not None:
            errs.append(
                forbidden(
                    path.child("counters"),
                    "Feature CountsAndLists must be enabled if Counters is specified",
                )
            )
        if lists is not None:
            errs.append(
                forbidden(
                    path.child("lists"),
                    "Feature CountsAndLists must be enabled if Lists is specified",
                )
            )
    meta = spec.metadata if isinstance(spec.metadata, MetaPatch) else MetaPatch()
    meta_path = path.child("metadata")
    errs += validate_labels(
        meta.labels if isinstance(meta.labels, dict) else None, meta_path.child("labels")
    )
    errs += validate_annotations(
        meta.annotations if isinstance(meta.annotations, dict) else None,
        meta_path.child("annotations"),
    )
    return errs
