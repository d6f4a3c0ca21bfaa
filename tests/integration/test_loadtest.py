"""Smoke test of `make loadtest` (deploy/loadtest/run.py + locustfile.py): a few seconds of every user
kind against the session's tiny model on a local server, then the printed summary and JSON report."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

# Not importorskip: importing locust monkey-patches the whole process with gevent.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("locust") is None, reason="locust is not installed"),
]
ROOT = Path(__file__).parents[2]


def test_loadtest_runs_every_user_and_reports(tiny_model_dir: Path, tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "deploy/loadtest/run.py"),
            "--model-dir",
            str(tiny_model_dir),
            "--users",
            "5",
            "--spawn-rate",
            "5",
            "--run-time",
            "4",
            "--max-new-tokens",
            "8",
            "--report",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    for figure in ("requests/s", "generated tokens/s", "time to first token", "errors by status"):
        assert figure in completed.stdout
    report = json.loads(report_path.read_text())
    assert report["generated_tokens"] > 0
    assert report["errors_by_status"] == {}
    assert {"/generate", "/generate_stream"} <= set(report["latency_ms"])
    assert report["latency_ms"]["all"]["p50_ms"] is not None
