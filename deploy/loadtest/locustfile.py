"""Locust users for atento's TGI-compatible API: /generate, /generate_stream (time to first token)
and /attention, with think time, over the bundled task's input mix (inputs.tsv next to this file).

    locust -f deploy/loadtest/locustfile.py --host http://127.0.0.1:8000 [--api-key KEY]

Besides Locust's own statistics it keeps generated tokens, time to first token and responses by
status code, and writes them as JSON to --summary-file when the run ends (deploy/loadtest/run.py reads it).
Needs only locust: nothing from this repository is imported.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from locust import FastHttpUser, HttpUser, between, events, task

INPUTS_TSV = Path(__file__).parent / "inputs.tsv"  # source<TAB>target<TAB>category (python -m model.data)
INPUTS = [line.split("\t", 1)[0] for line in INPUTS_TSV.read_text(encoding="utf-8").splitlines() if line.strip()]


class Tally:
    """Run-wide counters shared by every user (greenlets; the lock is for safety only)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tokens = 0
        self.status: Counter[str] = Counter()
        self.ttft_ms: list[float] = []
        self.started = time.time()

    def record(self, status: int | None, *, tokens: int = 0, ttft_ms: float | None = None) -> None:
        with self.lock:
            self.status[str(status or "connection error")] += 1
            self.tokens += tokens
            if ttft_ms is not None:
                self.ttft_ms.append(ttft_ms)

    def to_dict(self) -> dict[str, Any]:
        return {
            "generated_tokens": self.tokens,
            "status": dict(self.status),
            "ttft_ms": self.ttft_ms,
            "wall_s": time.time() - self.started,
        }


TALLY = Tally()


@events.init_command_line_parser.add_listener
def _arguments(parser: Any) -> None:
    parser.add_argument("--api-key", default="", env_var="ATENTO_API_KEY", help="Bearer key, if the server wants one")
    parser.add_argument("--max-new-tokens", type=int, default=48, help="per generation request")
    parser.add_argument("--summary-file", default="", help="write tokens, TTFT and status counts here")


@events.test_start.add_listener
def _start(environment: Any, **_: Any) -> None:
    TALLY.started = time.time()


@events.quitting.add_listener
def _write_summary(environment: Any, **_: Any) -> None:
    path = environment.parsed_options.summary_file if environment.parsed_options else ""
    if path:
        Path(path).write_text(json.dumps(TALLY.to_dict()) + "\n")


def _headers(user: Any) -> dict[str, str]:
    key = user.environment.parsed_options.api_key if user.environment.parsed_options else ""
    return {"Authorization": f"Bearer {key}"} if key else {}


def _parameters(user: Any) -> dict[str, Any]:
    max_new = user.environment.parsed_options.max_new_tokens if user.environment.parsed_options else 48
    return {"max_new_tokens": max_new, "details": True}


def _tokens(details: dict[str, Any]) -> int:
    """Generated tokens without the EOS token (what `make bench` counts too)."""
    return int(details["generated_tokens"]) - (details.get("finish_reason") == "eos_token")


class GenerateUser(FastHttpUser):
    """The common client: one /generate call, then reads the answer."""

    weight = 6
    wait_time = between(0.2, 1.0)

    @task
    def generate(self) -> None:
        body = {"inputs": random.choice(INPUTS), "parameters": _parameters(self)}
        with self.client.post("/generate", json=body, headers=_headers(self), catch_response=True) as response:
            if response.status_code == 200:
                TALLY.record(200, tokens=_tokens(response.json()["details"]))
            else:
                TALLY.record(response.status_code)
                response.failure(f"status {response.status_code}")


class StreamUser(HttpUser):
    """A chat-like client reading Server-Sent Events; records the time to the first token."""

    weight = 3
    wait_time = between(0.2, 1.0)

    @task
    def stream(self) -> None:
        body = {"inputs": random.choice(INPUTS), "parameters": _parameters(self)}
        started = time.perf_counter()
        first: float | None = None
        tokens = 0
        with self.client.post(
            "/generate_stream", json=body, headers=_headers(self), stream=True, catch_response=True
        ) as response:
            if response.status_code != 200:
                TALLY.record(response.status_code)
                response.failure(f"status {response.status_code}")
                return
            for line in response.iter_lines():
                if not line.startswith(b"data:"):
                    continue
                event = json.loads(line[5:])
                if "error" in event:
                    TALLY.record(200)
                    response.failure(f"stream error: {event.get('error_type')}")
                    return
                if first is None:
                    first = (time.perf_counter() - started) * 1000
                if not event.get("token", {}).get("special"):
                    tokens += 1
            TALLY.record(200, tokens=tokens, ttft_ms=first)
            # Locust times a streamed response to its headers; report the whole stream instead.
            response.request_meta["response_time"] = (time.perf_counter() - started) * 1000


class AttentionUser(FastHttpUser):
    """The visualization page: attention behind the model's own output, cross-attention head means."""

    weight = 1
    wait_time = between(1.0, 3.0)

    @task
    def attention(self) -> None:
        body = {
            "inputs": random.choice(INPUTS),
            "kinds": ["cross"],
            "mean_heads": True,
            "parameters": {"max_new_tokens": _parameters(self)["max_new_tokens"]},
        }
        with self.client.post("/attention", json=body, headers=_headers(self), catch_response=True) as response:
            TALLY.record(response.status_code)
            if response.status_code != 200:
                response.failure(f"status {response.status_code}")
