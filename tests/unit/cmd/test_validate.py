"""`agones validate`: prints stored forms of valid manifests, every error of invalid ones."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from agones.cmd.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "agones"


def test_valid_manifest_prints_defaulted_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-f", str(FIXTURES / "gameserver-static.yaml")]) == 0
    out = list(yaml.safe_load_all(capsys.readouterr().out))
    assert out[0]["status"]["state"] == "Creating"
    assert out[0]["spec"]["sdkServer"] == {"logLevel": "Info", "grpcPort": 9357, "httpPort": 9358}


def test_json_output_and_multiple_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both = tmp_path / "both.yaml"
    both.write_text(
        (FIXTURES / "fleet-recreate.yaml").read_text()
        + "\n---\n"
        + (FIXTURES / "gameserverset.yaml").read_text()
    )
    assert main(["validate", "-f", str(both), "-o", "json"]) == 0
    out = capsys.readouterr().out
    assert '"kind": "Fleet"' in out and '"kind": "GameServerSet"' in out


def test_invalid_manifest_prints_all_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-f", str(FIXTURES / "gameserver-invalid.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.startswith('GameServer.agones.dev "this-game-server-name-is-far-too-long')
    want = (FIXTURES / "expected" / "gameserver-invalid.errors").read_text().splitlines()
    assert all(line in err for line in want)


def test_feature_gates_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = yaml.safe_load((FIXTURES / "gameserver-static.yaml").read_text())
    manifest["spec"]["players"] = {"initialCapacity": 4}
    path = tmp_path / "players.json"
    path.write_text(json.dumps(manifest))
    assert main(["validate", "-f", str(path)]) == 1
    assert "feature flag PlayerTracking" in capsys.readouterr().err
    assert main(["validate", "-f", str(path), "--feature-gates", "PlayerTracking=true"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["status"]["players"]["capacity"] == 4
    assert main(["validate", "-f", str(path), "--feature-gates", "Nope=true"]) == 2


def test_update_against_old_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = FIXTURES / "gameserverset.yaml"
    new = tmp_path / "new.yaml"
    new.write_text(old.read_text().replace("example.com/game:1", "example.com/game:2"))
    assert main(["validate", "-f", str(new), "--old", str(old)]) == 1
    assert "GameServerSet template cannot be updated" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("apiVersion: v9\nkind: Nope\n", 'no kind "Nope"'),
        ("kind: [unclosed\n", "error:"),
        ("", "no objects"),
        ("- just\n- a list\n", "is invalid"),
    ],
)
def test_unusable_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["validate", "-f", "-"]) == 1
    assert message in capsys.readouterr().err


def test_unquoted_timestamps_stay_strings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # kubectl (sigs.k8s.io/yaml) reads `start: 2024-02-20T16:04:04Z` as a string; PyYAML's safe
    # loader would make it a datetime, which the schema then rejects as "must be of type string".
    manifest = """
apiVersion: autoscaling.agones.dev/v1
kind: FleetAutoscaler
metadata: {name: sched}
spec:
  fleetName: simple
  policy:
    type: Schedule
    schedule:
      between: {start: 2024-02-20T16:04:04Z, end: 2099-02-20T16:04:04Z}
      activePeriod: {startCron: "* * * * *"}
      policy:
        type: Buffer
        buffer: {bufferSize: 5, minReplicas: 10, maxReplicas: 20}
"""
    monkeypatch.setattr("sys.stdin", io.StringIO(manifest))
    assert main(["validate", "-f", "-", "-o", "json"]) == 0
    between = json.loads(capsys.readouterr().out)["spec"]["policy"]["schedule"]["between"]
    assert between == {"start": "2024-02-20T16:04:04Z", "end": "2099-02-20T16:04:04Z"}


def test_update_reads_both_objects_with_schema_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A counter left to the schema's defaults is the same counter in the old and the new object.
    manifest = yaml.safe_load((FIXTURES / "gameserverset.yaml").read_text())
    manifest["spec"]["template"]["spec"]["counters"] = {"rooms": {}}
    path = tmp_path / "gss.json"
    path.write_text(json.dumps(manifest))
    assert main(["validate", "-f", str(path), "--old", str(path)]) == 0, capsys.readouterr().err


def test_bad_eviction_is_refused_with_its_status_twin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The line a cluster running Agones answers (its webhook copies spec.eviction to status)."""
    manifest = yaml.safe_load((FIXTURES / "gameserver-static.yaml").read_text())
    manifest["spec"]["eviction"] = {"safe": "Sometimes"}
    path = tmp_path / "eviction.yaml"
    path.write_text(yaml.safe_dump(manifest))
    assert main(["validate", "-f", str(path)]) == 1
    supported = 'supported values: "Always", "OnUpgrade", "Never"'
    name = manifest["metadata"]["name"]
    assert capsys.readouterr().err.strip() == (
        f'GameServer.agones.dev "{name}" is invalid: '
        f'[spec.eviction.safe: Unsupported value: "Sometimes": {supported}, '
        f'status.eviction.safe: Unsupported value: "Sometimes": {supported}]'
    )
