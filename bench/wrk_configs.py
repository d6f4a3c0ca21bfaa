"""`python -m service` in several configurations, measured over HTTP by wrk, alternating, in one run.

Each round starts the server once per configuration (its environment variables on top of this one's), warms it
up, runs `wrk --latency` against POST /generate with the bundled task's short mix (deploy/loadtest/inputs.tsv,
one input a request, cycling; as `POST /generate` without details), reads the server's CPU time (its engine
processes included) and stops it with SIGTERM. The order flips every round; a ratio is the median of the
per-round ratios against the first configuration. wrk is native: a Python client would take a third of two
cores and measure itself (`apt-get install wrk`). Everything talks to 127.0.0.1 only.

`python -m bench.wrk_configs [--rounds 3] [--connections 32] [--seconds 15] [--model-dir models/normalize/1]
[--config NAME=ENV,ENV ...]`, e.g. `--config one= --config processes2=ATENTO_BATCHING__PROCESSES=2`.
"""

# ruff: noqa: T201, S603, S607  (a CLI that runs wrk and this interpreter)
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.report import machine
from bench.workload import INPUTS
from deploy.loadtest.local_server import local_server

DEFAULT_CONFIGS = (
    "one=",
    "lanes2=ATENTO_BATCHING__LANES=2,ATENTO_RUNTIME__INTRA_OP_THREADS=1",
    "processes2=ATENTO_BATCHING__PROCESSES=2",
)
_READY_TIMEOUT_S = 120.0


def wrk_script(inputs: Path = INPUTS) -> str:
    """A wrk Lua script that POSTs the short mix's sources in turn, each as one JSON /generate body."""
    sources = [line.split("\t", 1)[0] for line in inputs.read_text(encoding="utf-8").splitlines() if line]
    bodies = ",\n".join(f"[==[{json.dumps({'inputs': source})}]==]" for source in sources)
    return (
        'wrk.method = "POST"\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        f"local bodies = {{\n{bodies}\n}}\n"
        "local next_body = 0\n"
        "request = function()\n"
        "  next_body = next_body % #bodies + 1\n"
        "  return wrk.format(nil, nil, nil, bodies[next_body])\n"
        "end\n"
    )


def _cpu_s(pid: int) -> float:
    """CPU seconds of `pid` and its descendants alive now (the engine processes)."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        proc = Path(f"/proc/{current}")
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            pending += [int(child) for task in (proc / "task").glob("*/children") for child in task.read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def _wrk(url: str, script: Path, *, connections: int, seconds: int) -> dict[str, float]:
    threads = min(2, connections)
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url]
    out = subprocess.run(command, check=True, capture_output=True, text=True, timeout=seconds + 60).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    latencies = {}
    for percent in ("50", "99"):
        value, unit = re.search(rf"\s{percent}%\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
        latencies[f"p{percent} ms"] = float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests/s": rate, **latencies, "non-2xx": float(errors.group(1)) if errors else 0.0}


def measure(env: dict[str, str], model_dir: Path, script: Path, *, connections: int, seconds: int) -> dict[str, float]:
    """One configuration once: start the server (`python -m service`'s defaults, then `env`), warm up, measure,
    stop it."""
    with local_server(model_dir, max_batch_size=32, threads=0, device="auto", environment=env) as server:
        _wrk(f"{server.url}/generate", script, connections=connections, seconds=3)  # warm-up
        cpu = _cpu_s(server.process.pid)
        figures = _wrk(f"{server.url}/generate", script, connections=connections, seconds=seconds)
        figures["CPU s a request (ms)"] = 1000 * (_cpu_s(server.process.pid) - cpu) / (figures["requests/s"] * seconds)
        return figures


def _config(text: str) -> tuple[str, dict[str, str]]:
    name, _, assignments = text.partition("=")
    env = dict(item.split("=", 1) for item in assignments.split(",") if item)
    return name, env


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wrk_configs", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--model-dir", type=Path, default=Path("models/normalize/1"))
    parser.add_argument("--config", action="append", default=None, help="NAME=ENV=VALUE,ENV=VALUE (repeatable)")
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        print("skipped: wrk is not installed (apt-get install wrk)")
        return 0
    configs = dict(_config(text) for text in (args.config or DEFAULT_CONFIGS))
    names = list(configs)
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores, flags: {info['cpu_flags']}")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "mix.lua"
        script.write_text(wrk_script(), encoding="utf-8")
        for round_index in range(args.rounds):
            for name in names if round_index % 2 == 0 else list(reversed(names)):
                figures = measure(
                    configs[name], args.model_dir.resolve(), script, connections=args.connections, seconds=args.seconds
                )
                results[name].append(figures)
                print(f"round {round_index + 1} {name}: " + ", ".join(f"{k} {v:,.1f}" for k, v in figures.items()))
    baseline = names[0]
    for name in names:
        medians = {key: statistics.median(r[key] for r in results[name]) for key in results[name][0]}
        ratios = [a["requests/s"] / b["requests/s"] for a, b in zip(results[name], results[baseline], strict=True)]
        print(
            f"{name}: {medians['requests/s']:,.1f} requests/s, p50 {medians['p50 ms']:.1f} ms, p99 "
            f"{medians['p99 ms']:.1f} ms, {medians['CPU s a request (ms)']:.2f} ms CPU a request, non-2xx "
            f"{sum(r['non-2xx'] for r in results[name]):.0f}; / {baseline} {statistics.median(ratios):.2f}x "
            f"(rounds {min(ratios):.2f}-{max(ratios):.2f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
