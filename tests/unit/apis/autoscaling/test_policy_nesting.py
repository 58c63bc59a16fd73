"""The policy types nest as Agones' CRD nests them: finitely, each level with fewer choices."""

import msgspec
import msgspec.inspect as mi

from agones.apis.autoscaling.v1 import FleetAutoscaler
from agones.apis.meta import schema
from tests.unit.apis.autoscaling.helpers import decode, fas


def _structs_on_paths(t: mi.Type, stack: tuple[type, ...] = ()) -> int:
    """Depth of the deepest struct nesting; fails on a cycle (a CRD schema cannot recurse)."""
    if isinstance(t, mi.StructType):
        assert t.cls not in stack, f"recursive type: {[c.__name__ for c in (*stack, t.cls)]}"
        return 1 + max(
            (_structs_on_paths(f.spec.type, (*stack, t.cls)) for f in schema.struct_fields(t.cls)),
            default=0,
        )
    if isinstance(t, mi.ListType):
        return _structs_on_paths(schema.unwrap(t.item_type).type, stack)
    if isinstance(t, mi.DictType):
        return _structs_on_paths(schema.unwrap(t.value_type).type, stack)
    if isinstance(t, mi.UnionType):
        return max((_structs_on_paths(m, stack) for m in t.types), default=0)
    return 0


def test_schema_is_finite() -> None:
    assert _structs_on_paths(mi.type_info(FleetAutoscaler)) < 15


def test_fields_the_crd_does_not_nest_are_pruned() -> None:
    obj = decode(
        fas(
            {
                "fleetName": "f",
                "policy": {
                    "type": "Chain",
                    "chain": [
                        {
                            "id": "a",
                            "type": "Schedule",
                            "chain": [{"id": "inner"}],
                            "schedule": {"policy": {"type": "Buffer", "schedule": {}, "chain": []}},
                        }
                    ],
                },
            }
        )
    )
    assert msgspec.to_builtins(obj.spec)["policy"]["chain"] == [
        {"id": "a", "type": "Schedule", "schedule": {"policy": {"type": "Buffer"}}}
    ]
