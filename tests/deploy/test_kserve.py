"""Offline checks of deploy/kserve: the KServe ServingRuntime and InferenceService for atento.

kubernetes-validate has no schema for KServe's CRDs, so each manifest is validated (jsonschema) against a
small schema vendored in tests/deploy/schemas, written from the CRD: its required fields, the types and
enums of the fields used, and no unknown field. The checks below tie the two manifests to each other and
to the service: the runtime serves the format and protocol the InferenceService asks for, on the port
and probe paths atento answers, with ATENTO_* variables that are settings.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
KSERVE = REPO / "deploy" / "kserve"
SCHEMAS = Path(__file__).parent / "schemas"
MANIFESTS = {
    "servingruntime.yaml": SCHEMAS / "kserve-servingruntime.schema.json",
    "inferenceservice.yaml": SCHEMAS / "kserve-inferenceservice.schema.json",
}


def _doc(name: str) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all((KSERVE / name).read_text(encoding="utf-8")) if d is not None]
    return doc


def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(MANIFESTS[name].read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_manifest_validates_against_the_vendored_crd_schema(name: str) -> None:
    _validator(name).validate(_doc(name))


@pytest.mark.parametrize(
    ("name", "path", "bad"),
    [
        ("servingruntime.yaml", ("spec", "protocolVersions"), ["v3"]),
        ("servingruntime.yaml", ("spec", "containerz"), []),
        ("servingruntime.yaml", ("spec", "containers"), []),
        ("inferenceservice.yaml", ("spec", "predictor", "model", "protocolVersion"), "v9"),
        ("inferenceservice.yaml", ("spec", "predictor", "model", "storageUrl"), "pvc://x"),
        ("inferenceservice.yaml", ("spec", "predictor", "minReplicas"), "one"),
    ],
)
def test_the_schemas_refuse_a_broken_manifest(name: str, path: tuple[str, ...], bad: Any) -> None:
    doc = copy.deepcopy(_doc(name))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = bad
    with pytest.raises(jsonschema.ValidationError):
        _validator(name).validate(doc)


def test_the_inference_service_runs_on_the_atento_runtime_with_v2() -> None:
    runtime, service = _doc("servingruntime.yaml"), _doc("inferenceservice.yaml")
    model = service["spec"]["predictor"]["model"]
    assert model["runtime"] == runtime["metadata"]["name"]
    formats = {(f["name"], f.get("version")) for f in runtime["spec"]["supportedModelFormats"]}
    assert (model["modelFormat"]["name"], model["modelFormat"].get("version")) in formats
    assert model["protocolVersion"] == "v2" and "v2" in runtime["spec"]["protocolVersions"]


def test_the_runtime_container_matches_the_service() -> None:
    from service.http.app import create_app
    from service.http.settings import ServiceSettings

    (container,) = _doc("servingruntime.yaml")["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    env |= {e["name"]: e.get("value") for e in _doc("inferenceservice.yaml")["spec"]["predictor"]["model"]["env"]}
    fields = set(ServiceSettings.model_fields)
    unknown = [name for name in env if name.removeprefix("ATENTO_").lower().split("__")[0] not in fields]
    assert not unknown, f"not ServiceSettings fields: {unknown}"
    assert env["ATENTO_MODEL_REPOSITORY"] == "/mnt/models"  # where KServe's storage initializer puts storageUri
    assert "ATENTO_MODEL_DIR" not in env  # a repository, not one model directory
    assert [p["containerPort"] for p in container["ports"]] == [int(env["ATENTO_PORT"])]
    routes = set(create_app(ServiceSettings.model_validate({})).openapi()["paths"])
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] in routes, probe
        assert container[probe]["httpGet"]["port"] == int(env["ATENTO_PORT"])
    grace = _doc("inferenceservice.yaml")["spec"]["predictor"]["terminationGracePeriodSeconds"]
    assert grace > float(env["ATENTO_SHUTDOWN_GRACE_S"])
