"""HTTP fixtures: a real uvicorn on 127.0.0.1 (ephemeral port) in a thread, serving `create_app`.

`live_server` serves the real engine on the session's `tiny_model_dir`; `fake_server` builds servers
around tests/integration/fake_engine.py when a test needs exact control of timing or capacity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from fake_engine import FakeEngine  # tests/integration is on sys.path (rootdir conftest)

from service.http.app import create_app
from tests.servers import Served, make_settings, serve

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
