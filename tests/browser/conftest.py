"""Browser fixtures: headless Debian chromium driven by Playwright, and real atento servers on 127.0.0.1.

The servers serve the session's `tiny_model_dir` (tests/conftest.py): `viewer_server` without API keys,
`keyed_viewer_server` with one. Under CI=true a missing chromium or Playwright fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from service.app import create_app
from service.settings import ServiceSettings

CHROMIUM = os.environ.get("ATENTO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
API_KEY = "viewer-test-key"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests must run in CI: {reason}")
    pytest.skip(reason)


@dataclass
class Server:
    url: str
    api_key: str | None = None

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


# The same thread-and-poll pattern as tests/integration/conftest.py's `serve`, which this directory cannot
# import (pytest's rootdir-relative conftests are not importable modules).
def _serve(settings: ServiceSettings, *, api_key: str | None, timeout_s: float = 60.0) -> Iterator[Server]:
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=0, log_config=None, access_log=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-viewer", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    try:
        while httpx.get(f"{url}/health/ready").status_code != 200:
            if time.monotonic() > deadline:
                raise RuntimeError("server never became ready")
            time.sleep(0.02)
        yield Server(url=url, api_key=api_key)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _settings(model_dir: Path, **overrides: Any) -> ServiceSettings:
    # model_validate, not the constructor: never read the developer's ATENTO_* environment.
    return ServiceSettings.model_validate(
        {"model_dir": model_dir, "max_new_tokens_limit": 64, "request_timeout_s": 30, **overrides}
    )


@pytest.fixture(scope="session")
def viewer_server(tiny_model_dir: Path) -> Iterator[Server]:
    yield from _serve(_settings(tiny_model_dir), api_key=None)


@pytest.fixture(scope="session")
def keyed_viewer_server(tiny_model_dir: Path) -> Iterator[Server]:
    yield from _serve(_settings(tiny_model_dir, api_keys=API_KEY), api_key=API_KEY)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        _unavailable(f"chromium not found at {CHROMIUM} (apt-get install chromium)")
    try:  # an optional test dependency: its absence skips (or, under CI, fails) with a reason
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class ConsoleLog:
    errors: list[str] = field(default_factory=list)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (own context: no shared storage) whose console errors land in `page.console_log`."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    log = ConsoleLog()
    page.on("console", lambda message: log.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: log.errors.append(f"uncaught: {error}"))
    page.console_log = log
    try:
        yield page
    finally:
        context.close()

