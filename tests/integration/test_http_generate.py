"""POST /generate, /generate_stream and / against a real uvicorn (fake engine: exact timing)."""

from __future__ import annotations

import json
import logging
import time

import httpx
import pytest
from fake_engine import FakeEngine
from huggingface_hub import InferenceClient


def _events(text: str) -> list[dict]:
    return [json.loads(line[len("data:") :]) for line in text.splitlines() if line.startswith("data:")]


def test_generate_matches_tgi_schema(fake_server):
    s = fake_server()
    r = httpx.post(
        f"{s.url}/generate",
        json={
            "inputs": "hola 3",
            "parameters": {"max_new_tokens": 20, "details": True, "decoder_input_details": True, "seed": 7},
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["generated_text"] == "HOLA 3"
    details = body["details"]
    assert details["finish_reason"] == "eos_token"
    assert details["generated_tokens"] == len(details["tokens"]) == 7
    assert details["tokens"][-1]["special"] is True
    assert {"id", "text", "logprob", "special"} <= set(details["tokens"][0])
    assert [t["text"] for t in details["prefill"]][:2] == ["h", "o"]
    assert r.headers["x-request-id"]


def test_list_of_inputs_returns_list_and_post_root_is_generate(fake_server):
    s = fake_server()
    r = httpx.post(f"{s.url}/", json={"inputs": ["ab", "cd"], "parameters": {"max_new_tokens": 1}})
    assert r.status_code == 200
    assert r.json() == [{"generated_text": "A"}, {"generated_text": "C"}]


def test_stop_sequence_and_length(fake_server):
    s = fake_server()
    r = httpx.post(f"{s.url}/generate", json={"inputs": "abcdef", "parameters": {"stop": ["CD"], "details": True}})
    assert r.json()["generated_text"] == "ABCD"
    assert r.json()["details"]["finish_reason"] == "stop_sequence"
    r = httpx.post(f"{s.url}/generate", json={"inputs": "abcdef", "parameters": {"max_new_tokens": 2, "details": True}})
    assert r.json()["details"]["finish_reason"] == "length"


def test_return_attention_extension(fake_server):
    s = fake_server()
    r = httpx.post(f"{s.url}/generate", json={"inputs": "ab", "parameters": {"return_attention": True}})
    attention = r.json()["attention"]
    assert len(attention["cross_attention"]) == 2
    assert len(attention["decoder_tokens"]) == len(attention["cross_attention"][0][0][0])


def test_generate_stream_is_tgi_sse(fake_server):
    s = fake_server()
    r = httpx.post(f"{s.url}/generate_stream", json={"inputs": "abc", "parameters": {"details": True}})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    events = _events(r.text)
    assert [e["token"]["text"] for e in events] == ["A", "B", "C", "</s>"]
    assert all(e["generated_text"] is None for e in events[:-1])
    assert events[-1]["generated_text"] == "ABC"
    assert events[-1]["details"] == {"finish_reason": "eos_token", "generated_tokens": 4, "seed": None}
    r = httpx.post(f"{s.url}/", json={"inputs": "abc", "stream": True})
    assert _events(r.text)[-1]["generated_text"] == "ABC"


def test_inference_client_unmodified(fake_server):
    s = fake_server()
    client = InferenceClient(model=s.url)
    assert client.text_generation("abc", max_new_tokens=10) == "ABC"
    out = client.text_generation("abc", max_new_tokens=10, details=True)
    assert out.generated_text == "ABC" and out.details.finish_reason == "eos_token"
    assert [t.text for t in out.details.tokens][:3] == ["A", "B", "C"]
    assert "".join(client.text_generation("abc", max_new_tokens=10, stream=True)).startswith("ABC")
    chunks = list(client.text_generation("abc", max_new_tokens=10, stream=True, details=True))
    assert chunks[-1].generated_text == "ABC" and chunks[-1].details.generated_tokens == 4


def test_unknown_parameter_is_a_422_naming_it_and_unimplemented_tgi_ones_are_logged(fake_server, caplog):
    s = fake_server()
    r = httpx.post(f"{s.url}/generate", json={"inputs": "abc", "parameters": {"max_new_tokens": 5, "max_tokens": 5}})
    assert r.status_code == 422, r.text
    assert r.json()["error"] == "parameters.max_tokens: Extra inputs are not permitted"
    caplog.set_level(logging.DEBUG, logger="atento.http")
    neutral = {"max_new_tokens": 5, "best_of": None, "watermark": False, "top_n_tokens": None}
    r = httpx.post(f"{s.url}/generate", json={"inputs": "abc", "parameters": neutral})
    assert r.status_code == 200, r.text
    assert "ignored TGI parameters atento does not implement: best_of, top_n_tokens, watermark" in caplog.messages


def test_stream_error_after_start_is_an_event(fake_server):
    s = fake_server(engine=FakeEngine(step_delay_s=0.05), request_timeout_s=0.12)
    r = httpx.post(f"{s.url}/generate_stream", json={"inputs": "abcdefghij"})
    assert _events(r.text)[-1]["error_type"] == "deadline_exceeded"


@pytest.mark.parametrize("stream", [False, True])
def test_disconnect_cancels_at_next_step(fake_server, stream):
    engine = FakeEngine(step_delay_s=0.05)
    s = fake_server(engine=engine)
    if stream:  # read one event, then hang up
        with httpx.stream("POST", f"{s.url}/generate_stream", json={"inputs": "x" * 40}) as r:
            next(r.iter_lines())
    else:  # give up waiting for the whole response
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{s.url}/generate", json={"inputs": "x" * 40}, timeout=httpx.Timeout(5, read=0.2))
    deadline = time.monotonic() + 5
    while not engine.cancelled and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [reason for _, reason in engine.cancelled] == ["disconnect"]
    assert not engine.finished
    metrics = httpx.get(f"{s.url}/metrics").text
    assert 'atento_cancellations_total{reason="disconnect"} 1.0' in metrics


def test_docs_and_openapi_document_attention_shapes(fake_server):
    s = fake_server(api_keys="k")
    assert httpx.get(f"{s.url}/docs").status_code == 200
    spec = httpx.get(f"{s.url}/openapi.json").json()
    for path in (
        "/generate",
        "/generate_stream",
        "/",
        "/attention",
        "/info",
        "/health",
        "/metrics",
        "/v2/models/{name}/ready",
    ):
        assert path in spec["paths"], path
    assert "(1, heads, query_len, key_len)" in spec["paths"]["/attention"]["post"]["description"]
    assert spec["components"]["schemas"]["GenerateRequest"]["examples"]
    page = httpx.get(f"{s.url}/", follow_redirects=False)
    assert page.status_code == 200 and "attention viewer" in page.text.lower()  # the viewer, no key needed
    assert httpx.get(f"{s.url}/viewer").text == page.text
