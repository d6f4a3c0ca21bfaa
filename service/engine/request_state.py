"""One request's decoding state in the running batch: its token chooser or beam search, what it has
generated, its attention logs, and how it finishes. The batch executor (executor.py) owns the rows and
the KV cache; this owns what each request does with its rows' logits. Pure numpy; no onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from service.engine.attention_record import AttentionLog
from service.engine.beam import BeamSearch
from service.engine.decoding_rules import DecodingRules
from service.engine.drafts import SourceDrafts, kept_drafts
from service.engine.kv_cache import KvCache
from service.engine.sampling import TokenChooser, log_softmax
from service.engine.tokenizer import Decoding, Detokenizer
from service.engine.transformers_beam import TransformersBeamSearch
from service.engine.types import AttentionSpec, GenerationParams, GenerationResult, TokenEvent


@dataclass(frozen=True)
class SpecialIds:
    pad: int
    bos: int
    eos: int


@dataclass(frozen=True)
class ModelShape:
    n_layers: int
    n_encoder_layers: int
    n_heads: int


@dataclass(frozen=True)
class DecodingContext:
    """What every request's decoding shares: the tokenizer, the special ids and the model's shape."""

    tokenizer: Decoding
    special: SpecialIds
    shape: ModelShape


@dataclass(frozen=True)
class Request:
    id: str
    source_ids: list[int]  # EOS included
    params: GenerationParams  # max_new_tokens already clipped to the model
    seed: int | None = None
    attention: AttentionSpec | None = None
    forced_target: list[int] | None = None  # teacher forcing: target ids without BOS/EOS
    rules: DecodingRules | None = None  # this request's own decoding rules (request_rules.py); None = the model's


@dataclass
class RequestState:
    """One request in the running batch: how it picks tokens, what it has generated, how it ends."""

    request: Request
    text: Detokenizer
    chooser: TokenChooser | None = None
    beam: BeamSearch | TransformersBeamSearch | None = None
    last_tokens: list[int] = field(default_factory=list)  # one per row
    generated: list[int] = field(default_factory=list)
    events: list[TokenEvent] = field(default_factory=list)
    logs: list[AttentionLog] = field(default_factory=list)  # one per row when attention is asked for
    finished_logs: list[AttentionLog] = field(default_factory=list)  # beam: one per finished hypothesis
    drafts: SourceDrafts | None = None  # greedy requests whose next tokens are drafted from their source
    stop_scan_from: int = 0
    first_row: int = 0  # its rows in the cache: first_row .. first_row + width - 1

    @property
    def width(self) -> int:
        return len(self.last_tokens)

    @property
    def rows(self) -> range:
        return range(self.first_row, self.first_row + self.width)

    def wants(self, kind: str) -> bool:
        spec = self.request.attention
        return spec is not None and kind in spec.kinds

    def advance(self, ctx: DecodingContext, token: int, logprob: float | None) -> tuple[TokenEvent, str | None]:
        """Record a one-row request's chosen token; returns its event and its finish reason, if any."""
        active = self
        params = active.request.params
        if token == ctx.special.eos:
            event = TokenEvent(token, active.text.flush(), logprob, True)
            reason: str | None = "eos"
        else:
            active.generated.append(token)
            active.last_tokens = [token]
            final = len(active.generated) >= params.max_new_tokens
            event = TokenEvent(token, active.text.push(token, final=final), logprob, False)
            reason = "length" if final else None
            if params.stop and self._hit_stop(ctx):
                reason = "stop_sequence"
                if not final:
                    event = TokenEvent(token, event.text + active.text.flush(), logprob, False)
        active.events.append(event)
        return event, reason

    def advance_drafted(
        self, ctx: DecodingContext, draft: list[int], logits: np.ndarray, cache: KvCache
    ) -> tuple[list[TokenEvent], str | None]:
        """Keep the drafted tokens greedy agrees with and greedy's token after them, masking the rest's columns
        in `cache`; returns their events and the finish reason, if any (drafts.py).

        `logits` (T, V) are this row's: position i follows the row's last token and draft[:i]."""
        assert self.drafts is not None  # noqa: S101 - only drafting requests are drafted
        picks: list[int] = logits[: len(draft) + 1].argmax(axis=-1).tolist()
        kept = kept_drafts(picks, draft)
        self.drafts.record(kept)
        # The step's columns, the row's last ones, hold the last token and the whole draft: the unkept ones are
        # masked from now on (they end the row, which stays a prefix of its columns).
        end = int(cache.self_mask[self.first_row].sum())  # the row's last token and its draft end here
        cache.self_mask[self.first_row, end - len(draft) + kept : end] = False
        wants_logprobs = self.request.params.token_logprobs
        events: list[TokenEvent] = []
        for position, token in enumerate([*draft[:kept], picks[kept]]):
            logprob = float(log_softmax(logits[position])[token]) if wants_logprobs else None
            event, reason = self.advance(ctx, token, logprob)
            events.append(event)
            if reason is not None:
                return events, reason
        return events, None

    def _hit_stop(self, ctx: DecodingContext) -> bool:
        active = self
        text = ctx.tokenizer.decode(active.generated)
        longest = max(len(s) for s in active.request.params.stop)
        start = max(0, active.stop_scan_from - longest + 1)
        active.stop_scan_from = len(text)
        return any(s in text[start:] for s in active.request.params.stop)

    def finish_beam(self, ctx: DecodingContext) -> GenerationResult:
        """The best finished hypothesis, cut at a stop sequence, as the result; its tokens as events."""
        active = self
        assert active.beam is not None  # noqa: S101
        best_index = active.beam.best_index()
        best = active.beam.finished[best_index]
        if active.logs:
            active.logs = [active.finished_logs[best_index]]
        tokens = list(best.tokens)
        reason = "eos" if best.finished_by_eos else "length"
        stops = active.request.params.stop
        for count in range(1, len(tokens) + 1) if stops else ():
            if any(s in ctx.tokenizer.decode(tokens[:count]) for s in stops):
                tokens, reason = tokens[:count], "stop_sequence"
                break
        for position, token in enumerate(tokens):
            final = position == len(tokens) - 1 and reason != "eos"
            active.events.append(
                TokenEvent(token, active.text.push(token, final=final), best.logprobs[position], False)
            )
        if reason == "eos":
            active.events.append(TokenEvent(ctx.special.eos, active.text.flush(), best.logprobs[-1], True))
        active.generated = tokens
        return self.result(ctx, reason)

    def log_attention(
        self,
        rows: range,
        self_mask: np.ndarray,
        self_attention: np.ndarray | None,
        cross_attention: np.ndarray | None,
    ) -> None:
        """Keep this step's decoder self and cross attention of each of its rows, as asked."""
        active = self
        s = len(active.request.source_ids)
        for log, row in zip(active.logs, rows, strict=True):
            if self_attention is not None and "decoder" in log.spec.kinds:
                real = self_mask[row]  # (P+1,) the row's real keys, padding removed
                log.decoder.append(log.select(self_attention[:, row, :, 0][..., real]).copy())
            if cross_attention is not None and "cross" in log.spec.kinds:
                log.cross.append(log.select(cross_attention[:, row, :, 0, :s]).copy())

    def result(self, ctx: DecodingContext, reason: str) -> GenerationResult:
        active = self
        attention = None
        if active.logs:
            attention = active.logs[0].build(
                n_heads=ctx.shape.n_heads,
                n_layers=ctx.shape.n_layers,
                n_encoder_layers=ctx.shape.n_encoder_layers,
            )
        return GenerationResult(
            text=ctx.tokenizer.decode(active.generated),
            token_ids=list(active.generated),
            tokens=list(active.events),
            finish_reason=reason,
            input_token_ids=list(active.request.source_ids),
            seed=active.request.seed,
            attention=attention,
        )
