import pytest

from agones.apis.field import Path
from agones.apis.meta import validation as v

QN_TAIL = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def test_regex_error_matches_go_spacing() -> None:
    # Go writes "'a', " for each example joined by " or ": two spaces before each "or".
    assert (
        v.regex_error("m", "re", "a", "b")
        == "m (e.g. 'a',  or 'b', regex used for validation is 're')"
    )
    assert v.regex_error("m", "re") == "m (regex used for validation is 're')"


@pytest.mark.parametrize(
    ("key", "msgs"),
    [
        pytest.param("simple", [], id="ok"),
        pytest.param("agones.dev/sdk-version", [], id="prefixed"),
        pytest.param("bad key", ["name part " + QN_TAIL], id="space"),
        pytest.param("/x", ["prefix part must be non-empty"], id="empty-prefix"),
        pytest.param(
            "a/", ["name part must be non-empty", "name part " + QN_TAIL], id="empty-name"
        ),
        pytest.param(
            "a/b/c",
            [
                "a qualified name "
                + QN_TAIL
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ],
            id="two-slashes",
        ),
        pytest.param("f" * 64, ["name part must be no more than 63 bytes"], id="too-long"),
        pytest.param(
            "Bad_Prefix/x",
            [
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                "'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ],
            id="bad-prefix",
        ),
    ],
)
def test_is_qualified_name(key: str, msgs: list[str]) -> None:
    assert v.is_qualified_name(key) == msgs


def test_label_value() -> None:
    assert v.is_valid_label_value("") == []
    assert v.is_valid_label_value("a.b-c_d") == []
    assert v.is_valid_label_value("-x") == [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]
    assert v.is_valid_label_value("x" * 64)[0] == "must be no more than 63 bytes"
    # Go's `$` does not match before a trailing newline.
    assert v.is_valid_label_value("x\n") != []


def test_dns1123_label() -> None:
    assert v.is_dns1123_label("my-name") == []
    assert v.is_dns1123_label("a.b") == ["must not contain dots"]
    assert v.is_dns1123_label("A")[0].startswith("a lowercase RFC 1123 label must consist")


def test_validate_labels_paths_and_values() -> None:
    errs = v.validate_labels({"ok": "fine", "bad key": "-bad"}, Path("metadata", "labels"))
    assert [(e.field, e.reason, e.bad_value) for e in errs] == [
        ("metadata.labels", "FieldValueInvalid", "bad key"),
        ("metadata.labels", "FieldValueInvalid", "-bad"),
    ]


def test_validate_annotations() -> None:
    path = Path("metadata", "annotations")
    assert v.validate_annotations({"Upper.Case/Key": "v"}, path) == []  # keys checked lower-cased
    errs = v.validate_annotations({"k": "x" * (256 * 1024)}, path)
    assert [str(e) for e in errs] == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]
    bad = v.validate_annotations({"a b": "x"}, path)
    assert bad[0].bad_value == "a b" and bad[0].reason == "FieldValueInvalid"


def test_object_meta_name() -> None:
    path = Path("metadata")
    assert [str(e) for e in v.validate_object_meta_name("", "", path)] == [
        "metadata.name: Required value: name or generateName is required"
    ]
    assert v.validate_object_meta_name("", "simple-game-server-", path) == []
    assert v.validate_object_meta_name("Bad", None, path)[0].field == "metadata.name"
