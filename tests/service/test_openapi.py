"""`openapi.yaml` is the contract: it must match the app, and the app must honour it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, settings

from rlvr.service.app import create_app, openapi_document

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "openapi.yaml"


def test_committed_spec_matches_the_app() -> None:
    committed = yaml.safe_load(SPEC.read_text())
    assert committed == create_app().openapi(), "openapi.yaml is stale: run `make openapi`"
    assert yaml.safe_load(openapi_document()) == committed


def test_served_spec_matches_committed(http: httpx.Client) -> None:
    assert http.get("/openapi.json").json() == yaml.safe_load(SPEC.read_text())


schema = schemathesis.openapi.from_path(str(SPEC))
CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_schema_conformance,
]


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.filterwarnings("ignore")
def test_api_conforms(case: schemathesis.Case, live_server: str) -> None:
    case.call_and_validate(base_url=live_server, checks=CHECKS, timeout=60)


def test_ground_truth_schema_of_each_builtin_verifier_is_published(http: httpx.Client) -> None:
    spec = yaml.safe_load(SPEC.read_text())
    components = spec["components"]["schemas"]
    conditions = {
        c["if"]["properties"]["verifier"]["const"]: c["then"]["properties"]["ground_truth"]["$ref"]
        for c in components["GradeItem"]["allOf"]
    }
    assert set(conditions) == {"code", "format", "math", "proof", "compile", "ifeval"}
    served = {v["name"]: v.get("ground_truth_schema") for v in http.get("/v1/verifiers").json()["verifiers"]}
    for name, ref in conditions.items():
        published = components[ref.rsplit("/", 1)[1]]
        if "$defs" not in served[name]:  # same schema, where no refs had to be moved
            assert published == served[name], name
    code = components["GroundTruth.code"]
    assert all(ref["$ref"].startswith("#/components/schemas/GroundTruth.code.") for ref in code["oneOf"])
