"""Pure pieces of the StatefulSet controller (kube-controller-manager's
`pkg/controller/statefulset/stateful_set_utils.go`): pod identity, storage, revisions.

* A set's pod of ordinal N is named `<set>-N` (`get_ordinal` parses it back, -1 when the name is
  not the set's), carries the labels `statefulset.kubernetes.io/pod-name: <set>-N`,
  `apps.kubernetes.io/pod-index: N` and `controller-revision-hash: <revision name>`, and has
  `spec.hostname: <set>-N` and `spec.subdomain: <serviceName>` (so the cluster DNS answers
  `<set>-N.<service>.<ns>.svc.cluster.local`).
* Each `volumeClaimTemplates[]` entry becomes the claim `<claim>-<set>-N` (`claim_name`), labelled
  with the set's `selector.matchLabels`, and a `persistentVolumeClaim` volume of that name in the
  pod, replacing a template volume of the same name.
* A revision is a ControllerRevision `<set>-<hash>` whose `data` is
  `{"spec": {"template": {..., "$patch": "replace"}}}` (`revision_data`); the hash is FNV-32a over
  that data and the set's collision count (`revision_hash`). `apply_revision` gives back the set
  with the revision's template.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ..apiserver.apps import fnv32a, safe_encode

Obj = dict[str, Any]
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
HASH_LABEL = "controller.kubernetes.io/hash"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def get_ordinal(set_name: str, pod_name: str) -> int:
    """The ordinal of `<set>-N`, or -1 when the name is not one of the set's."""
    match = _ORDINAL.match(pod_name)
    if match is None or match.group(1) != set_name:
        return -1
    return int(match.group(2))


def pod_name(set_name: str, ordinal: int) -> str:
    return f"{set_name}-{ordinal}"


def claim_name(claim: str, set_name: str, ordinal: int) -> str:
    return f"{claim}-{set_name}-{ordinal}"


def start_ordinal(sts: Obj) -> int:
    return int(((sts.get("spec") or {}).get("ordinals") or {}).get("start") or 0)


def owner_reference(sts: Obj) -> Obj:
    md = sts["metadata"]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def claim_templates(sts: Obj) -> list[Obj]:
    return [c for c in (sts.get("spec") or {}).get("volumeClaimTemplates") or [] if c]


def persistent_volume_claims(sts: Obj, ordinal: int) -> list[Obj]:
    """The claims the pod of `ordinal` mounts (`getPersistentVolumeClaims`), without owners."""
    md = sts["metadata"]
    match_labels = ((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    out = []
    for template in claim_templates(sts):
        tmd = template.get("metadata") or {}
        labels = {**(tmd.get("labels") or {}), **match_labels}
        claim: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": claim_name(str(tmd.get("name", "")), md["name"], ordinal),
                "namespace": md.get("namespace", ""),
                "labels": labels,
            },
            "spec": copy.deepcopy(template.get("spec") or {}),
        }
        if tmd.get("annotations"):
            claim["metadata"]["annotations"] = dict(tmd["annotations"])
        out.append(claim)
    return out


def new_stateful_set_pod(sts: Obj, ordinal: int, revision: str) -> Obj:
    """`newVersionedStatefulSetPod`'s pod: the template, its identity, storage and revision."""
    spec = sts.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    tmd = template.get("metadata") or {}
    name = pod_name(sts["metadata"]["name"], ordinal)
    labels = {
        **(tmd.get("labels") or {}),
        POD_NAME_LABEL: name,
        POD_INDEX_LABEL: str(ordinal),
        REVISION_LABEL: revision,
    }
    pod_spec = template.get("spec") or {}
    pod_spec["hostname"] = name
    if spec.get("serviceName"):
        pod_spec["subdomain"] = spec["serviceName"]
    claims = {str((c.get("metadata") or {}).get("name", "")) for c in claim_templates(sts)}
    volumes = [v for v in pod_spec.get("volumes") or [] if v.get("name") not in claims]
    for claim in sorted(claims):
        volumes.append(
            {
                "name": claim,
                "persistentVolumeClaim": {
                    "claimName": claim_name(claim, sts["metadata"]["name"], ordinal)
                },
            }
        )
    if volumes:
        pod_spec["volumes"] = volumes
    md: Obj = {
        "name": name,
        "namespace": sts["metadata"].get("namespace", ""),
        "labels": labels,
        "ownerReferences": [owner_reference(sts)],
    }
    if tmd.get("annotations"):
        md["annotations"] = dict(tmd["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": pod_spec}


def identity_matches(sts: Obj, pod: Obj) -> bool:
    """Whether the pod has its ordinal's name, labels and network identity (`identityMatches`)."""
    ordinal = get_ordinal(sts["metadata"]["name"], pod["metadata"]["name"])
    labels = pod["metadata"].get("labels") or {}
    spec = pod.get("spec") or {}
    service = (sts.get("spec") or {}).get("serviceName") or ""
    return (
        ordinal >= 0
        and labels.get(POD_NAME_LABEL) == pod["metadata"]["name"]
        and labels.get(POD_INDEX_LABEL) == str(ordinal)
        and (not service or spec.get("subdomain") == service)
    )


def revision_data(sts: Obj) -> Obj:
    """The patch a ControllerRevision stores: the whole template, replacing."""
    template = copy.deepcopy((sts.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def revision_hash(data: Obj, collision_count: int | None) -> str:
    encoded = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        encoded += str(collision_count).encode()
    return safe_encode(str(fnv32a(encoded)))


def new_revision(sts: Obj, revision: int, collision_count: int | None) -> Obj:
    """A ControllerRevision of the set's current template (`newRevision`)."""
    data = revision_data(sts)
    digest = revision_hash(data, collision_count)
    labels = dict(
        ((sts.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
    )
    labels[HASH_LABEL] = digest
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{sts['metadata']['name']}-{digest}",
            "namespace": sts["metadata"].get("namespace", ""),
            "labels": labels,
            "ownerReferences": [owner_reference(sts)],
        },
        "data": data,
        "revision": revision,
    }


def apply_revision(sts: Obj, revision: Obj) -> Obj:
    """The set with the template of `revision` (`ApplyRevision`)."""
    out = copy.deepcopy(sts)
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    out.setdefault("spec", {})["template"] = template
    return out


def revision_of(pod: Obj) -> str:
    return str((pod["metadata"].get("labels") or {}).get(REVISION_LABEL, ""))


def equal_revision(a: Obj, b: Obj) -> bool:
    return a.get("data") == b.get("data")
