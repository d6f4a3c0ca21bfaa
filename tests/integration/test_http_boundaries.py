"""The service never imports torch, its engine never imports a web framework; `python -m service`
drains on SIGTERM and exits 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx

from tests.servers import wait_in_flight

ROOT = Path(__file__).parents[2]


def test_service_app_does_not_import_torch():
    code = "import sys, service.http.app, service.__main__; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def test_engine_does_not_import_a_web_framework():
    code = textwrap.dedent(
        """
        import importlib, pkgutil, sys
        import service.engine
        for module in pkgutil.walk_packages(service.engine.__path__, "service.engine."):
            importlib.import_module(module.name)
        found = sorted({"fastapi", "starlette", "uvicorn", "torch"} & set(sys.modules))
        assert not found, f"service.engine imported {found}"
        """
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def _wait_ready(proc: subprocess.Popen, url_file: Path, timeout_s: float = 120) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early: {proc.stderr.read() if proc.stderr else ''}")
        if url_file.exists() and url_file.read_text().strip():
            url = url_file.read_text().strip()
            try:
                if httpx.get(f"{url}/health/ready").status_code == 200:
                    return url
            except httpx.TransportError:
                pass
        time.sleep(0.05)
    raise RuntimeError("server did not become ready")


# Runs service.__main__'s DrainingServer around the fake engine (slow steps) and writes its URL to a file.
_FAKE_MAIN = textwrap.dedent("""
    import sys, threading, time
    sys.path.insert(0, "tests/integration")
    from fake_engine import FakeEngine
    import uvicorn
    from service.__main__ import DrainingServer
    from service.http.app import create_app
    from service.http.settings import ServiceSettings

    settings = ServiceSettings(port=0, shutdown_grace_s=10)
    app = create_app(settings, engine=FakeEngine(step_delay_s=0.05))
    server = DrainingServer(uvicorn.Config(app, host="127.0.0.1", port=0, timeout_graceful_shutdown=10), app)

    def publish():
        while not server.started:
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        open(sys.argv[1], "w").write(f"http://127.0.0.1:{port}")

    threading.Thread(target=publish, daemon=True).start()
    server.run()
    sys.exit(server.exit_code)
""")


def _sigterm_mid_request(proc: subprocess.Popen, url: str, inputs: str) -> None:
    result: dict = {}

    def slow_request() -> None:
        result["response"] = httpx.post(
            f"{url}/generate", json={"inputs": inputs, "parameters": {"max_new_tokens": 40}}, timeout=60
        )

    thread = threading.Thread(target=slow_request)
    thread.start()
    wait_in_flight(url)
    proc.send_signal(signal.SIGTERM)
    thread.join(timeout=60)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    assert result["response"].status_code == 200, result["response"].text
    assert result["response"].json()["generated_text"]


def test_sigterm_drains_in_flight_request_fake_engine(tmp_path):
    url_file = tmp_path / "url"
    proc = subprocess.Popen(
        [sys.executable, "-c", _FAKE_MAIN, str(url_file)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        url = _wait_ready(proc, url_file)
        _sigterm_mid_request(proc, url, "x" * 30)  # 31 steps of 50 ms: well past the signal
    finally:
        proc.kill() if proc.poll() is None else None
