"""A probe loop: GET /health/live and /health/ready every 50-100 ms, each on a new connection (as a kubelet
does), while a test attacks the server; reports p50/p99/max latency per path.

It runs in a child process (`python tests/reliability/probes.py URL`), so that the attacking test's threads
and its GIL never delay a probe: what it measures is the server. Shared by tests/reliability/test_hostile.py
and tests/deploy/test_frontend.py.
"""

from __future__ import annotations

import json
import math
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

PATHS = ("/health/live", "/health/ready")
INTERVAL_S = 0.075
TIMEOUT_S = 10.0  # a probe that takes longer counts as this long (and as a failure)


@dataclass
class PathFigures:
    latencies_s: list[float] = field(default_factory=list)
    failures: int = 0  # not 200, or no answer within TIMEOUT_S
    statuses: dict[str, int] = field(default_factory=dict)  # "200", "503", ..., "no answer": how many

    def quantile(self, q: float) -> float:
        """The q-quantile (nearest rank) of the latencies; inf when there are none."""
        if not self.latencies_s:
            return math.inf
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]

    @property
    def p50(self) -> float:
        return self.quantile(0.50)

    @property
    def p99(self) -> float:
        return self.quantile(0.99)


def _failed_statuses(figures: PathFigures) -> str:
    failed = {status: n for status, n in sorted(figures.statuses.items()) if status != "200"}
    return ": " + ", ".join(f"{n} x {status}" for status, n in failed.items()) if failed else ""


@dataclass
class Figures:
    by_path: dict[str, PathFigures]

    def line(self, label: str) -> str:
        parts = [
            f"{path} p50 {f.p50 * 1000:.0f} ms p99 {f.p99 * 1000:.0f} ms max {max(f.latencies_s, default=0) * 1000:.0f}"
            f" ms ({len(f.latencies_s)} probes, {f.failures} failed{_failed_statuses(f)})"
            for path, f in self.by_path.items()
        ]
        return f"[health during {label}] " + "; ".join(parts)

    @property
    def live(self) -> PathFigures:
        return self.by_path["/health/live"]

    @property
    def ready(self) -> PathFigures:
        return self.by_path["/health/ready"]


class ProbeLoop:
    """`with ProbeLoop(url) as probes: attack()`, then `probes.figures`; `print(probes.figures.line(...))`."""

    def __init__(self, url: str, *, interval_s: float = INTERVAL_S) -> None:
        self.url = url
        self.interval_s = interval_s
        self.figures: Figures | None = None
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> ProbeLoop:
        self._proc = subprocess.Popen(
            [sys.executable, str(Path(__file__)), self.url, str(self.interval_s)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        assert self._proc.stdout.readline().strip() == "started", "the probe loop did not start"
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        assert self._proc is not None
        out, _ = self._proc.communicate(input="stop\n", timeout=TIMEOUT_S + 30)
        raw = json.loads(out)
        self.figures = Figures({path: PathFigures(**values) for path, values in raw.items()})


def _probe(host: str, port: int, path: str) -> tuple[str, float]:
    """One GET on a new connection, by hand: an HTTP client library's own set-up (an SSL context per client,
    for one) would add tens of milliseconds of the prober's CPU to every figure on a busy machine."""
    began = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=TIMEOUT_S) as sock:
            sock.settimeout(max(0.001, TIMEOUT_S - (time.monotonic() - began)))
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/1.1 ") else "no answer"
        return status, time.monotonic() - began
    except OSError:
        return "no answer", max(time.monotonic() - began, TIMEOUT_S)


def _probe_until_stdin_closes(url: str, interval_s: float) -> dict[str, PathFigures]:
    parsed = urlsplit(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 80
    figures = {path: PathFigures() for path in PATHS}
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
    print("started", flush=True)  # noqa: T201 - the protocol with ProbeLoop, on this child's stdout
    while not stop.is_set():
        started = time.monotonic()
        for path in PATHS:
            status, took = _probe(host, port, path)
            figures[path].latencies_s.append(took)
            figures[path].failures += status != "200"
            figures[path].statuses[status] = figures[path].statuses.get(status, 0) + 1
        stop.wait(max(0.0, interval_s - (time.monotonic() - started)))
    return figures


def _main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # pytest's Ctrl-C goes to the test, which stops us
    figures = _probe_until_stdin_closes(sys.argv[1], float(sys.argv[2]))
    json.dump({path: vars(f) for path, f in figures.items()}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
