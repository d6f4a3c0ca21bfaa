"""Issue 20: SIGTERM with a grace period shorter than the work in flight, clients mid-request on every kind
of route. Every request gets its answer or the documented 503 JSON with Retry-After (a stream ends with an
error event): no plain-text 500, no connection closed without a response, no executor reset under the
worker thread ("dictionary changed size during iteration"), exit 0 soon after the grace period.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from harness import TEXTS
from test_shutdown import _LAUNCHER  # the same `python -m service` with a paced runner

from tests.servers import wait_process_ready

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
BUNDLED = ROOT / "models" / "normalize" / "1"
log = logging.getLogger(__name__)  # what happened to each request: pytest -o log_cli=true --log-cli-level=INFO


def _running_sequences(url: str) -> float:
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith("atento_running_sequences "):
            return float(line.split()[1])
    raise AssertionError("no atento_running_sequences gauge")


def _classify(path: str, response: httpx.Response) -> str:
    if response.status_code == 200 and path == "/generate_stream":
        events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
        if events and "error" in events[-1]:
            assert events[-1]["error_type"] == "model_not_ready", events[-1]
            return "stream ended with a 503 event"
        assert events and events[-1]["generated_text"] is not None, response.text[-300:]
        return "200"
    if response.status_code == 200:
        return "200"
    assert response.headers.get("content-type", "").startswith("application/json"), (
        response.status_code,
        response.text,
    )
    body = response.json()
    assert set(body) == {"error", "error_type"}, body
    if response.status_code == 503:
        assert int(response.headers["retry-after"]) >= 1
    return f"{response.status_code} {body['error_type']}"


def test_sigterm_shorter_than_the_work_answers_every_request(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "service.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ATENTO_LOG_FORMAT": "json", "ATENTO_TEST_STEP_S": "0.1"}
    env["ATENTO_TEST_NEVER_EOS"] = "1"  # every generation runs to max_new_tokens: 40 steps, 4 s > the grace
    args = ["--model-dir", str(BUNDLED), "--port", str(port), "--shutdown-grace-s", "1.5"]
    with log_path.open("w") as log_file:
        proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, *args], cwd=ROOT, env=env, stderr=log_file, text=True)
        try:
            wait_process_ready(proc, url, timeout_s=120)
            outcomes: list[tuple[str, str]] = []  # (what, outcome), appended from the client threads
            signalled = threading.Event()
            params = {"max_new_tokens": 40}
            calls = [("/generate", {"inputs": TEXTS[i % len(TEXTS)], "parameters": params}) for i in range(6)] + [
                ("/generate", {"inputs": list(TEXTS[:3]), "parameters": params}),
                ("/generate_stream", {"inputs": TEXTS[3], "parameters": params}),
                ("/generate_stream", {"inputs": TEXTS[4], "parameters": params}),
                ("/attention", {"inputs": TEXTS[5], "parameters": params, "kinds": ["cross"]}),
            ]

            def client(path: str, body: dict[str, Any]) -> None:
                # In flight at SIGTERM, then (bounded) new requests on fresh connections while it drains.
                for attempt in range(20):
                    late = signalled.is_set()
                    try:
                        response = httpx.post(f"{url}{path}", json=body, timeout=30)
                    except httpx.ConnectError:
                        outcomes.append(("late" if late else "in flight", "refused connection"))
                        return  # the listener is closed: the drain is over
                    except httpx.TransportError as error:  # connected, but no response
                        outcomes.append(("late" if late else "in flight", f"no response: {error!r}"))
                        return
                    try:
                        outcome = _classify(path, response)
                    except AssertionError as error:  # recorded, so that the summary shows every request
                        outcome = f"bad answer {response.status_code}: {error} {response.text[:80]!r}"
                    outcomes.append(("late" if late else "in flight", outcome))
                    if not late and attempt == 0:
                        signalled.wait(30)
                    time.sleep(0.05)

            threads = [threading.Thread(target=client, args=call, daemon=True) for call in calls]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 30
            while _running_sequences(url) < 12:  # every request (12 decoder rows) has joined the batch
                assert time.monotonic() < deadline, "the requests never started"
                time.sleep(0.02)
            proc.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            signalled.set()
            code = proc.wait(timeout=30)
            exited_after = time.monotonic() - sent
            for thread in threads:
                thread.join(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    service_log = log_path.read_text()
    summary: dict[str, int] = {}
    for what, outcome in outcomes:
        summary[f"{what}: {outcome}"] = summary.get(f"{what}: {outcome}", 0) + 1
    log.info("exit %s after %.2fs; %s", code, exited_after, summary)
    assert code == 0, service_log[-3000:]
    assert not [o for o in outcomes if o[1].startswith("no response")], summary
    assert not [o for o in outcomes if o[1].startswith(("500", "bad answer"))], summary
    in_flight = [o for w, o in outcomes if w == "in flight"]
    assert len(in_flight) >= len(calls) and all(o != "refused connection" for o in in_flight), summary
    assert any("503" in o for o in in_flight), summary  # the grace was too short for them: 503 JSON
    assert "dictionary changed size" not in service_log and "Exception in ASGI application" not in service_log
    assert exited_after < 1.5 + 3, f"exited {exited_after:.1f}s after SIGTERM: {summary}"
