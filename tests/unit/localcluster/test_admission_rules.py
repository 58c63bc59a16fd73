"""Which webhook rules cover a request (operations, groups, versions, resources/subresources, scope)."""

import pytest

from agones.localcluster.apiserver.admission import rule_matches
from agones.localcluster.apiserver.resources import ResourceInfo

GS = ResourceInfo("agones.dev", "v1", "gameservers", "GameServer", True)
NS = ResourceInfo("", "v1", "namespaces", "Namespace", False)


def rule(**kw: object) -> dict:
    base = {
        "operations": ["CREATE"],
        "apiGroups": ["agones.dev"],
        "apiVersions": ["v1"],
        "resources": ["gameservers"],
    }
    return {**base, **kw}


@pytest.mark.parametrize(
    ("r", "op", "info", "sub", "matches"),
    [
        pytest.param(rule(), "CREATE", GS, "", True, id="exact"),
        pytest.param(rule(), "UPDATE", GS, "", False, id="other-operation"),
        pytest.param(rule(operations=["*"]), "DELETE", GS, "", True, id="any-operation"),
        pytest.param(
            rule(apiGroups=["*"], apiVersions=["*"]),
            "CREATE",
            GS,
            "",
            True,
            id="wildcard-group-version",
        ),
        pytest.param(rule(), "CREATE", GS, "status", False, id="subresource-not-covered"),
        pytest.param(
            rule(resources=["gameservers/status"]), "CREATE", GS, "status", True, id="subresource"
        ),
        pytest.param(
            rule(resources=["*"]), "CREATE", GS, "status", False, id="star-excludes-subresources"
        ),
        pytest.param(rule(resources=["*/*"]), "CREATE", GS, "status", True, id="star-star"),
        pytest.param(
            rule(resources=["gameservers/*"]), "CREATE", GS, "status", True, id="all-subresources"
        ),
        pytest.param(rule(scope="Cluster"), "CREATE", GS, "", False, id="scope-cluster"),
        pytest.param(rule(scope="Namespaced"), "CREATE", GS, "", True, id="scope-namespaced"),
        pytest.param(
            rule(apiGroups=[""], resources=["namespaces"], scope="Namespaced"),
            "CREATE",
            NS,
            "",
            False,
            id="namespace-is-cluster-scoped",
        ),
    ],
)
def test_rule_matches(r: dict, op: str, info: ResourceInfo, sub: str, matches: bool) -> None:
    assert rule_matches(r, op, info, sub) is matches
