"""Prometheus metrics for one app: its own `CollectorRegistry`, the engine's `EngineObserver` callbacks.

Names are a contract with deploy/grafana and deploy/prometheus (docs/metrics.md); do not rename.
Imports prometheus-client only; never torch, model/ or export/.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from service.engine.types import EngineStats
from service.http.model_metrics import ModelSeries, PerModelFamilies

# Per version with an engine, read when /metrics is scraped: (model, version) -> (its engine's stats, whether
# it takes traffic: False while it drains).
ModelStats = Callable[[], dict[tuple[str, str], tuple[EngineStats, bool]]]

# Latency buckets (seconds): sub-millisecond CPU steps up to a minute-long request.
_LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)

REJECT_REASONS = ("overloaded", "too_long", "invalid", "unauthorized", "not_ready", "body_timeout")
CANCEL_REASONS = ("disconnect", "deadline")

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]


class Metrics:
    """All atento_* metrics of one app, and the engine observer that feeds most of them.

    Args:
        stats: returns (queue_depth, running_sequences) when /metrics is scraped; None leaves both at 0.
    """

    def __init__(self, stats: Callable[[], tuple[int, int]] | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._request_children: dict[tuple[str, int], tuple[Counter, Histogram]] = {}
        self.requests = Counter(
            "atento_requests",
            "HTTP requests answered, by route template and status code.",
            ["route", "status"],
            registry=r,
        )
        self.request_duration = Histogram(
            "atento_request_duration_seconds",
            "Time from request received to last response byte sent (streams included), by route.",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.queue_wait = Histogram(
            "atento_queue_wait_seconds",
            "Time a request waited in the queue before its encoder pass.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.time_to_first_token = Histogram(
            "atento_time_to_first_token_seconds",
            "Time from submission to the first generated token.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.time_per_output_token = Histogram(
            "atento_time_per_output_token_seconds",
            "Time between consecutive generated tokens of a request.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.input_tokens = Counter(
            "atento_input_tokens",
            "Source tokens (with EOS) of finished requests.",
            registry=r,
        )
        self.generated_tokens = Counter(
            "atento_generated_tokens",
            "Tokens generated for finished requests.",
            registry=r,
        )
        self.batch_size = Histogram(
            "atento_batch_size",
            "Sequences decoded together in one engine step.",
            buckets=_BATCH_BUCKETS,
            registry=r,
        )
        self.step_duration = Histogram(
            "atento_step_duration_seconds",
            "Wall time of one engine decoding step.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.queue_depth = Gauge(
            "atento_queue_depth",
            "Requests waiting to join the running batch.",
            registry=r,
        )
        self.running_sequences = Gauge(
            "atento_running_sequences",
            "Sequences in the running batch.",
            registry=r,
        )
        self.rejected = Counter(
            "atento_requests_rejected",
            "Requests refused before any work, by reason.",
            ["reason"],
            registry=r,
        )
        self.cancellations = Counter(
            "atento_cancellations",
            "Requests dropped mid-generation, by reason.",
            ["reason"],
            registry=r,
        )
        self.edit_guard_reverted = Counter(
            "atento_edit_guard_reverted_spans",
            "Spans of model output the edit guard replaced by their source text.",
            registry=r,
        )
        self.model_info = Gauge(
            "atento_model_info",
            "Always 1; labels name the served model.",
            ["name", "version", "variant", "provider"],
            registry=r,
        )
        self.per_model = PerModelFamilies(r)  # atento_model_*{model, version}: service/http/model_metrics.py
        self._model_stats: ModelStats | None = None
        # Known label values start at 0, so rate() and absent() work before the first event.
        for reason in REJECT_REASONS:
            self.rejected.labels(reason=reason)
        for reason in CANCEL_REASONS:
            self.cancellations.labels(reason=reason)
        self._stats = stats

    def set_stats_source(self, stats: Callable[[], tuple[int, int]] | None) -> None:
        """Say where the queue gauges read from (the engine, once it exists)."""
        self._stats = stats

    def set_model(self, *, name: str, version: str, variant: str, provider: str) -> None:
        """Publish `atento_model_info{...} 1` for the loaded model."""
        self.model_info.clear()
        self.model_info.labels(name=name, version=version, variant=variant, provider=provider).set(1)

    def set_models(self, models: list[tuple[str, str, str, str]]) -> None:
        """Publish `atento_model_info` for every served (name, version, variant, provider), and nothing else."""
        self.model_info.clear()
        for name, version, variant, provider in models:
            self.model_info.labels(name=name, version=version, variant=variant, provider=provider).set(1)

    def model_observer(self, name: str, version: str) -> ModelSeries:
        """The observer of one model version's engine: the series above and its own `atento_model_*`."""
        return ModelSeries(self.per_model, self, model=name, version=version)

    def remove_model(self, name: str, version: str) -> None:
        """One version is gone: its `atento_model_*` series go with it (bounded to what is loaded)."""
        self.per_model.remove(name, version)

    def set_model_stats_source(self, stats: ModelStats | None) -> None:
        """Say where the per-model gauges read from (the model repository)."""
        self._model_stats = stats

    def render(self) -> bytes:
        """Return the registry in Prometheus text format, refreshing the gauges first."""
        if self._stats is not None:
            queue_depth, running = self._stats()
            self.queue_depth.set(queue_depth)
            self.running_sequences.set(running)
        if self._model_stats is not None:
            for (name, version), (stats, serving) in self._model_stats().items():
                self.per_model.loaded.labels(model=name, version=version).set(1 if serving else 0)
                self.per_model.queue_depth.labels(model=name, version=version).set(stats.queue_depth)
                self.per_model.running_sequences.labels(model=name, version=version).set(stats.running_sequences)
        return generate_latest(self.registry)

    def observe_request(self, *, route: str, status: int, duration_s: float) -> None:
        # labels() validates and looks its child up under a lock each time; the (route template, status)
        # pairs are few, so their children are kept.
        children = self._request_children.get((route, status))
        if children is None:
            children = (
                self.requests.labels(route=route, status=str(status)),
                self.request_duration.labels(route=route),
            )
            self._request_children[(route, status)] = children
        count, duration = children
        count.inc()
        duration.observe(duration_s)

    def reject(self, reason: str) -> None:
        self.rejected.labels(reason=reason).inc()

    # EngineObserver (docs/engine-api.md) ------------------------------------------------------

    def on_step(self, batch_size: int, duration_s: float) -> None:
        self.batch_size.observe(batch_size)
        self.step_duration.observe(duration_s)

    def on_queue_wait(self, seconds: float) -> None:
        self.queue_wait.observe(seconds)

    def on_first_token(self, seconds: float) -> None:
        self.time_to_first_token.observe(seconds)

    def on_token(self, seconds_since_previous: float) -> None:
        self.time_per_output_token.observe(seconds_since_previous)

    def on_finish(self, input_tokens: int, generated_tokens: int) -> None:
        self.input_tokens.inc(input_tokens)
        self.generated_tokens.inc(generated_tokens)

    def on_cancel(self, reason: str) -> None:
        self.cancellations.labels(reason=reason).inc()

    def on_edit_guard_reverted(self, spans: int) -> None:
        self.edit_guard_reverted.inc(spans)
