"""Issue 20: long inputs are bounded before tokenizing, and tokenized and segmented off the event loop, so
liveness keeps answering while they arrive. `python -m service` on the bundled model (it segments).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import httpx
import pytest
from test_connection_limits import _service

pytestmark = pytest.mark.slow
log = logging.getLogger(__name__)  # the figures measured: pytest -o log_cli=true --log-cli-level=INFO
SENTENCE = "El artículo se publicó el tres de mayo de dos mil uno y nadie lo leyó. "


def _probe_while(url: str, threads: list[threading.Thread]) -> list[float]:
    latencies = []
    for _ in range(600):  # bounded: 30 s at most
        if not any(t.is_alive() for t in threads):
            break
        started = time.perf_counter()
        assert httpx.get(f"{url}/health/live", timeout=10).status_code == 200
        latencies.append(time.perf_counter() - started)
        time.sleep(0.05)
    return latencies


def _burst(url: str, body: dict[str, object], n: int) -> tuple[list[int], list[float], list[float]]:
    statuses: list[int] = []
    took: list[float] = []

    def post() -> None:
        started = time.monotonic()
        statuses.append(httpx.post(f"{url}/generate", json=body, timeout=60).status_code)
        took.append(time.monotonic() - started)

    threads = [threading.Thread(target=post, daemon=True) for _ in range(n)]
    for thread in threads:
        thread.start()
    latencies = _probe_while(url, threads)
    for thread in threads:
        thread.join(timeout=60)
    return statuses, took, latencies


def test_long_inputs_never_stall_liveness(tmp_path: Path) -> None:
    # max_queue 8: at most 8 pieces of 96 tokens, so the character bound is 8 x 96 x the longest token.
    with _service(tmp_path, "--batching.max-queue", "8") as (_, url):
        huge = (SENTENCE * 13_000)[:900_000]  # under the 1 MB body limit, far over what the model takes
        refused = httpx.post(f"{url}/generate", json={"inputs": huge}, timeout=60)
        assert refused.status_code == 413 and "characters" in refused.json()["error"], refused.text[:300]
        statuses, took, latencies = _burst(url, {"inputs": huge}, 8)
        log.info(
            "eight 900,000-character inputs: %s in at most %.2fs; /health/live max %.3fs over %d probes",
            statuses,
            max(took),
            max(latencies, default=0),
            len(latencies),
        )
        assert set(statuses) == {413} and max(took) < 5
        # Tokenizing one such input takes about 0.9 s here: eight tokenized on the loop would hold the probe for
        # seconds. Refused before tokenizing, the probe waits only for the bodies' upload beside the other test
        # worker (0.1-0.2 s alone; once 1.5 s in a full `make test`), so 2 s tells the two apart.
        assert max(latencies, default=0) < 2.0
        # Within the bound: tokenized and segmented off the loop, into more pieces than the queue holds: a 413
        # that says so (it could never be queued whole), not a 429.
        long = (SENTENCE * 140)[:10_000]
        statuses, took, latencies = _burst(url, {"inputs": long}, 4)
        log.info(
            "four 10,000-character inputs: %s in at most %.2fs; /health/live max %.3fs over %d probes",
            statuses,
            max(took),
            max(latencies, default=0),
            len(latencies),
        )
        assert set(statuses) == {413}
        assert max(latencies, default=0) < 1.0


def test_a_document_of_number_lists_never_stalls_liveness(tmp_path: Path) -> None:
    """64 lines of 60 number words: the model leaves some in words, and the edit guard reads every line's numbers
    (the value check, two alignments). Joined on the event loop, with the value check reading groups of up to 24
    words, it held the loop 0.35 s a line (250 lines: 86 s, every other client waiting); now the join runs in a
    thread and reads no group longer than its number can be said in."""
    with _service(tmp_path) as (_, url):
        document = "\n".join([", ".join(["tres"] * 60)] * 64)
        statuses, took, latencies = _burst(url, {"inputs": document, "parameters": {"max_new_tokens": 127}}, 1)
        log.info(
            "a document of 64 lines of 60 number words: %s in %.2fs; /health/live max %.3fs over %d probes",
            statuses,
            max(took),
            max(latencies, default=0),
            len(latencies),
        )
        assert statuses == [200]
        assert max(latencies, default=0) < 1.0
