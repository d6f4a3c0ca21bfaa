"""The real engine on the session's tiny model, over a real uvicorn: every endpoint, the
InferenceClient, and /attention straight into BertViz."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from huggingface_hub import InferenceClient

from tests.servers import wait_in_flight, wait_process_ready

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]


def test_generate_and_stream(live_server):
    url = live_server.url
    r = httpx.post(
        f"{url}/generate",
        json={
            "inputs": "Tengo 21 años.",
            "parameters": {"max_new_tokens": 32, "details": True, "decoder_input_details": True},
        },
        timeout=60,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["details"]["generated_tokens"] == len(body["details"]["tokens"]) >= 1
    assert body["details"]["finish_reason"] in ("eos_token", "length", "stop_sequence")
    assert all(isinstance(t["logprob"], float) and t["logprob"] <= 0 for t in body["details"]["tokens"])
    beams = httpx.post(
        f"{url}/generate",
        json={"inputs": "Tengo 21 años.", "parameters": {"max_new_tokens": 32, "num_beams": 3}},
        timeout=60,
    )
    assert beams.status_code == 200, beams.text
    r = httpx.post(
        f"{url}/generate_stream",
        json={"inputs": "Tengo 21 años.", "parameters": {"max_new_tokens": 32}},
        timeout=60,
    )
    events = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:")]
    assert events[-1]["generated_text"] == body["generated_text"]
    # Streams always carry each token's logprob (the engine computes them only for requests that show them).
    streamed = [e["token"]["logprob"] for e in events]
    assert streamed == pytest.approx([t["logprob"] for t in body["details"]["tokens"]], abs=1e-5)


def test_inference_client(live_server):
    client = InferenceClient(model=live_server.url)
    text = client.text_generation("El 3 de mayo.", max_new_tokens=32)
    details = client.text_generation("El 3 de mayo.", max_new_tokens=32, details=True)
    assert details.generated_text == text
    streamed = list(client.text_generation("El 3 de mayo.", max_new_tokens=32, stream=True, details=True))
    assert streamed[-1].generated_text == text
    assert streamed[-1].details.generated_tokens == details.details.generated_tokens


def test_info_health_metrics(live_server):
    url = live_server.url
    info = httpx.get(f"{url}/info").json()
    assert set(info["files"]) >= {"encoder.onnx", "decoder.onnx", "tokenizer.json"}
    assert info["architecture"]["n_heads"] == 2
    assert info["decoder_graphs"] == {"format_3": "decoder.gqa.onnx", "format_2": "decoder.onnx"}
    name = info["model_name"]
    assert httpx.get(f"{url}/v2/models/{name}/ready").status_code == 200
    for path in ("/health", "/health/live", "/health/ready", "/v2/health/live", "/v2/health/ready"):
        assert httpx.get(f"{url}{path}").status_code == 200
    metrics = httpx.get(f"{url}/metrics").text
    assert f'atento_model_info{{name="{name}"' in metrics
    assert "atento_step_duration_seconds_count" in metrics
    assert httpx.post(f"{url}/generate", json={"inputs": "a " * 500}).status_code == 413


def _tensors(entries, torch):
    def one(entry):
        if isinstance(entry, dict):  # base64 float16
            array = np.frombuffer(base64.b64decode(entry["data"]), dtype="<f2").reshape(entry["shape"])
            return torch.tensor(array.astype(np.float32))
        return torch.tensor(entry)

    return [one(e) for e in entries]


@pytest.mark.parametrize("fmt", ["json", "base64"])
def test_attention_feeds_bertviz(live_server, fmt):
    torch = pytest.importorskip("torch")
    bertviz = pytest.importorskip("bertviz")
    r = httpx.post(
        f"{live_server.url}/attention",
        json={"inputs": "Tengo 21 años.", "format": fmt, "parameters": {"max_new_tokens": 32}},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    a = r.json()
    S, T = len(a["encoder_tokens"]), len(a["decoder_tokens"])
    enc, dec, cross = (_tensors(a[k], torch) for k in ("encoder_attention", "decoder_attention", "cross_attention"))
    assert enc[0].shape == (1, 2, S, S) and dec[0].shape == (1, 2, T, T) and cross[0].shape == (1, 2, T, S)
    assert torch.allclose(cross[0].sum(-1), torch.ones(1, 2, T), atol=1e-2)
    for view in (bertviz.model_view, bertviz.head_view):
        html = view(
            encoder_attention=enc,
            decoder_attention=dec,
            cross_attention=cross,
            encoder_tokens=a["encoder_tokens"],
            decoder_tokens=a["decoder_tokens"],
            html_action="return",
        )
        assert "bertviz" in html.data


def test_attention_forced_selection(live_server):
    r = httpx.post(
        f"{live_server.url}/attention",
        json={
            "inputs": "Tengo 21 años.",
            "target": "Tengo veintiún años.",
            "kinds": ["cross"],
            "layers": [1],
            "heads": [0, 1],
            "mean_heads": True,
        },
        timeout=60,
    )
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["forced"] and a["target_text"] == "Tengo veintiún años."
    assert a["encoder_attention"] is None and a["layers"] == {"cross": [1]}
    entry = np.array(a["cross_attention"][0])
    assert entry.shape == (1, 1, len(a["decoder_tokens"]), len(a["encoder_tokens"]))
    for token in a["source_tokens"]:
        if not token["special"]:
            assert a["source_text"][token["start"] : token["end"]] == token["text"].strip() or token["text"]


def test_python_m_service_sigterm_drains(tiny_model_dir, tmp_path):
    port_probe = __import__("socket").socket()
    port_probe.bind(("127.0.0.1", 0))
    port = port_probe.getsockname()[1]
    port_probe.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ATENTO_LOG_FORMAT": "json"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service",
            "--model-dir",
            str(tiny_model_dir),
            "--port",
            str(port),
            "--shutdown-grace-s",
            "30",
            # One sequence per step: the 32 rows run one after another, so the request lasts seconds on any CPU
            # (batched, it could begin and end between two reads of the gauges: it failed CI twice).
            "--batching.max-batch-size",
            "1",
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_process_ready(proc, url, timeout_s=120)
        result = {}
        body = {
            # Work that outlasts the signal: 32 rows sampled hot, so that they rarely pick EOS early (with beams,
            # the tiny model wrote "The 200000000000" and ended at once).
            "inputs": ["Tengo 21 años y 3 gatos, dos perros y un loro que habla sin parar todo el día."] * 32,
            "parameters": {"max_new_tokens": 100, "do_sample": True, "temperature": 3.0, "seed": 7},
        }
        thread = threading.Thread(target=lambda: result.update(r=httpx.post(f"{url}/generate", json=body, timeout=120)))
        thread.start()
        try:
            wait_in_flight(url, sender_alive=thread.is_alive)
        except AssertionError as error:
            thread.join(timeout=120)
            raise AssertionError(f"{error}: {result.get('r')!r} {getattr(result.get('r'), 'text', '')[:300]}") from None
        proc.send_signal(signal.SIGTERM)
        thread.join(timeout=120)
        assert proc.wait(timeout=120) == 0
        assert result["r"].status_code == 200, result["r"].text
        log = proc.stderr.read()
        # The request finished during the drain, not before the signal: its access line follows "draining".
        assert "draining" in log and '"route": "/generate", "status": 200' in log, log
        assert log.index("draining") < log.index('"route": "/generate", "status": 200'), log
    finally:
        if proc.poll() is None:
            proc.kill()


def test_python_m_service_with_engine_processes(tiny_model_dir, live_server):
    """`--batching.processes 2`: the same answers as one engine, a stream's refusal as its HTTP status (not an
    error event after a 200), the engine processes' metrics on /metrics, and SIGTERM ends them with the server."""
    port_probe = __import__("socket").socket()
    port_probe.bind(("127.0.0.1", 0))
    port = port_probe.getsockname()[1]
    port_probe.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ATENTO_LOG_FORMAT": "json"}
    command = [sys.executable, "-m", "service", "--model-dir", str(tiny_model_dir), "--port", str(port)]
    command += ["--max-new-tokens-limit", "64", "--batching.processes", "2"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_process_ready(proc, url, timeout_s=120)
        # Children of every thread: the engine processes are started from a worker thread.
        tasks = Path(f"/proc/{proc.pid}/task").glob("*/children")
        children = [int(pid) for task in tasks for pid in task.read_text().split()]
        assert len(children) >= 2  # the two engine processes (and multiprocessing's resource tracker)
        body = {"inputs": "Tengo 21 años.", "parameters": {"max_new_tokens": 32, "details": True}}
        ours = httpx.post(f"{url}/generate", json=body, timeout=60)
        theirs = httpx.post(f"{live_server.url}/generate", json=body, timeout=60)
        assert ours.status_code == 200, ours.text
        assert ours.json()["generated_text"] == theirs.json()["generated_text"]
        stream = httpx.post(f"{url}/generate_stream", json=body, timeout=60)
        events = [json.loads(line[5:]) for line in stream.text.splitlines() if line.startswith("data:")]
        assert events[-1]["generated_text"] == ours.json()["generated_text"]
        too_long = httpx.post(f"{url}/generate_stream", json={"inputs": "uno " * 1000}, timeout=60)
        assert too_long.status_code == 413, too_long.text
        assert too_long.json()["error_type"] == "input_too_long"
        assert httpx.get(f"{url}/info", timeout=10).json()["limits"]["engine_processes"] == 2
        metrics = httpx.get(f"{url}/metrics", timeout=10).text
        steps = [line for line in metrics.splitlines() if line.startswith("atento_batch_size_count")]
        assert steps and float(steps[0].split()[-1]) > 0, steps
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        deadline = time.monotonic() + 10  # multiprocessing's resource tracker ends a moment after its parent
        while any(Path(f"/proc/{pid}").exists() for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(Path(f"/proc/{pid}").exists() for pid in children)
    finally:
        if proc.poll() is None:
            proc.kill()
