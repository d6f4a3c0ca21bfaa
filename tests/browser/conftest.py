"""Browser fixtures: headless Debian chromium driven by Playwright, and real atento servers on 127.0.0.1.

The servers serve the session's `tiny_model_dir` (tests/conftest.py): `viewer_server` without API keys,
`keyed_viewer_server` with one; `two_model_server` a repository of the bundled normalizer and
the tiny model. Under CI=true a missing chromium or Playwright fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from service.http.app import create_app
from service.http.settings import ServiceSettings
from tests.servers import serve

CHROMIUM = os.environ.get("ATENTO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
API_KEY = "viewer-test-key"
BUNDLED = Path(__file__).resolve().parents[2] / "models" / "normalize" / "1"


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


def _serve(settings: ServiceSettings, *, api_key: str | None) -> Iterator[Server]:
    with serve(create_app(settings)) as served:
        yield Server(url=served.url, api_key=api_key)


def _settings(model_dir: Path, **overrides: Any) -> ServiceSettings:
    # model_validate, not the constructor: never read the developer's ATENTO_* environment.
    return ServiceSettings.model_validate(
        {"model_dir": model_dir, "max_new_tokens_limit": 64, "request_timeout_s": 30, **overrides}
    )


@pytest.fixture(scope="module")
def viewer_server(served_model_dir: Path) -> Iterator[Server]:
    """Without API keys, on atento's tiny model and on an imported Marian (tests/conftest.py)."""
    yield from _serve(_settings(served_model_dir), api_key=None)


@pytest.fixture(scope="module")
def keyed_viewer_server(tiny_model_dir: Path) -> Iterator[Server]:
    yield from _serve(_settings(tiny_model_dir, api_keys=API_KEY), api_key=API_KEY)


@pytest.fixture(scope="module")
def two_model_server(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Iterator[Server]:
    """A model repository: `normalize` (the bundled model, the default) and `tiny`, for the model selector."""
    root = tmp_path_factory.mktemp("repository")
    shutil.copytree(BUNDLED, root / "normalize" / "1")
    shutil.copytree(tiny_model_dir, root / "tiny" / "1")
    settings = ServiceSettings.model_validate(
        {
            "model_repository": root,
            "default_model": "normalize",
            "repository_poll_s": 0,  # nothing changes on disk
            # /attention shows the model's own output, never the guard's: without the guard, /generate's
            # answer is that output too, so the test can compare the page's attention with it.
            "edit_guard": False,
            "max_new_tokens_limit": 64,
            "request_timeout_s": 30,
        }
    )
    with serve(create_app(settings), timeout_s=300) as served:
        yield Server(url=served.url)


# Module scope, not session: Playwright's sync API keeps an asyncio loop running on the main thread
# until it stops, and later suites call asyncio.run() there.
@pytest.fixture(scope="module")
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
