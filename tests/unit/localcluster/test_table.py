"""Table rendering: JSONPath cells and human durations."""

import pytest

from agones.localcluster.apiserver.table import columns_for, human_duration, jsonpath, to_table


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(-5, "<invalid>", id="future"),
        pytest.param(0, "0s", id="zero"),
        pytest.param(119, "119s", id="under-two-minutes"),
        pytest.param(125, "2m5s", id="minutes-seconds"),
        pytest.param(600, "10m", id="ten-minutes"),
        pytest.param(3 * 3600 + 600, "3h10m", id="hours-minutes"),
        pytest.param(10 * 3600, "10h", id="hours"),
        pytest.param(3 * 86400 + 3600, "3d1h", id="days-hours"),
        pytest.param(30 * 86400, "30d", id="days"),
        pytest.param(3 * 365 * 86400, "3y", id="years"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


OBJ = {
    "spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param(".spec.ports[1].port", 2, id="index"),
        pytest.param('.status.conditions[?(@.type=="Ready")].status', "True", id="filter"),
        pytest.param(".spec.missing", None, id="missing"),
        pytest.param(".spec.ports[5].port", None, id="index-out-of-range"),
    ],
)
def test_jsonpath(path: str, value: object) -> None:
    assert jsonpath(OBJ, path) == value


def test_table_rows_follow_columns() -> None:
    cols = [{"name": "Port", "type": "integer", "jsonPath": ".spec.ports[0].port"}]
    table = to_table([{"metadata": {"name": "x"}, **OBJ}], cols, {"resourceVersion": "5"})
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Port"]
    assert table["rows"][0]["cells"] == ["x", 1]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert [c["name"] for c in columns_for(None)] == ["Name", "Age"]
