"""Real atento servers for tests: `create_app` on uvicorn in a thread, on 127.0.0.1 with an ephemeral
port. Shared by the integration, browser and reliability suites (import as `tests.servers`)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from service.http.settings import ServiceSettings


@dataclass
class Served:
    url: str
    app: FastAPI
    engine: Any
    server: uvicorn.Server
    runner: Any = None  # a test's runner wrapper, when it built one


@contextmanager
def serve(app: FastAPI, *, wait_ready: bool = True, timeout_s: float = 60.0) -> Iterator[Served]:
    """Run `app` until the block exits; yields once it listens (and, with wait_ready, is ready)."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_config=None, access_log=False, timeout_graceful_shutdown=5
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    try:
        if wait_ready:
            while httpx.get(f"{url}/health/ready").status_code != 200:
                if time.monotonic() > deadline:
                    raise RuntimeError("server never became ready")
                time.sleep(0.02)
        yield Served(url=url, app=app, engine=app.state.engine, server=server)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def make_settings(**overrides: Any) -> ServiceSettings:
    """Settings for tests: model_validate, so the developer's ATENTO_* environment is never read."""
    return ServiceSettings.model_validate(overrides)


def wait_in_flight(
    url: str, *, at_least: int = 1, timeout_s: float = 60.0, sender_alive: Callable[[], bool] | None = None
) -> None:
    """Block until the server's gauges show `at_least` requests queued or running: sleeping a fixed
    time instead races a loaded machine, where the request may not have arrived yet. With `sender_alive`
    (the sending thread's is_alive), a request that ended before it was seen fails at once, not after
    the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        if sender_alive is not None and not sender_alive():
            raise AssertionError("the request ended before the server's gauges showed it in flight")
        gauges = {
            line.split()[0]: float(line.split()[1])
            for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines()
            if line.startswith(("atento_running_sequences ", "atento_queue_depth "))
        }
        if sum(gauges.values()) >= at_least:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"no request in flight after {timeout_s}s: {gauges}")
        time.sleep(0.01)


def wait_process_ready(proc: subprocess.Popen[str], url: str, *, timeout_s: float = 120.0) -> None:
    """Block until a `python -m service` subprocess answers /health/ready with 200; fail with its
    stderr if it exits first."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "the service exited"
        try:
            if httpx.get(f"{url}/health/ready").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the service never became ready"
        time.sleep(0.05)
