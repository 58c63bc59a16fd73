"""`python -m tools.codegen`: writes every output, `--check` fails on stale, missing or leftover
files; the generated clients are marked and named after the Go originals."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tools.codegen.__main__ as codegen
from tools.codegen import pytext, typed_clients, typed_informers, typed_resources
from tools.codegen.generators import GENERATORS, OWNED_DIRS

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def tmp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(codegen, "ROOT", tmp_path)
    # Generators read sources from the tree (the SDK's .proto files); give them a copy.
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    return tmp_path


def test_check_fails_until_generated_then_on_any_staleness(
    tmp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert codegen.main(["--check"]) == 1  # nothing generated yet
    assert codegen.main([]) == 0
    assert codegen.main(["--check"]) == 0

    stale = tmp_root / "crds" / "gameserver.yaml"
    stale.write_text(stale.read_text().replace("minimum: 1", "minimum: 2", 1))
    capsys.readouterr()
    assert codegen.main(["--check"]) == 1
    assert "crds/gameserver.yaml" in capsys.readouterr().err

    assert codegen.main([]) == 0
    leftover = tmp_root / "src/client/versioned/typed/agones/v1/old.py"
    leftover.write_text("# an old generated file\n")
    assert codegen.main(["--check"]) == 1
    assert "old.py (not generated)" in capsys.readouterr().err
    assert codegen.main([]) == 0
    assert not leftover.exists()

    (tmp_root / "src/client/listers/agones/v1/gameserver.py").unlink()
    assert codegen.main(["--check"]) == 1


def test_repository_is_up_to_date() -> None:
    for name, generator in GENERATORS.items():
        for rel, content in generator(ROOT).items():
            assert (ROOT / rel).read_text() == content, f"{rel} is stale ({name})"


def test_generated_files_carry_the_header() -> None:
    for owned in OWNED_DIRS["typed-clients"]:
        files = list((ROOT / owned).rglob("*.py"))
        assert files
        for path in files:
            assert path.read_text().startswith(pytext.HEADER), path


def test_generation_is_deterministic() -> None:
    assert typed_clients.generate(ROOT) == typed_clients.generate(ROOT)


@pytest.mark.parametrize(
    ("kind", "plural", "expected"),
    [
        ("GameServer", "gameservers", "game_servers"),
        ("GameServerSet", "gameserversets", "game_server_sets"),
        ("GameServerAllocationPolicy", "gameserverallocationpolicies", "game_server_allocation_policies"),
        ("FleetAutoscaler", "fleetautoscalers", "fleet_autoscalers"),
        ("Pod", "pods", "pods"),
        ("Lease", "leases", "leases"),
    ],
    ids=["gs", "gss", "gsap", "fas", "pod", "lease"],
)  # fmt: skip
def test_plural_accessor_names(kind: str, plural: str, expected: str) -> None:
    assert typed_resources.plural_snake(kind, plural) == expected


@pytest.mark.parametrize(
    ("frm", "target", "expected"),
    [
        ("client.versioned.clientset", "client.rest", "..rest"),
        ("client.versioned.typed.agones.v1.gameserver", "client.gentype", ".....gentype"),
        ("client.listers.agones.v1.gameserver", "apis.agones.v1.gameserver", ".....apis.agones.v1.gameserver"),
        ("client.informers.externalversions.factory", "client.informers.externalversions.agones.interface", ".agones.interface"),
    ],
    ids=["sibling", "up-four", "other-root", "child"],
)  # fmt: skip
def test_relative_imports(frm: str, target: str, expected: str) -> None:
    assert pytext.relative(frm, target) == expected


def test_allocation_is_create_only_and_status_follows_the_crd() -> None:
    by_kind = {r.kind: r for r in typed_resources.resources()}
    assert not by_kind["GameServer"].status
    assert by_kind["Fleet"].status and by_kind["GameServerSet"].status
    assert by_kind["Pod"].status and not by_kind["Lease"].status
    if "GameServerAllocation" in by_kind:
        assert by_kind["GameServerAllocation"].create_only


LONG = typed_resources.Res(
    "example.agones.dev",
    "v1",
    "VeryLongKindNameForCheckingTheLayoutOfGeneratedCode",
    "verylongkindnameforcheckingthelayoutofgeneratedcodes",
    namespaced=True,
    status=True,
    type_module="apis.example.v1.verylong",
)

CLUSTER_LONG = dataclasses.replace(LONG, namespaced=False, type_module=None)


@pytest.mark.parametrize(
    "render",
    [
        lambda: typed_clients._typed_module(LONG),
        lambda: typed_informers._lister_module(LONG),
        lambda: typed_informers._informer_module(LONG),
        lambda: typed_clients._group_client_module("example", "v1", [LONG]),
        lambda: typed_clients._resources_module([LONG]),
        lambda: typed_informers._version_interface_module("example", "v1", [LONG]),
        lambda: typed_clients._typed_module(CLUSTER_LONG),
        lambda: typed_informers._lister_module(CLUSTER_LONG),
        lambda: typed_clients._group_client_module("example", "v1", [CLUSTER_LONG]),
    ],
    ids=[
        "typed",
        "lister",
        "informer",
        "group-client",
        "resources",
        "version-interface",
        "cluster-typed",
        "cluster-lister",
        "cluster-group-client",
    ],
)
def test_long_names_are_emitted_in_ruff_format(render: Any) -> None:
    """Generated text is already formatted, even where long names force line breaks."""
    text = render()
    name = "src/client/versioned/typed/example/v1/verylong.py"
    for args in (["format", "--check"], ["check", "--quiet"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "--stdin-filename", name, "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert result.returncode == 0, (args, result.stdout, result.stderr, text)
