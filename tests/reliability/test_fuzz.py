"""Fuzzing: schemathesis against atento's own OpenAPI schema, and hypothesis on hostile request bodies.

Schemathesis covers every operation of the schema, with valid and invalid data, in-process over ASGI
(many examples) and over a real uvicorn (fewer): no 5xx, and every response matches the schema (status
documented, content type, body). The property tests send what a schema-driven generator will not:
arbitrary Unicode and control characters, empty and overlong inputs, huge numbers and NaN/Infinity
literals (Python's json, and so Starlette, accepts them). Each gets a clear 4xx or a correct answer.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from harness import RUNTIME, Served, make_settings, real_server
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.failures import FailureGroup
from schemathesis.python import asgi

from service.engine.settings import BatchingSettings
from service.http.app import create_app

pytestmark = pytest.mark.slow

# Small limits keep each generated request cheap: the point is the breadth of inputs, not their size.
LIMITS = {"max_new_tokens_limit": 8, "max_batch_inputs": 3, "max_num_beams": 2, "request_timeout_s": 30}
BATCHING = BatchingSettings(max_batch_size=8, max_queue=64)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


# Every operation in atento's schema; building an app loads nothing, so this is cheap at import time.
OPERATIONS = [
    (method.upper(), path) for path, item in create_app(make_settings()).openapi()["paths"].items() for method in item
]


@pytest.fixture
def asgi_schema(served_model_dir: Path) -> Any:
    """The real app in-process, on atento's tiny model and on an imported one (tests/conftest.py).
    Function-scoped: schemathesis' pytest plugin ends every ASGI lifespan (so the engine) when a test ends."""
    settings = make_settings(model_dir=served_model_dir, batching=BATCHING, runtime=RUNTIME, **LIMITS)
    app = create_app(settings)
    with asgi.get_client(app) as client:  # starts the app's lifespan (the engine) in schemathesis' portal
        deadline = time.monotonic() + 60
        while client.get("/health/ready").status_code != 200:
            assert time.monotonic() < deadline, "the engine never became ready"
            time.sleep(0.05)
    return schemathesis.openapi.from_asgi("/openapi.json", app)


@pytest.fixture(scope="module")
def live(served_model_dir: Path) -> Iterator[Served]:
    with real_server(served_model_dir, batching=BATCHING, **LIMITS) as served:
        yield served


def _fuzz(operation: Any, *, max_examples: int, **call: Any) -> None:
    """Valid and invalid cases of one operation; every response must pass CHECKS."""
    # schemathesis.pytest's lazy `from_fixture` breaks on pytest 9 (Function._nodeid), so drive
    # hypothesis directly with each operation's strategy.
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

        @settings(max_examples=max_examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(generation_mode=mode))
        def check(case: Any) -> None:
            case.call_and_validate(checks=CHECKS, **call)

        try:
            check()
        except Unsatisfiable:
            assert mode is GenerationMode.NEGATIVE, "no valid case of an operation could be generated"
            # Nothing to make invalid: no parameters and no body, or only a free-form string.


def test_schema_in_process(asgi_schema: Any) -> None:
    """Every operation in one test: the engine starts once (see asgi_schema)."""
    failures = {}
    for method, path in OPERATIONS:
        try:
            _fuzz(asgi_schema[path][method], max_examples=25)
        except (Exception, FailureGroup) as error:  # report every failing operation, not only the first
            failures[f"{method} {path}"] = error
    assert not failures, "\n\n".join(f"{label}: {error!r}" for label, error in failures.items())
    answered = asgi_schema.app.state.metrics.requests.collect()[0].samples
    posts = sum(
        s.value
        for s in answered
        if s.name.endswith("_total")
        and s.labels["route"] != "unmatched"
        and s.labels["route"] in {"/generate", "/generate_stream", "/", "/attention"}
    )
    assert posts >= 4 * 25, f"only {posts} generate/attention requests were made"  # the fuzzing really ran


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_schema_over_uvicorn(live: Served, method: str, path: str) -> None:
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    _fuzz(schema[path][method], max_examples=6, timeout=30)


# ---- property tests: hostile values the schema does not describe ----------------------------------------

HOSTILE_TEXT = st.one_of(
    st.text(max_size=200),  # any Unicode scalar value, control characters included
    st.text(st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Mn"]), max_size=50),
    st.sampled_from(["", " ", "\x00", "\ufeff", "\u202e", "\ud800", "a\udfffb", "\U0010ffff", "</s><pad>"]),
    st.integers(200, 5000).map(lambda n: "uno " * n),  # past max_source_tokens
)
HUGE_OR_ODD_NUMBER = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 2**63, 2**64, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1", None, True, [], {}]),
)
PARAMETER_NAMES = (
    "max_new_tokens", "temperature", "top_k", "top_p", "seed", "repetition_penalty", "num_beams",
    "length_penalty", "best_of", "typical_p", "top_n_tokens", "truncate",
)  # fmt: skip
PARAMETERS = st.one_of(
    st.dictionaries(st.sampled_from(PARAMETER_NAMES), HUGE_OR_ODD_NUMBER, max_size=4),
    st.fixed_dictionaries(
        {},
        optional={
            "do_sample": st.booleans(),
            "details": st.booleans(),
            "stop": st.lists(HOSTILE_TEXT, max_size=3),
            "max_new_tokens": st.integers(1, 8),
            "num_beams": st.integers(1, 2),
            "seed": st.integers(0, 2**63 - 1),
        },
    ),
)


def _post(url: str, path: str, body: Any) -> httpx.Response:
    # allow_nan: send NaN/Infinity literals as a hostile client would; json.loads on the server parses them.
    content = json.dumps(body, allow_nan=True).encode()  # ASCII: lone surrogates travel as \\u escapes
    return httpx.post(f"{url}{path}", content=content, headers={"content-type": "application/json"}, timeout=30)


def _assert_clear_error(response: httpx.Response) -> None:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    body = response.json()
    assert isinstance(body["error"], str) and body["error"] and isinstance(body["error_type"], str)


def _stream_text(response: httpx.Response) -> str:
    events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    assert events and "error" not in events[-1], events
    return str(events[-1]["generated_text"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(inputs=st.one_of(HOSTILE_TEXT, st.lists(HOSTILE_TEXT, max_size=4)), parameters=PARAMETERS)
# Found by this test once; kept as explicit examples (each was a 500 before the fix).
@example(inputs="ab", parameters={"num_beams": 2, "length_penalty": 1e308})  # OverflowError in beam scores
@example(inputs="ab", parameters={"num_beams": 2, "length_penalty": -1e308})  # ZeroDivisionError
@example(inputs="ab", parameters={"stop": ["\ud800"]})  # an unpaired surrogate
@example(inputs="ab", parameters={"num_beams": 2, "repetition_penalty": math.inf})
@example(inputs="ab", parameters={"temperature": 1e-320, "seed": 1})
def test_generate_hostile_bodies(live: Served, inputs: Any, parameters: dict[str, Any]) -> None:
    body = {"inputs": inputs, "parameters": parameters}
    response = _post(live.url, "/generate", body)
    if response.status_code != 200:
        _assert_clear_error(response)
        return
    results = response.json()
    for result in results if isinstance(results, list) else [results]:
        details = result.get("details")
        if details is not None:
            assert details["generated_tokens"] == len(details["tokens"]) <= LIMITS["max_new_tokens_limit"] + 1
            assert "".join(t["text"] for t in details["tokens"]) == result["generated_text"]
    # As in TGI, temperature, top_k or top_p turn sampling on too; unseeded samples may differ.
    sampled = bool({"do_sample", "temperature", "top_k", "top_p"} & set(parameters)) and "seed" not in parameters
    if isinstance(inputs, str) and not sampled:
        # The same answer through the other route: the stream's final text (greedy, beam or seeded).
        stream = _post(live.url, "/generate_stream", body)
        assert stream.status_code == 200, stream.text
        assert _stream_text(stream) == results["generated_text"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    inputs=HOSTILE_TEXT,
    target=st.one_of(st.none(), HOSTILE_TEXT),
    layers=st.one_of(st.none(), st.lists(HUGE_OR_ODD_NUMBER, max_size=3)),
    heads=st.one_of(st.none(), st.lists(HUGE_OR_ODD_NUMBER, max_size=3)),
)
@example(inputs="ab", target="\ud800", layers=None, heads=None)  # was a 500 (TypeError in the tokenizer)
def test_attention_hostile_bodies(live: Served, inputs: str, target: Any, layers: Any, heads: Any) -> None:
    body = {"inputs": inputs, "target": target, "layers": layers, "heads": heads, "mean_heads": True}
    response = _post(live.url, "/attention", body)
    if response.status_code != 200:
        _assert_clear_error(response)
        return
    a = response.json()
    S, T = len(a["encoder_tokens"]), len(a["decoder_tokens"])
    assert a["source_text"] == inputs
    for entry in a["cross_attention"]:
        assert len(entry[0][0]) == T and all(len(row) == S for row in entry[0][0])
    if target is not None:
        assert a["forced"]
        # The forced target's text is its tokens' text: atento's byte-level BPE gives it back byte for byte,
        # an imported SentencePiece model normalizes it (NFKC, whitespace) as transformers' tokenizer does.
        imported = "model_type" in httpx.get(f"{live.url}/info").json()["architecture"]
        assert a["target_text"] == target or (imported and a["target_text"] == _tokens_text(a["target_tokens"]))


def _tokens_text(tokens: list[dict[str, Any]]) -> str:
    return "".join(t["text"] for t in tokens if not t["special"])
