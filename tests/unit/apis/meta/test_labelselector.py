import pytest

from agones.apis.meta.labelselector import (
    LabelSelector,
    LabelSelectorRequirement,
    SelectorError,
    go_label_selector,
    label_selector_as_selector,
)


def sel(
    labels: dict[str, str] | None = None, *exprs: tuple[str, str, list[str] | None]
) -> LabelSelector:
    out = LabelSelector()
    if labels is not None:
        out.match_labels = labels
    if exprs:
        reqs = []
        for key, op, values in exprs:
            r = LabelSelectorRequirement(key=key, operator=op)
            if values is not None:
                r.values = values
            reqs.append(r)
        out.match_expressions = reqs
    return out


GAME = {"game": "my-game", "tier": "cache", "agones.dev/fleet": "green"}


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        pytest.param(sel(), GAME, True, id="empty-matches-everything"),
        pytest.param(sel(), {}, True, id="empty-matches-no-labels"),
        pytest.param(sel({"game": "my-game"}), GAME, True, id="match-labels"),
        pytest.param(sel({"game": "other"}), GAME, False, id="match-labels-value-differs"),
        pytest.param(sel({"game": "my-game", "x": "y"}), GAME, False, id="match-labels-all-needed"),
        pytest.param(sel(None, ("tier", "In", ["cache", "db"])), GAME, True, id="in"),
        pytest.param(sel(None, ("tier", "In", ["db"])), GAME, False, id="in-miss"),
        pytest.param(sel(None, ("zone", "In", ["a"])), GAME, False, id="in-absent-key"),
        pytest.param(sel(None, ("tier", "NotIn", ["db"])), GAME, True, id="notin"),
        pytest.param(sel(None, ("tier", "NotIn", ["cache"])), GAME, False, id="notin-miss"),
        pytest.param(
            sel(None, ("zone", "NotIn", ["a"])), GAME, True, id="notin-absent-key-matches"
        ),
        pytest.param(sel(None, ("tier", "Exists", None)), GAME, True, id="exists"),
        pytest.param(sel(None, ("zone", "Exists", None)), GAME, False, id="exists-miss"),
        pytest.param(sel(None, ("zone", "DoesNotExist", None)), GAME, True, id="does-not-exist"),
        pytest.param(
            sel(None, ("tier", "DoesNotExist", None)), GAME, False, id="does-not-exist-miss"
        ),
        pytest.param(
            sel({"game": "my-game"}, ("tier", "In", ["cache"]), ("zone", "DoesNotExist", None)),
            GAME,
            True,
            id="and-of-everything",
        ),
    ],
)
def test_matches(selector: LabelSelector, labels: dict[str, str], matches: bool) -> None:
    assert label_selector_as_selector(selector).matches(labels) is matches


def test_none_selects_nothing() -> None:
    assert not label_selector_as_selector(None).matches({})


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param(
            sel(None, ("tier", "Like", ["cache"])),
            '"Like" is not a valid label selector operator',
            id="bad-operator",
        ),
        pytest.param(
            sel(None, ("tier", "In", [])),
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
            id="in-without-values",
        ),
        pytest.param(
            sel(None, ("tier", "Exists", ["x"])),
            'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
            id="exists-with-values",
        ),
        pytest.param(
            sel({"bad key!": "v"}),
            'key: Invalid value: "bad key!": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', "
            " or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            id="bad-key",
        ),
        pytest.param(
            sel({"game": "not ok"}),
            'values[0][game]: Invalid value: "not ok": a valid label must be an empty string or consist '
            "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            id="bad-value",
        ),
    ],
)
def test_errors(selector: LabelSelector, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        label_selector_as_selector(selector)
    assert str(err.value) == message


def test_go_rendering_and_string_form() -> None:
    bad = sel(None, ("tier", "Like", ["cache"]))
    assert go_label_selector(bad) == (
        "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement"
        '{v1.LabelSelectorRequirement{Key:"tier", Operator:"Like", Values:[]string{"cache"}}}}'
    )
    assert go_label_selector(sel({"b": "2", "a": "1"})) == (
        'v1.LabelSelector{MatchLabels:map[string]string{"a":"1", "b":"2"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
    )
    built = label_selector_as_selector(
        sel(
            {"game": "g"},
            ("tier", "NotIn", ["b", "a"]),
            ("alpha", "Exists", None),
            ("zone", "DoesNotExist", None),
        )
    )
    assert str(built) == "alpha,game=g,tier notin (a,b),!zone"
