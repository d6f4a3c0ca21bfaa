"""GET /metrics: parsed by prometheus_client's parser, accepted by `promtool check metrics`, names as the
dashboards expect (tests/deploy/dashboard_metrics.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).parents[1] / "deploy"))
from dashboard_metrics import (  # noqa: E402
    ATENTO_COUNTERS,
    ATENTO_GAUGES,
    ATENTO_HISTOGRAMS,
    metric_names_in_dashboard,
    metric_names_in_promql,
)


def _exercise(url: str) -> str:
    httpx.post(f"{url}/generate", json={"inputs": "abc", "parameters": {"details": True}})
    httpx.post(f"{url}/generate_stream", json={"inputs": "abc"})
    httpx.post(f"{url}/generate", json={"inputs": "a", "parameters": {"top_k": 0}})
    return httpx.get(f"{url}/metrics").text


def test_metrics_parse_and_names(fake_server):
    s = fake_server()
    text = _exercise(s.url)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    # The parser names counters without _total.
    for name in ATENTO_COUNTERS:
        assert families[name.removesuffix("_total")].type == "counter", name
    for name in ATENTO_HISTOGRAMS:
        assert families[name].type == "histogram", name
    for name in ATENTO_GAUGES:
        assert families[name].type == "gauge", name
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    assert samples[("atento_requests_total", (("route", "/generate"), ("status", "200")))] == 1
    assert samples[("atento_requests_total", (("route", "/generate"), ("status", "422")))] == 1
    assert samples[("atento_generated_tokens_total", ())] == 8
    assert (
        samples[
            (
                "atento_model_info",
                (
                    ("name", "fake"),
                    ("provider", "CPUExecutionProvider"),
                    ("variant", "fp32"),
                    ("version", "1"),
                ),
            )
        ]
        == 1
    )
    assert samples[("atento_time_to_first_token_seconds_count", ())] == 2


def test_promtool_check_metrics(fake_server):
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool missing: run deploy/install-apt.sh")
        pytest.skip("promtool not installed (deploy/install-apt.sh)")
    s = fake_server()
    text = _exercise(s.url)
    check = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def test_dashboard_and_alerts_use_only_exported_metrics(live_server):
    """Every PromQL expression in the Grafana dashboard and the alert rules names a series that a
    running atento (real engine) actually exports, read from its live /metrics."""
    text = _exercise(live_server.url)
    httpx.post(f"{live_server.url}/attention", json={"inputs": "abc"})
    exported = {sample.name for family in text_string_to_metric_families(text) for sample in family.samples}
    deploy = Path(__file__).parents[2] / "deploy"
    wanted = metric_names_in_dashboard(deploy / "grafana" / "dashboards" / "atento.json")
    alerts = yaml.safe_load((deploy / "prometheus" / "alerts.yml").read_text())
    for group in alerts["groups"]:
        for rule in group["rules"]:
            wanted |= metric_names_in_promql(rule["expr"])
    wanted.discard("up")  # Prometheus' own per-target series, not atento's
    assert wanted, "no metric names found in the dashboard"
    assert wanted <= exported, f"not exported by atento: {sorted(wanted - exported)}"
