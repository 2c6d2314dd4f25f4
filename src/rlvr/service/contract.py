"""What the OpenAPI document says about each built-in verifier's `ground_truth`.

`GradeItem.ground_truth` is typed "any" because plugins bring their own schemas; for
the built-in verifiers the document adds one `if verifier == name then ground_truth:
<schema>` condition per verifier (JSON Schema 2020-12, which OpenAPI 3.1 uses), so that
a client or a schema-driven fuzzer can build valid items. Only built-ins are listed, so
the document does not depend on what plugins a host has installed; `GET /v1/verifiers`
gives every verifier's schema at run time.
"""

from __future__ import annotations

from typing import Any

from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.registry import Registry

COMPONENT_PREFIX = "GroundTruth."


def ground_truth_conditions(config: BuiltinConfig) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(components to add, `allOf` conditions for GradeItem)."""
    registry = Registry(config, use_entry_points=False)
    components: dict[str, Any] = {}
    conditions: list[dict[str, Any]] = []
    for name in registry.names():
        prefix = f"{COMPONENT_PREFIX}{name}"
        adapter = registry.get(name).ground_truth_adapter
        schema = adapter.json_schema(ref_template=f"#/components/schemas/{prefix}.{{model}}")
        for model, definition in schema.pop("$defs", {}).items():
            components[f"{prefix}.{model}"] = definition
        components[prefix] = schema
        conditions.append(
            {
                "if": {"properties": {"verifier": {"const": name}}, "required": ["verifier"]},
                "then": {"properties": {"ground_truth": {"$ref": f"#/components/schemas/{prefix}"}}},
            }
        )
    return components, conditions
