"""Faults: an exception inside a decoding step, and a corrupt or missing model file at startup.

tests/integration/test_engine.py::test_a_fault_fails_only_that_step proves the engine alone survives a
fault; this proves it over HTTP with requests in three places at once (in the failing step, streaming in
it, waiting in the queue): each request of the step gets a 500 (or, once streaming, an error event) with
an error id that is in the log, and every other request, then and after, gets its unloaded answer.
tests/unit/service/engine/test_model_dir.py proves the messages; here `python -m service` itself must exit
non-zero with the file named while /health/ready never says ready.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from harness import TEXTS, metrics, real_server, unloaded_outputs, wait_for_idle

from service.engine.settings import BatchingSettings

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
PARAMS = {"max_new_tokens": 48}


class InjectedFault(RuntimeError):
    pass


def _wait(condition, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_decoding_fault_fails_only_its_step(served_model_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    """On atento's tiny model and on an imported one (tests/conftest.py)."""
    caplog.set_level(logging.ERROR, logger="service.engine")
    batching = BatchingSettings(max_batch_size=2, max_queue=8)
    # 20 ms per decoder call: the two doomed requests are surely both running when the fault fires.
    with real_server(served_model_dir, batching=batching, delay_s=0.02, max_new_tokens_limit=64) as s:
        expected = unloaded_outputs(s.url, [{"inputs": t, "parameters": PARAMS} for t in TEXTS[:3]])
        fired: list[int] = []

        def fault(tgt: np.ndarray) -> None:
            """Fail the first decoder call with both rows running, once the third request waits."""
            if fired or tgt.shape[0] < 2:
                return
            fired.append(tgt.shape[0])
            _wait(lambda: s.engine.stats().queue_depth == 1)
            raise InjectedFault("injected fault in a decoding step")

        assert s.runner is not None
        s.runner.fault = fault

        async def scenario() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
            async with httpx.AsyncClient(base_url=s.url, timeout=60) as client:
                streamed = asyncio.ensure_future(
                    client.post("/generate_stream", json={"inputs": TEXTS[0], "parameters": PARAMS})
                )
                doomed = asyncio.ensure_future(
                    client.post("/generate", json={"inputs": TEXTS[1], "parameters": PARAMS})
                )
                while s.engine.stats().running_requests < 2:
                    await asyncio.sleep(0.005)
                waiting = await client.post("/generate", json={"inputs": TEXTS[2], "parameters": PARAMS})
                return await streamed, await doomed, waiting

        before = metrics(s.url)
        streamed, doomed, waiting = asyncio.run(scenario())

        assert fired == [2]
        assert doomed.status_code == 500, doomed.text
        failure = doomed.json()
        assert failure["error_type"] == "inference_failed" and failure["error_id"] in failure["error"]
        assert streamed.status_code == 200  # headers were sent before the fault: the error is an event
        events = [json.loads(line[5:]) for line in streamed.text.splitlines() if line.startswith("data:")]
        assert events[-1]["error_type"] == "inference_failed"
        assert events[-1]["error_id"] == failure["error_id"]  # one step, one error id
        logged = [r for r in caplog.records if failure["error_id"] in r.getMessage()]
        assert logged and logged[0].exc_info is not None, "the error id must be logged with its traceback"
        assert "injected fault" in caplog.text
        # The request waiting in the queue was not in the step: it gets its normal answer.
        assert waiting.status_code == 200 and waiting.json()["generated_text"] == expected[2]

        # The next requests, together, all succeed with their unloaded answers.
        async def after() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=s.url, timeout=60) as client:
                return await asyncio.gather(
                    *(client.post("/generate", json={"inputs": t, "parameters": PARAMS}) for t in TEXTS[:3])
                )

        assert [r.json()["generated_text"] for r in asyncio.run(after())] == expected
        sample = wait_for_idle(s.url)
        server_errors = ("atento_requests_total", (("route", "/generate"), ("status", "500")))
        assert sample[server_errors] - before.get(server_errors, 0) == 1


# ---- startup with a broken model directory ---------------------------------------------------------------


def _rehash(directory: Path, name: str) -> None:
    """Make the manifest agree with a damaged file, so that only loading it can catch the damage."""
    manifest_path = directory / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"][name] = hashlib.sha256((directory / name).read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest))


def _flip_bytes(directory: Path) -> str:
    path = directory / "decoder.onnx"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return "decoder.onnx"  # sha256 mismatch


def _delete_tokenizer(directory: Path) -> str:
    (directory / "tokenizer.json").unlink()
    return "tokenizer.json"


def _garbage_graph(directory: Path) -> str:
    (directory / "encoder.onnx").write_bytes(b"not an onnx graph" * 100)
    _rehash(directory, "encoder.onnx")
    return "encoder.onnx"  # right sha256, unloadable by onnxruntime


def _garbage_tokenizer(directory: Path) -> str:
    (directory / "tokenizer.json").write_text('{"version": "1.0", "model": 42}')
    _rehash(directory, "tokenizer.json")
    return "tokenizer.json"


@pytest.mark.parametrize("damage", [_flip_bytes, _delete_tokenizer, _garbage_graph, _garbage_tokenizer])
def test_a_broken_model_file_fails_startup_naming_it(tiny_model_dir: Path, tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    model_dir = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model_dir)
    name = damage(model_dir)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "service", "--model-dir", str(model_dir), "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "ATENTO_LOG_FORMAT": "json"},
        stderr=subprocess.PIPE,
        text=True,
    )
    readiness: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                readiness.append(httpx.get(f"http://127.0.0.1:{port}/health/ready", timeout=2).status_code)
            except httpx.TransportError:
                pass  # not listening yet, or already gone
            time.sleep(0.02)
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = proc.stderr.read() if proc.stderr else ""
    assert code != 0, log
    assert 200 not in readiness, readiness
    assert set(readiness) <= {503}
    critical = [json.loads(line) for line in log.splitlines() if '"level": "critical"' in line]
    assert critical and str(model_dir / name) in critical[0]["message"], log
