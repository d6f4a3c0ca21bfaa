"""Which metric names the deploy files' PromQL refers to, and which ones atento exports.

Used by tests/deploy (offline) and by integration tests that compare against a live /metrics.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Metric families the service exports, by Prometheus type.
ATENTO_COUNTERS = frozenset(
    {
        "atento_requests_total",
        "atento_input_tokens_total",
        "atento_generated_tokens_total",
        "atento_requests_rejected_total",
        "atento_cancellations_total",
        # Per model version (service/http/model_metrics.py): labels model, version.
        "atento_model_finished_requests_total",
        "atento_model_input_tokens_total",
        "atento_model_generated_tokens_total",
        "atento_model_cancellations_total",
    }
)
ATENTO_HISTOGRAMS = frozenset(
    {
        "atento_request_duration_seconds",
        "atento_queue_wait_seconds",
        "atento_time_to_first_token_seconds",
        "atento_time_per_output_token_seconds",
        "atento_batch_size",
        "atento_step_duration_seconds",
        "atento_model_step_duration_seconds",
        "atento_model_time_to_first_token_seconds",
    }
)
ATENTO_GAUGES = frozenset(
    {
        "atento_queue_depth",
        "atento_running_sequences",
        "atento_model_info",
        "atento_model_loaded",
        "atento_model_queue_depth",
        "atento_model_running_sequences",
    }
)

# Series names as they appear on /metrics: prometheus_client suffixes histograms with
# _bucket/_sum/_count, and counters keep their _total name.
ATENTO_SERIES = frozenset(
    ATENTO_COUNTERS
    | ATENTO_GAUGES
    | {f"{h}{suffix}" for h in ATENTO_HISTOGRAMS for suffix in ("_bucket", "_sum", "_count")}
)

_PROMQL_KEYWORDS = frozenset(
    {
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "offset",
        "and",
        "or",
        "unless",
        "inf",
        "nan",
        "atan2",
    }
)
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_GRAFANA_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\w+|\[\[\w+\]\]")
_LABEL_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
# Grafana's label_values(metric, label): after label matchers are gone, keep only the metric;
# label_values(label) names no metric at all.
_LABEL_VALUES = re.compile(r"\blabel_values\(\s*([^,()]*?)\s*,\s*\w+\s*\)")
_LABEL_VALUES_ANY_METRIC = re.compile(r"\blabel_values\(\s*\w+\s*\)")
_IDENTIFIER = re.compile(r"(?<![\w:.])([A-Za-z_:][\w:]*)(?!\w)(\s*\()?")


def metric_names_in_promql(expr: str) -> set[str]:
    """Return the metric names a PromQL expression selects.

    Grafana's `label_values(metric, label)` counts as a reference to `metric`. Grafana variables
    (`$__rate_interval`, `${instance}`), label matchers, ranges, grouping clauses, function names,
    keywords and numbers are not metric names and are dropped.
    """
    text = _STRING.sub('""', expr)
    text = _GRAFANA_VARIABLE.sub("1m", text)
    text = _LABEL_MATCHERS.sub(" ", text)
    text = _LABEL_VALUES.sub(r" \1 ", text)
    text = _LABEL_VALUES_ANY_METRIC.sub(" ", text)
    text = _RANGE.sub(" ", text)
    text = _GROUPING.sub(" ", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        name, call = match.group(1), match.group(2)
        if call or name in _PROMQL_KEYWORDS:
            continue  # a function call such as rate( or a keyword
        names.add(name)
    return names


def _dashboard_expressions(node: Any) -> Iterator[str]:
    """Yield every PromQL string in a dashboard: panel targets (also in collapsed rows) and
    query-type template variables."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield value
            elif key == "query" and isinstance(value, str) and node.get("type") == "query":
                yield value
            elif key == "query" and isinstance(value, dict) and isinstance(value.get("query"), str):
                yield value["query"]
            else:
                yield from _dashboard_expressions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _dashboard_expressions(item)


def promql_in_dashboard(path: str | Path) -> list[str]:
    """Return every PromQL expression in a Grafana dashboard JSON file."""
    dashboard = json.loads(Path(path).read_text(encoding="utf-8"))
    return list(_dashboard_expressions(dashboard))


def metric_names_in_dashboard(path: str | Path) -> set[str]:
    """Return the metric (series) names that a Grafana dashboard JSON file queries.

    Names are as exposed on /metrics, e.g. `atento_request_duration_seconds_bucket`.
    """
    names: set[str] = set()
    for expr in promql_in_dashboard(path):
        names |= metric_names_in_promql(expr)
    return names
