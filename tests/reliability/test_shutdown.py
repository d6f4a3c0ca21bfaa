"""Graceful shutdown of `python -m service` (service.__main__.main, real engine) on SIGTERM.

tests/integration/test_http_real_engine.py::test_python_m_service_sigterm_drains proves one in-flight
request survives SIGTERM and the exit code is 0. This proves the rest: several in-flight requests of each
kind (awaited, streamed, a list) all finish with their unloaded answers; new requests meanwhile get 503,
and readiness says 503; the process exits 0 within the grace period, also when in-flight work would
outlast it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from harness import TEXTS

from tests.servers import wait_process_ready

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]

# `python -m service` with one change: each decoder call takes at least ATENTO_TEST_STEP_S, so that the
# work in flight at SIGTERM lasts long enough to see the drain. Everything else is main()'s.
_LAUNCHER = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, "tests/reliability")
    from harness import PacedRunnerFactory
    import service.http.app
    from service.__main__ import main
    from service.engine import Engine

    def build_engine(settings, metrics):
        factory = PacedRunnerFactory(delay_s=float(os.environ["ATENTO_TEST_STEP_S"]),
                                     never_eos=os.environ.get("ATENTO_TEST_NEVER_EOS") == "1")
        return Engine(settings.model_dir, runtime=settings.runtime, batching=settings.batching,
                      observer=metrics, runner_factory=factory)

    service.http.app._build_engine = build_engine  # the one seam: which runner the engine uses
    sys.exit(main())
""")


@contextmanager
def _service(
    model_dir: Path, *, grace_s: float, step_s: float, never_eos: bool = False
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["--model-dir", str(model_dir), "--port", str(port), "--shutdown-grace-s", str(grace_s)]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ATENTO_LOG_FORMAT": "json",
        "ATENTO_TEST_STEP_S": str(step_s),
        "ATENTO_TEST_NEVER_EOS": "1" if never_eos else "0",
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, *args], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_process_ready(proc, url, timeout_s=60)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()


def _running_sequences(url: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith("atento_running_sequences "):
            return float(line.split()[1])
    raise AssertionError("no atento_running_sequences gauge")


def _in_background(results: dict[str, Any], key: str, call: Any) -> threading.Thread:
    def run() -> None:
        try:
            results[key] = call()
        except Exception as error:  # recorded for the assertion, with which request it was
            results[key] = error

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _stream_text(response: httpx.Response) -> str:
    events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    assert "error" not in events[-1], events[-1]
    return str(events[-1]["generated_text"])


def test_sigterm_finishes_in_flight_refuses_new_and_exits_0_in_time(tiny_model_dir: Path) -> None:
    grace_s = 10.0
    # Slow steps keep every request in flight long enough to be caught by SIGTERM, however few tokens
    # the session's tiny model happens to generate for these inputs.
    with _service(tiny_model_dir, grace_s=grace_s, step_s=0.15) as (proc, url):
        params = {"max_new_tokens": 48}
        bodies = {
            "awaited": {"inputs": TEXTS[0], "parameters": params},  # 42 tokens: about 1.3 s
            "streamed": {"inputs": TEXTS[4], "parameters": params},
            "list": {"inputs": [TEXTS[1], TEXTS[2]], "parameters": params},
        }
        # All at once, as the run below sends them: three slow decodes in one batch, not one after another.
        with ThreadPoolExecutor(len(bodies)) as pool:
            answers = {
                key: pool.submit(httpx.post, f"{url}/generate", json=body, timeout=60) for key, body in bodies.items()
            }
            expected = {key: answer.result().json() for key, answer in answers.items()}
        results: dict[str, Any] = {}
        paths = {"awaited": "/generate", "streamed": "/generate_stream", "list": "/generate"}
        threads = [
            _in_background(results, key, lambda key=key: httpx.post(f"{url}{paths[key]}", json=bodies[key], timeout=60))
            for key in bodies
        ]
        deadline = time.monotonic() + 20
        while _running_sequences(url) < 4:  # every request is in the running batch
            assert time.monotonic() < deadline, "the requests never started"
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()

        refused: list[int] = []
        while any(t.is_alive() for t in threads):  # new requests during the drain, each on a new connection
            try:
                refused.append(httpx.post(f"{url}/generate", json=bodies["awaited"], timeout=5).status_code)
                refused.append(httpx.get(f"{url}/health/ready", timeout=5).status_code)
            except httpx.TransportError:
                pass  # the listener closed: the drain is over
            time.sleep(0.05)
        code = proc.wait(timeout=grace_s + 5)
        exited_after = time.monotonic() - signalled
        log = proc.stderr.read() if proc.stderr else ""

        assert code == 0, log
        assert exited_after < grace_s, f"exited {exited_after:.1f}s after SIGTERM (grace {grace_s}s)"
        assert refused and set(refused) == {503}, refused
        assert results["awaited"].status_code == 200 and results["awaited"].json() == expected["awaited"]
        assert results["list"].status_code == 200 and results["list"].json() == expected["list"]
        assert results["streamed"].status_code == 200
        assert _stream_text(results["streamed"]) == expected["streamed"]["generated_text"]


def test_work_longer_than_the_grace_period_does_not_delay_the_exit(tiny_model_dir: Path) -> None:
    grace_s = 1.0
    with _service(tiny_model_dir, grace_s=grace_s, step_s=0.1, never_eos=True) as (proc, url):
        results: dict[str, Any] = {}
        body = {"inputs": TEXTS[0], "parameters": {"max_new_tokens": 48}}  # 48 steps of 0.1 s: no EOS
        thread = _in_background(results, "r", lambda: httpx.post(f"{url}/generate", json=body, timeout=60))
        deadline = time.monotonic() + 10
        while _running_sequences(url) < 1:
            assert time.monotonic() < deadline, "the request never started"
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        code = proc.wait(timeout=30)
        exited_after = time.monotonic() - signalled
        thread.join(timeout=30)
        assert code == 0, proc.stderr.read() if proc.stderr else ""
        # The grace period, plus one decoding step and the process' own teardown.
        assert exited_after < grace_s + 1.5, f"exited {exited_after:.1f}s after SIGTERM (grace {grace_s}s)"
        assert not isinstance(results["r"], httpx.Response) or results["r"].status_code != 200
