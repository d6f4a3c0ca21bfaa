"""HTTP fixtures: a real uvicorn on 127.0.0.1 (ephemeral port) in a thread, serving `create_app`.

`live_server` serves the real engine on the session's `tiny_model_dir`; `fake_server` builds servers
around tests/integration/fake_engine.py when a test needs exact control of timing or capacity.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fake_engine import FakeEngine  # tests/integration is on sys.path (rootdir conftest)
from fastapi import FastAPI

from service.app import create_app
from service.settings import ServiceSettings


@dataclass
class Served:
    url: str
    app: FastAPI
    engine: Any
    server: uvicorn.Server


@contextmanager
def serve(app: FastAPI, *, wait_ready: bool = True, timeout_s: float = 60.0) -> Iterator[Served]:
    """Run `app` on uvicorn in a thread until the block exits; yields once it listens (and is ready)."""
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
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
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
    """Settings for tests: never read from the developer's ATENTO_* environment."""
    return ServiceSettings.model_validate(overrides)


FakeServerFactory = Callable[..., Served]


@pytest.fixture
def fake_server() -> Iterator[FakeServerFactory]:
    """Factory: `fake_server(engine=FakeEngine(...), wait_ready=True, **settings)` -> Served."""
    with ExitStack() as stack:

        def start(*, engine: FakeEngine | None = None, wait_ready: bool = True, **settings: Any) -> Served:
            app = create_app(make_settings(**settings), engine=engine or FakeEngine())
            return stack.enter_context(serve(app, wait_ready=wait_ready))

        yield start


@pytest.fixture(scope="session")
def live_server(tiny_model_dir: Path) -> Iterator[Served]:
    """The real engine on the tiny model, served once per session."""
    settings = make_settings(model_dir=tiny_model_dir, max_new_tokens_limit=64, request_timeout_s=30)
    with serve(create_app(settings)) as served:
        yield served
