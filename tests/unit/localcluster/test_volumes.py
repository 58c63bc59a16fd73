"""Volume projection by tables (configMap with binaryData and items, secret, downwardAPI,
projected) with the kubelet's errors, and the AtomicWriter's layout and update (..data swap, a
subPath's pinned file)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from agones.localcluster.nodes.envvars import PodAddresses
from agones.localcluster.nodes.volumes import (
    AtomicWriter,
    VolumeError,
    referenced_sources,
    volume_payload,
)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


SOURCES: dict[tuple[str, str], Any] = {
    ("configMap", "cfg"): {"data": {"a.ini": "A"}, "binaryData": {"blob": b64(b"\x00\x01")}},
    ("secret", "sec"): {"data": {"tls.crt": b64(b"CERT"), "tls.key": b64(b"KEY")}},
    ("configMap", "bad"): {"binaryData": {"x": "***"}},
}
POD = {
    "metadata": {"name": "p", "namespace": "ns", "labels": {"b": "2", "a": 'q"uote'}},
    "spec": {"containers": [{"name": "c", "resources": {"limits": {"memory": "32Mi"}}}]},
}
ADDRESSES = PodAddresses("127.254.0.1", "127.1.0.1")


def payload(volume: dict[str, Any]) -> Any:
    return volume_payload({"name": "v", **volume}, POD, SOURCES, ADDRESSES, token="TOKEN")


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        pytest.param(
            {"configMap": {"name": "cfg"}},
            {"a.ini": (b"A", 0o644), "blob": (b"\x00\x01", 0o644)},
            id="configMap-data-and-binaryData",
        ),
        pytest.param(
            {
                "configMap": {
                    "name": "cfg",
                    "defaultMode": 0o400,
                    "items": [
                        {"key": "blob", "path": "bin/b"},
                        {"key": "a.ini", "path": "a", "mode": 0o600},
                    ],
                }
            },
            {"bin/b": (b"\x00\x01", 0o400), "a": (b"A", 0o600)},
            id="items-and-modes",
        ),
        pytest.param(
            {"secret": {"secretName": "sec", "items": [{"key": "tls.crt", "path": "crt"}]}},
            {"crt": (b"CERT", 0o644)},
            id="secret-items",
        ),
        pytest.param({"secret": {"secretName": "none", "optional": True}}, {}, id="optional"),
        pytest.param(
            {
                "configMap": {
                    "name": "cfg",
                    "optional": True,
                    "items": [{"key": "missing", "path": "m"}],
                }
            },
            {},
            id="optional-missing-key",
        ),
        pytest.param(
            {
                "downwardAPI": {
                    "items": [
                        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                        {"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}},
                        {
                            "path": "mem",
                            "resourceFieldRef": {
                                "containerName": "c",
                                "resource": "limits.memory",
                                "divisor": "1Mi",
                            },
                        },
                    ]
                }
            },
            {
                "labels": (b'a="q\\"uote"\nb="2"', 0o644),
                "ns": (b"ns", 0o644),
                "mem": (b"32", 0o644),
            },
            id="downwardAPI",
        ),
        pytest.param(
            {
                "projected": {
                    "defaultMode": 0o440,
                    "sources": [
                        {"configMap": {"name": "cfg", "items": [{"key": "a.ini", "path": "a"}]}},
                        {"secret": {"name": "sec", "items": [{"key": "tls.key", "path": "k"}]}},
                        {
                            "downwardAPI": {
                                "items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]
                            }
                        },
                        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                    ],
                }
            },
            {
                "a": (b"A", 0o440),
                "k": (b"KEY", 0o440),
                "n": (b"p", 0o440),
                "token": (b"TOKEN", 0o440),
            },
            id="projected",
        ),
        pytest.param({"emptyDir": {}}, None, id="emptyDir-not-projected"),
        pytest.param({"hostPath": {"path": "/"}}, None, id="hostPath-not-projected"),
    ],
)
def test_volume_payload(volume: dict[str, Any], expected: Any) -> None:
    assert payload(volume) == expected


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        pytest.param({"configMap": {"name": "none"}}, 'configmap "none" not found', id="missing"),
        pytest.param({"secret": {"secretName": "none"}}, 'secret "none" not found', id="secret"),
        pytest.param(
            {"configMap": {"name": "cfg", "items": [{"key": "nope", "path": "x"}]}},
            "configmap references non-existent configmap key: nope",
            id="missing-key",
        ),
        pytest.param(
            {"configMap": {"name": "cfg", "items": [{"key": "a.ini", "path": "../x"}]}},
            "invalid path '../x': must be relative and may not contain '..'",
            id="escaping-path",
        ),
        pytest.param(
            {"configMap": {"name": "cfg", "items": [{"key": "a.ini", "path": "/etc/x"}]}},
            "invalid path '/etc/x': must be relative and may not contain '..'",
            id="absolute-path",
        ),
        pytest.param(
            {"configMap": {"name": "cfg", "defaultMode": 0o1777}},
            "invalid mode 1023: must be a number between 0 and 0777",
            id="mode",
        ),
        pytest.param({"configMap": {"name": "bad"}}, "invalid base64 data", id="base64"),
        pytest.param(
            {
                "projected": {
                    "sources": [
                        {"configMap": {"name": "cfg", "items": [{"key": "a.ini", "path": "x"}]}},
                        {"secret": {"name": "sec", "items": [{"key": "tls.key", "path": "x"}]}},
                    ]
                }
            },
            "duplicate path 'x'",
            id="projected-duplicate",
        ),
        pytest.param(
            {
                "downwardAPI": {
                    "items": [{"path": "m", "resourceFieldRef": {"resource": "limits.cpu"}}]
                }
            },
            "resourceFieldRef: containerName is required in a volume",
            id="downward-container",
        ),
    ],
)
def test_volume_errors(volume: dict[str, Any], message: str) -> None:
    with pytest.raises(VolumeError) as err:
        payload(volume)
    assert str(err.value).startswith(f'MountVolume.SetUp failed for volume "v" : {message}')


def test_referenced_sources() -> None:
    pod = {
        "spec": {
            "volumes": [
                {"name": "a", "configMap": {"name": "c1"}},
                {"name": "b", "secret": {"secretName": "s1"}},
                {
                    "name": "p",
                    "projected": {
                        "sources": [{"secret": {"name": "s2"}}, {"configMap": {"name": "c2"}}]
                    },
                },
                {"name": "e", "emptyDir": {}},
            ]
        }
    }
    assert referenced_sources(pod) == {
        ("configMap", "c1"),
        ("configMap", "c2"),
        ("secret", "s1"),
        ("secret", "s2"),
    }


def test_atomic_writer_layout_and_update(tmp_path: Path) -> None:
    writer = AtomicWriter(tmp_path / "vol")
    assert writer.write({"a": (b"1", 0o644), "dir/b": (b"2", 0o600)}) is True
    vol = tmp_path / "vol"
    first = os.readlink(vol / "..data")
    assert first.startswith("..") and (vol / first).is_dir()
    assert os.readlink(vol / "a") == "..data/a"
    assert os.readlink(vol / "dir") == "..data/dir"
    assert (vol / "dir" / "b").read_bytes() == b"2"
    assert (vol / "dir" / "b").stat().st_mode & 0o777 == 0o600
    pinned = (vol / "a").resolve()  # what a subPath mount binds

    assert writer.write({"a": (b"1", 0o644), "dir/b": (b"2", 0o600)}) is False
    assert os.readlink(vol / "..data") == first

    assert writer.write({"a": (b"new", 0o644), "c": (b"3", 0o644)}) is True
    assert os.readlink(vol / "..data") != first
    assert not (vol / first).exists()  # the old generation is gone
    assert (vol / "a").read_bytes() == b"new"
    assert not os.path.lexists(vol / "dir")
    assert (vol / "c").read_bytes() == b"3"
    assert not pinned.exists()  # a subPath bind keeps the old inode; the path itself is gone
    assert sorted(p.name for p in vol.iterdir() if not p.name.startswith("..")) == ["a", "c"]
