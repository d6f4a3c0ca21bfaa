"""Every error status, with the one error body, against a real uvicorn (fake engine)."""

from __future__ import annotations

import threading

import httpx
import pytest
from fake_engine import FakeEngine


def _is_error(r: httpx.Response, status: int, error_type: str | None = None) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) >= {"error", "error_type"} and body["error"]
    if error_type:
        assert body["error_type"] == error_type
    return body


@pytest.mark.parametrize(
    "parameters",
    [
        {"temperature": 0},
        {"top_p": 1.5},
        {"top_k": 0},
        {"max_new_tokens": 0},
        {"max_new_tokens": 10_000},
        {"num_beams": 2, "do_sample": True},
        {"grammar": {"type": "json", "value": {}}},
        {"best_of": 2},
        {"repetition_penalty": -1},
        {"stop": [""]},
    ],
)
def test_invalid_parameters_422(fake_server, parameters):
    s = fake_server()
    _is_error(httpx.post(f"{s.url}/generate", json={"inputs": "a", "parameters": parameters}), 422, "invalid_input")


def test_an_infinite_temperature_is_named_as_such(fake_server):
    s = fake_server()
    body = b'{"inputs": "a", "parameters": {"temperature": 1e400}}'  # JSON's 1e400 parses as infinity
    response = httpx.post(f"{s.url}/generate", content=body, headers={"content-type": "application/json"})
    assert "finite" in _is_error(response, 422, "invalid_input")["error"]


def test_invalid_bodies_422(fake_server):
    s = fake_server()
    _is_error(httpx.post(f"{s.url}/generate", json={"inputs": ""}), 422)
    _is_error(
        httpx.post(f"{s.url}/generate", content=b"{not json", headers={"content-type": "application/json"}),
        422,
    )
    _is_error(httpx.post(f"{s.url}/attention", json={"inputs": "a", "heads": [5]}), 422)
    _is_error(httpx.post(f"{s.url}/attention", json={"inputs": "a", "kinds": ["nope"]}), 422)
    assert 'atento_requests_rejected_total{reason="invalid"} 4.0' in httpx.get(f"{s.url}/metrics").text


def test_too_long_413(fake_server):
    s = fake_server(max_body_bytes=2000, max_batch_inputs=2)
    _is_error(httpx.post(f"{s.url}/generate", json={"inputs": "a" * 100}), 413, "input_too_long")
    _is_error(httpx.post(f"{s.url}/generate", json={"inputs": "a" * 3000}), 413)
    body = iter([b'{"inputs": "', b"a" * 3000, b'"}'])  # chunked: no length to refuse up front
    chunked = httpx.post(f"{s.url}/generate", content=body, headers={"content-type": "application/json"})
    _is_error(chunked, 413)
    _is_error(httpx.post(f"{s.url}/generate", json={"inputs": ["a", "b", "c"]}), 413)
    assert 'atento_requests_rejected_total{reason="too_long"} 4.0' in httpx.get(f"{s.url}/metrics").text


def test_overloaded_429_with_retry_after(fake_server):
    s = fake_server(engine=FakeEngine(step_delay_s=0.05, max_queue=1))
    first = threading.Thread(target=httpx.post, args=(f"{s.url}/generate",), kwargs={"json": {"inputs": "abcdef"}})
    first.start()
    try:
        while not s.engine.in_flight:
            pass
        r = httpx.post(f"{s.url}/generate", json={"inputs": "b"})
        _is_error(r, 429, "overloaded")
        assert r.headers["retry-after"] == "2"
    finally:
        first.join()


def test_not_ready_503(fake_server):
    s = fake_server(engine=FakeEngine(start_delay_s=3), wait_ready=False)
    _is_error(httpx.post(f"{s.url}/generate", json={"inputs": "a"}), 503, "model_not_ready")
    _is_error(httpx.get(f"{s.url}/health/ready"), 503)
    _is_error(httpx.get(f"{s.url}/health"), 503)
    assert httpx.get(f"{s.url}/v2/health/ready").status_code == 503
    assert httpx.get(f"{s.url}/health/live").status_code == 200
    assert httpx.get(f"{s.url}/v2/health/live").status_code == 200


def test_deadline_504(fake_server):
    s = fake_server(engine=FakeEngine(step_delay_s=0.05), request_timeout_s=0.12)
    _is_error(httpx.post(f"{s.url}/generate", json={"inputs": "abcdefghij"}), 504, "deadline_exceeded")
    assert 'atento_cancellations_total{reason="deadline"} 1.0' in httpx.get(f"{s.url}/metrics").text


def test_unknown_route_404_same_body(fake_server):
    s = fake_server()
    _is_error(httpx.get(f"{s.url}/nope"), 404)


def test_hang_up_during_the_body_is_499_not_an_error(fake_server):
    """A client that leaves half-way through its body is counted as 499 (client closed), neither as
    invalid input nor as a server error."""
    import socket
    import time
    from urllib.parse import urlsplit

    s = fake_server()
    url = urlsplit(s.url)
    with socket.create_connection((url.hostname, url.port), timeout=5) as sock:
        sock.sendall(
            b"POST /generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            b'{"inputs": "hal'
        )
        time.sleep(0.2)  # the app is now waiting for the rest of the body
    counted = 'atento_requests_total{route="/generate",status="499"} 1.0'
    for _ in range(50):  # bounded: the server notices the hang-up within a few event loop turns
        metrics = httpx.get(f"{s.url}/metrics").text
        if counted in metrics:
            break
        time.sleep(0.05)
    assert counted in metrics
    assert 'status="422"' not in metrics and 'status="500"' not in metrics
    assert 'atento_requests_rejected_total{reason="invalid"} 0.0' in metrics


def test_a_repository_is_ready_only_once_every_model_is(tmp_path, monkeypatch):
    """The default model is served as soon as it loads; the server must stay not ready (503) until the
    others have loaded too, or a replica enters rotation answering 503 for them (test_oip raced on it)."""
    import time

    import service.http.app as app_module
    from tests.servers import make_settings, serve

    for name in ("fast", "slow"):
        (tmp_path / name / "1").mkdir(parents=True)
    engines = {"fast": FakeEngine(), "slow": FakeEngine(start_delay_s=1.5)}
    monkeypatch.setattr(app_module, "build_engine", lambda directory, **_settings: engines[directory.parent.name])
    settings = make_settings(model_repository=tmp_path, default_model="fast")
    with serve(app_module.create_app(settings), wait_ready=False) as s:
        answered_while_loading = 0
        deadline = time.monotonic() + 30
        while not engines["slow"].ready:
            assert time.monotonic() < deadline, "the slow model never loaded"
            if engines["fast"].ready:
                ready, v2_ready = httpx.get(f"{s.url}/health/ready"), httpx.get(f"{s.url}/v2/health/ready")
                if not engines["slow"].ready:  # ready never goes back: it was loading during both probes
                    _is_error(ready, 503)
                    assert v2_ready.status_code == 503
                    answered_while_loading += 1
            time.sleep(0.02)
        assert answered_while_loading > 0
        while httpx.get(f"{s.url}/health/ready").status_code != 200:
            assert time.monotonic() < deadline, "not ready after every model loaded"
            time.sleep(0.05)
        assert httpx.get(f"{s.url}/v2/models/slow/ready").status_code == 200
