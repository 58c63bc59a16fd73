"""The patch verbs' bodies: a JSON, merge or strategic merge patch applied to the stored object.

`patched_object(info, stored, patch_type, patch)` is the object a PATCH asks for, before it is
coerced and updated as a PUT would be (the registry's `patch`), with kube-apiserver's answers to a
patch that is no patch (400), too long (413) or does not apply (422).
`patch_sets_resource_version` says whether a patch carries a resourceVersion precondition (without
one, a patch that loses a race is applied again to the newer object).
"""

from __future__ import annotations

import copy
from typing import Any

from ...jsonpatch import PatchError, apply_patch_in_place
from . import errors
from .patch import apply_merge_patch, apply_strategic_merge_patch
from .registryops import Obj
from .resources import ResourceInfo


def patched_object(
    info: ResourceInfo, stored: Obj, patch_type: str, patch: Any, base: Obj | None = None
) -> Obj:
    """`stored` (as served) with `patch` applied; a resourceVersion the patch does not set is the
    stored one (a patch applies to the current object unless it names a version). `base` is a
    private copy of `stored` to patch (one is made without it)."""
    base = copy.deepcopy(stored) if base is None else base
    if info.from_storage is not None:
        base = info.from_storage(base)
    if patch_type == "json":
        patch = [] if patch is None else patch  # `null` decodes to the empty patch
        check_json_patch(patch)
    try:
        if patch_type == "json":
            patched = apply_patch_in_place(base, patch)  # `base` is private
        elif patch_type == "merge":
            patched = apply_merge_patch(base, patch)
        elif patch_type == "strategic":
            if info.patch_meta is None:
                raise errors.unsupported_media_type("application/strategic-merge-patch+json")
            patched = apply_strategic_merge_patch(base, patch, info.patch_meta)
        else:
            raise errors.unsupported_media_type(patch_type)
    except PatchError as err:
        if patch_type == "json":
            raise json_patch_failed() from None
        raise errors.StatusError(422, "Invalid", str(err)) from None
    if not isinstance(patched, dict):
        raise errors.bad_request("the patched object is not a JSON object")
    patched_md = patched.get("metadata")
    if not isinstance(patched_md, dict):
        raise errors.bad_request("metadata must be an object")
    # A resourceVersion in the patch is a precondition; otherwise the patch applies to `stored`.
    if not patched_md.get("resourceVersion"):
        patched_md["resourceVersion"] = stored["metadata"]["resourceVersion"]
    return patched


_JSON_TYPES = {dict: "object", str: "string", int: "number", float: "number", bool: "bool"}
# The apiserver's limit on the operations of one JSON patch (maxJSONPatchOperations).
MAX_JSON_PATCH_OPERATIONS = 10000


def check_json_patch(patch: Any) -> None:
    """What jsonpatch.DecodePatch refuses (400), and the operation limit (413)."""
    if not isinstance(patch, list):
        kind = _JSON_TYPES.get(type(patch), "value")
        raise errors.bad_request(
            f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch"
        )
    if len(patch) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.StatusError(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_JSON_PATCH_OPERATIONS}, got {len(patch)}",
        )


def json_patch_failed() -> errors.StatusError:
    """A JSON patch that does not apply (a failed `test`, a missing path): the apiserver wraps the
    library's error in NewGenericServerResponse(422), which keeps none of its text."""
    return errors.StatusError(
        422, "Invalid", "the server rejected our request due to an error in our request", {}
    )


def patch_sets_resource_version(patch_type: str, patch: Any) -> bool:
    if patch_type == "json":
        return isinstance(patch, list) and any(
            isinstance(op, dict) and op.get("path") == "/metadata/resourceVersion" for op in patch
        )
    md = patch.get("metadata") if isinstance(patch, dict) else None
    return isinstance(md, dict) and bool(md.get("resourceVersion"))
