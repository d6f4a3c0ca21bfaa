"""`make loadtest`: a bounded headless Locust run (deploy/loadtest/locustfile.py) that prints
requests/s, generated tokens/s, p50/p95/p99 latency and time to first token, and errors by status,
and writes a JSON report.

    .venv/bin/python deploy/loadtest/run.py                          # starts a local server on 127.0.0.1
    .venv/bin/python deploy/loadtest/run.py --url https://host --api-key KEY --users 32 --run-time 60s
    make loadtest USERS=8 DURATION=30s URL=http://127.0.0.1:8000     # the same through make

Needs only the service and Locust (`pip install -e ".[loadtest]"`, what `make loadtest` installs), not torch.

Without --url it serves --model-dir on 127.0.0.1 at an ephemeral port for the duration of the run.
"""

# ruff: noqa: T201  (a CLI: printing the summary is its output)
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from local_server import local_server  # run as a script: this folder is on sys.path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MAX_USERS, MAX_RUN_TIME_S = 512, 1800  # a load test here is bounded by construction
DEFAULT_SPAWN_RATE = 8.0  # users started per second, at most --users


def duration_s(text: str) -> int:
    """Seconds from `30`, `30s`, `2m` or `1h` (Locust's --run-time units)."""
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (text[:-1], units[text[-1]]) if text and text[-1] in units else (text, 1)
    try:
        return int(number) * unit
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30, 30s, 2m)") from None


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server; default: start one locally")
    parser.add_argument(
        "--api-key", default=os.environ.get("ATENTO_API_KEY", ""), help="Bearer key (default: $ATENTO_API_KEY)"
    )
    parser.add_argument(
        "--model-dir",
        type=Path,
        default=Path(os.environ.get("ATENTO_MODEL_DIR", ROOT / "models/normalize/1")),
        help="what the local server serves (default: $ATENTO_MODEL_DIR or the bundled model)",
    )
    parser.add_argument("--users", type=int, default=16, help=f"concurrent users, 1..{MAX_USERS} (default: 16)")
    parser.add_argument(
        "--spawn-rate",
        type=float,
        default=None,
        help=f"users started per second, at most --users (default: {DEFAULT_SPAWN_RATE:g} or --users if fewer)",
    )
    parser.add_argument(
        "--run-time",
        type=duration_s,
        default=30,
        help=f"how long to load: seconds, or with s/m/h (30, 30s, 2m), at most {MAX_RUN_TIME_S} s (default: 30s)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=48, help="per request (default: 48)")
    parser.add_argument(
        "--report", type=Path, default=ROOT / "runs/loadtest/report.json", help="the JSON report (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.users <= MAX_USERS:
        parser.error(f"--users must be within 1..{MAX_USERS}")
    if not 1 <= args.run_time <= MAX_RUN_TIME_S:
        parser.error(f"--run-time must be within 1..{MAX_RUN_TIME_S} seconds")
    if args.spawn_rate is None:
        args.spawn_rate = min(DEFAULT_SPAWN_RATE, float(args.users))
    if not 0 < args.spawn_rate <= args.users:
        parser.error("--spawn-rate must be positive and at most --users")
    return args


def run_locust(url: str, args: argparse.Namespace, work: Path) -> int:
    command = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(HERE / "locustfile.py"),
        "--headless",
        "--host",
        url,
        "--users",
        str(args.users),
        "--spawn-rate",
        str(args.spawn_rate),
        "--run-time",
        f"{args.run_time}s",
        "--stop-timeout",
        "30",
        "--csv",
        str(work / "locust"),
        "--only-summary",
        "--loglevel",
        "WARNING",
        "--max-new-tokens",
        str(args.max_new_tokens),
        "--summary-file",
        str(work / "summary.json"),
    ]
    env = {**os.environ, "ATENTO_API_KEY": args.api_key}  # not on the command line: ps would show it
    return subprocess.run(command, env=env, check=False).returncode


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def build_report(work: Path, args: argparse.Namespace, url: str) -> dict[str, Any]:
    with open(work / "locust_stats.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    summary = json.loads((work / "summary.json").read_text())

    def latency(row: dict[str, str]) -> dict[str, Any]:
        return {
            "requests": int(row["Request Count"]),
            "failures": int(row["Failure Count"]),
            "requests_per_s": float(row["Requests/s"]),
            **{f"p{q}_ms": float(row[f"{q}%"]) if row[f"{q}%"] != "N/A" else None for q in (50, 95, 99)},
        }

    endpoints = {row["Name"]: latency(row) for row in rows if row["Name"] != "Aggregated"}
    total = next(latency(row) for row in rows if row["Name"] == "Aggregated")
    ttft = summary["ttft_ms"]
    return {
        "url": url,
        "users": args.users,
        "spawn_rate": args.spawn_rate,
        "run_time_s": args.run_time,
        "max_new_tokens": args.max_new_tokens,
        "requests_per_s": total["requests_per_s"],
        "generated_tokens": summary["generated_tokens"],
        "generated_tokens_per_s": summary["generated_tokens"] / max(summary["wall_s"], 1e-9),
        "latency_ms": {"all": total, **endpoints},
        "time_to_first_token_ms": {
            "count": len(ttft),
            "p50": percentile(ttft, 50),
            "p95": percentile(ttft, 95),
            "p99": percentile(ttft, 99),
            "mean": statistics.fmean(ttft) if ttft else None,
        },
        "responses_by_status": summary["status"],
        "errors_by_status": {k: v for k, v in summary["status"].items() if k != "200"},
    }


def print_report(report: dict[str, Any]) -> None:
    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f} ms"

    print(f"\natento load test against {report['url']}: {report['users']} users, {report['run_time_s']} s")
    print(f"  requests/s          {report['requests_per_s']:,.1f}")
    print(f"  generated tokens/s  {report['generated_tokens_per_s']:,.1f} ({report['generated_tokens']:,} tokens)")
    print(f"  {'endpoint':<20}{'requests':>9}{'failures':>9}{'p50':>10}{'p95':>10}{'p99':>10}")
    for name, row in report["latency_ms"].items():
        print(
            f"  {name:<20}{row['requests']:>9}{row['failures']:>9}{ms(row['p50_ms']):>10}"
            f"{ms(row['p95_ms']):>10}{ms(row['p99_ms']):>10}"
        )
    ttft = report["time_to_first_token_ms"]
    print(
        f"  time to first token p50 {ms(ttft['p50'])}, p95 {ms(ttft['p95'])}, p99 {ms(ttft['p99'])} "
        f"({ttft['count']} streams)"
    )
    errors = report["errors_by_status"]
    print("  errors by status    " + (", ".join(f"{k}: {v}" for k, v in sorted(errors.items())) or "none"))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    server = nullcontext(None) if args.url else local_server(args.model_dir, log=None)
    with server as local, tempfile.TemporaryDirectory(prefix="atento-loadtest-") as tmp:
        url = args.url or local.url
        print(f"load testing {url} ...", flush=True)
        code = run_locust(url.rstrip("/"), args, Path(tmp))
        if not (Path(tmp) / "summary.json").exists():
            print(f"locust failed (exit code {code}) before writing its summary", file=sys.stderr)
            return 2
        report = build_report(Path(tmp), args, url)
    print_report(report)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps(report, indent=2) + "\n")
    print(f"  report              {args.report}")
    return 0 if report["latency_ms"]["all"]["requests"] > report["latency_ms"]["all"]["failures"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
