"""Reliability harness: the real engine on the session's tiny model behind a real uvicorn on 127.0.0.1,
built with the limits each scenario needs, plus a runner wrapper that injects latency and faults.

`tests/integration/conftest.py` serves one shared engine (`live_server`); these tests need their own
(small queues, a slow or faulty runner), so they build servers here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from service.engine import Engine
from service.engine.model_dir import ModelFiles
from service.engine.runner import OnnxRunner, Runner
from service.engine.settings import BatchingSettings, RuntimeSettings
from service.http.app import create_app
from service.http.settings import ServiceSettings
from tests.servers import Served, serve

# One intra-op thread: these tests share 2 cores with other work, and more threads only add contention.
RUNTIME = RuntimeSettings(intra_op_threads=1)

# Held-out-style inputs (model/data.py's generator) whose outputs take 10-40 decoding steps.
TEXTS = (
    "The play premiered on August 25, 1916.",
    "one hundred and twenty thousand",
    "catorce de noviembre de mil novecientos cinco",
    "See you on the tenth of May, two thousand nineteen!",
    "I still have three million, five hundred and thirty-nine thousand pages left to read.",
    "7 de julio de 2043",
)


class PacedRunner:
    """A Runner around the real OnnxRunner: every decoder call takes at least `delay_s` (a slower device,
    so that requests are reliably mid-flight when a test acts), and `fault`, when set, may raise inside one.

    `fault(tgt)` runs on the engine's worker thread inside the decoder call; whatever it raises is the
    injected failure. With `never_eos_id`, that token is never chosen, so every generation runs to its
    max_new_tokens whatever the session's tiny model would have said (a test that needs work to last).
    """

    def __init__(self, inner: Runner, *, delay_s: float = 0.0, never_eos_id: int | None = None) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.never_eos_id = never_eos_id
        self.fault: Callable[[np.ndarray], None] | None = None

    def encode(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.encode(*args, **kwargs)

    def decode(self, tgt: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        if self.fault is not None:
            self.fault(tgt)
        if self.delay_s:
            time.sleep(self.delay_s)
        out = self.inner.decode(tgt, *args, **kwargs)
        if self.never_eos_id is not None:
            out.logits[..., self.never_eos_id] = np.finfo(np.float32).min
        return out


def make_settings(**overrides: Any) -> ServiceSettings:
    """Settings for tests: never read from the developer's ATENTO_* environment."""
    return ServiceSettings.model_validate(overrides)


class PacedRunnerFactory:
    """Engine(runner_factory=...) building a PacedRunner around the real OnnxRunner; keeps it as `runner`."""

    def __init__(self, *, delay_s: float = 0.0, never_eos: bool = False) -> None:
        self.delay_s = delay_s
        self.never_eos = never_eos
        self.runner: PacedRunner | None = None

    def __call__(self, model: ModelFiles) -> Runner:
        never_eos_id = model.special_tokens["eos"] if self.never_eos else None
        self.runner = PacedRunner(OnnxRunner(model, runtime=RUNTIME), delay_s=self.delay_s, never_eos_id=never_eos_id)
        return self.runner


@contextmanager
def real_server(
    model_dir: Path, *, batching: BatchingSettings, delay_s: float = 0.0, **settings: Any
) -> Iterator[Served]:
    """A real uvicorn serving the real engine on `model_dir` with these batching limits and settings."""
    service_settings = make_settings(model_dir=model_dir, batching=batching, runtime=RUNTIME, **settings)
    factory = PacedRunnerFactory(delay_s=delay_s)
    engine = Engine(model_dir, runtime=RUNTIME, batching=batching, runner_factory=factory)
    with serve(create_app(service_settings, engine=engine)) as served:
        assert factory.runner is not None
        served.runner = factory.runner
        yield served


def metrics(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Scrape /metrics: (sample name, sorted labels) -> value."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def wait_for_idle(url: str, *, timeout_s: float = 5.0) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Wait until the queue and running gauges read zero; fail if they do not within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        sample = metrics(url)
        gauges = sample[("atento_queue_depth", ())], sample[("atento_running_sequences", ())]
        if gauges == (0, 0):
            return sample
        assert time.monotonic() < deadline, f"gauges stuck at (queue, running) = {gauges}"
        time.sleep(0.02)


def unloaded_outputs(url: str, bodies: list[dict[str, Any]]) -> list[str]:
    """Each body's generated_text when sent alone, one at a time: what a loaded server must return."""
    out = []
    for body in bodies:
        r = httpx.post(f"{url}/generate", json=body, timeout=60)
        assert r.status_code == 200, r.text
        out.append(r.json()["generated_text"])
    return out
