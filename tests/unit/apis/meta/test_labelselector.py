import pytest

from agones.apis.meta.labelselector import (
    LabelSelector,
    LabelSelectorRequirement,
    SelectorError,
    go_label_selector,
    label_selector_as_selector,
    parse_selector,
    selector_from_set,
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


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        pytest.param("", "", id="empty"),
        pytest.param("a=b", "a=b", id="equals"),
        pytest.param("a==b", "a==b", id="double-equals"),
        pytest.param(" b != c , a ", "a,b!=c", id="spaces-and-sorting"),
        pytest.param(
            "env in (prod, qa),tier notin (cache)", "env in (prod,qa),tier notin (cache)", id="sets"
        ),
        pytest.param("!gone,here", "!gone,here", id="exists-and-not"),
        pytest.param("in in (in,notin)", "in in (in,notin)", id="keywords-as-identifiers"),
        pytest.param("a=", "a=", id="empty-exact-value"),
        pytest.param("a in ()", "a in ()", id="empty-set-value"),
        pytest.param("a in (,x)", "a in (,x)", id="leading-comma"),
        pytest.param("n>5,m<10", "m<10,n>5", id="gt-lt"),
        pytest.param("agones.dev/fleet=green", "agones.dev/fleet=green", id="prefixed-key"),
    ],
)
def test_parse_selector_round_trips(text: str, canonical: str) -> None:
    assert str(parse_selector(text)) == canonical
    assert str(parse_selector(canonical)) == canonical


@pytest.mark.parametrize(
    ("text", "labels", "matches"),
    [
        pytest.param("a=b,c", {"a": "b", "c": ""}, True, id="and"),
        pytest.param("a!=b", {}, True, id="not-equals-absent"),
        pytest.param("a in (x,y)", {"a": "y"}, True, id="in"),
        pytest.param("!a", {"a": "1"}, False, id="does-not-exist"),
        pytest.param("n>5", {"n": "6"}, True, id="gt"),
        pytest.param("n>5", {"n": "5"}, False, id="gt-equal"),
        pytest.param("n<5", {"n": "x"}, False, id="lt-not-a-number"),
        pytest.param("n<5", {}, False, id="lt-absent"),
    ],
)
def test_parsed_selector_matches(text: str, labels: dict[str, str], matches: bool) -> None:
    assert parse_selector(text).matches(labels) is matches


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
            id="two-words",
        ),
        pytest.param("a,", "found '', expected: identifier after ','", id="trailing-comma"),
        pytest.param(
            ",a", "found ',', expected: !, identifier, or 'end of string'", id="leading-comma"
        ),
        pytest.param(
            "a in x", "unable to parse requirement: found 'x' expected: '('", id="in-without-parens"
        ),
        pytest.param(
            "a in (x", "unable to parse requirement: found '', expected: ',' or ')'", id="unclosed"
        ),
        pytest.param(
            "a=b=c", "found '=', expected: ',' or 'end of string'", id="double-assignment"
        ),
        pytest.param(
            "a>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
            id="gt-not-integer",
        ),
        pytest.param(
            "a=(",
            "unable to parse requirement: found '(', expected: identifier",
            id="paren-as-value",
        ),
        pytest.param(
            "!",
            "unable to parse requirement: found '', expected: identifier",
            id="bang-alone",
        ),
        pytest.param(
            "a=b c",
            "found 'c', expected: ',' or 'end of string'",
            id="space-in-value",
        ),
    ],
)
def test_parse_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_selector(text)
    assert str(err.value) == message


def test_selector_from_set() -> None:
    built = selector_from_set({"b": "2", "a": "1"})
    assert str(built) == "a=1,b=2"
    assert built.matches({"a": "1", "b": "2", "c": "3"})
    assert not built.matches({"a": "1"})
    assert selector_from_set({}).matches({"x": "y"})
