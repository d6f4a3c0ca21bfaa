"""Per-model series: the engine's metrics again, labelled `model` and `version`, one set per loaded version.

The process-wide series of service/http/metrics.py keep their names and no model label (dashboards, alerts
and the autoscaler read them: a contract); these are their per-model twins, `atento_model_*`. Label values
come only from versions the repository loads (`ModelSeries` is created for an engine about to start and
removed when it is unloaded), never from a request: a request for an unknown model creates no series.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from service.engine.observer import EngineObserver

MODEL_LABELS = ("model", "version")
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_CANCEL_REASONS = ("disconnect", "deadline")


class PerModelFamilies:
    """The labelled metric families, registered once per app."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.loaded = Gauge("atento_model_loaded", "1 for each model version taking traffic.", MODEL_LABELS, registry=r)
        self.queue_depth = Gauge(
            "atento_model_queue_depth", "Requests waiting to join the model's batch.", MODEL_LABELS, registry=r
        )
        self.running_sequences = Gauge(
            "atento_model_running_sequences", "Sequences in the model's running batch.", MODEL_LABELS, registry=r
        )
        self.finished = Counter(
            "atento_model_finished_requests", "Model calls finished, by model version.", MODEL_LABELS, registry=r
        )
        self.input_tokens = Counter(
            "atento_model_input_tokens", "Source tokens of the model's finished calls.", MODEL_LABELS, registry=r
        )
        self.generated_tokens = Counter(
            "atento_model_generated_tokens", "Tokens the model generated.", MODEL_LABELS, registry=r
        )
        self.step_duration = Histogram(
            "atento_model_step_duration_seconds",
            "Wall time of one decoding step of the model's batch.",
            MODEL_LABELS,
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.time_to_first_token = Histogram(
            "atento_model_time_to_first_token_seconds",
            "Time from submission to the model's first generated token.",
            MODEL_LABELS,
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.cancellations = Counter(
            "atento_model_cancellations",
            "The model's calls dropped mid-generation, by reason.",
            (*MODEL_LABELS, "reason"),
            registry=r,
        )

    def remove(self, model: str, version: str) -> None:
        """Drop every series of one version (it was unloaded, or never loaded)."""
        for family in (
            self.loaded,
            self.queue_depth,
            self.running_sequences,
            self.finished,
            self.input_tokens,
            self.generated_tokens,
            self.step_duration,
            self.time_to_first_token,
        ):
            try:
                family.remove(model, version)
            except KeyError:  # never observed
                pass
        for reason in _CANCEL_REASONS:
            try:
                self.cancellations.remove(model, version, reason)
            except KeyError:
                pass


class ModelSeries:
    """One version's `EngineObserver`: feeds the process-wide series (`overall`) and its own labelled ones.

    Children are looked up once here, not per event: labels() takes a lock each time.
    """

    def __init__(self, families: PerModelFamilies, overall: EngineObserver, *, model: str, version: str) -> None:
        self._overall = overall
        labels = {"model": model, "version": version}
        self._finished = families.finished.labels(**labels)
        self._input_tokens = families.input_tokens.labels(**labels)
        self._generated_tokens = families.generated_tokens.labels(**labels)
        self._step = families.step_duration.labels(**labels)
        self._first_token = families.time_to_first_token.labels(**labels)
        self._cancelled: Callable[[str], Counter] = lambda reason: families.cancellations.labels(
            model=model, version=version, reason=reason
        )
        for reason in _CANCEL_REASONS:  # known values start at 0 (rate() works before the first event)
            self._cancelled(reason)

    def on_step(self, batch_size: int, duration_s: float) -> None:
        self._overall.on_step(batch_size, duration_s)
        self._step.observe(duration_s)

    def on_queue_wait(self, seconds: float) -> None:
        self._overall.on_queue_wait(seconds)

    def on_first_token(self, seconds: float) -> None:
        self._overall.on_first_token(seconds)
        self._first_token.observe(seconds)

    def on_token(self, seconds_since_previous: float) -> None:
        self._overall.on_token(seconds_since_previous)

    def on_finish(self, input_tokens: int, generated_tokens: int) -> None:
        self._overall.on_finish(input_tokens, generated_tokens)
        self._finished.inc()
        self._input_tokens.inc(input_tokens)
        self._generated_tokens.inc(generated_tokens)

    def on_cancel(self, reason: str) -> None:
        self._overall.on_cancel(reason)
        if reason in _CANCEL_REASONS:  # the engine's reasons are these two; anything else stays process-wide
            self._cancelled(reason).inc()

    def on_edit_guard_reverted(self, spans: int) -> None:
        self._overall.on_edit_guard_reverted(spans)
