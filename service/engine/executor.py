"""One decoding step of the running batch: encode joiners, decode every row once, choose tokens,
retire the finished. Synchronous and deterministic; the engine's worker thread drives it, unit tests
drive it with a fake runner. Imports no onnxruntime and no asyncio.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.engine.attention_record import AttentionLog
from service.engine.beam import BeamSearch
from service.engine.decoding_rules import DecodingRules, ModelGeneration
from service.engine.drafts import SourceDrafts, draft_count, propose_drafts, with_drafts
from service.engine.request_state import DecodingContext, ModelShape, Request, RequestState, SpecialIds
from service.engine.runner import EncoderBatch, KvCache, Runner
from service.engine.sampling import TokenChooser, log_softmax, logprobs_of_rows
from service.engine.tokenizer import Decoding, new_detokenizer
from service.engine.transformers_beam import TransformersBeamSearch
from service.engine.types import GenerationResult, TokenEvent

__all__ = ["BatchExecutor", "ModelShape", "Request", "SpecialIds", "StepFailed", "StepOutcome"]


class StepFailed(Exception):
    """An exception inside a step; `request_ids` are the requests it took down."""

    def __init__(self, request_ids: list[str], cause: BaseException) -> None:
        super().__init__(f"step failed for {len(request_ids)} request(s): {cause!r}")
        self.request_ids = request_ids
        self.cause = cause


@dataclass
class StepOutcome:
    tokens: list[tuple[str, TokenEvent]] = field(default_factory=list)  # streamed in order
    results: dict[str, GenerationResult] = field(default_factory=dict)
    rows: int = 0  # decoder batch size of this step


_SPARSE_STEPS_BEFORE_COMPACTING = 4


class BatchExecutor:
    """The running batch: its KV cache (rows grouped by request) and each request's decoding state.

    A leaving request's rows stay in the cache as dead rows (fed a masked token, results ignored)
    until new rows join them or they have been a quarter of the batch for a few steps: copying the
    whole cache on every departure cost more than stepping a few idle rows.
    """

    def __init__(
        self,
        runner: Runner,
        tokenizer: Decoding,
        *,
        special: SpecialIds,
        shape: ModelShape,
        generation: ModelGeneration | None = None,
        draft_tokens: int = 0,
    ) -> None:
        self.runner = runner
        # Tokens drafted from the source and checked in one call (drafts.py): greedy requests only, and only
        # where source and output share a vocabulary (the caller's to know); 0 decodes a token a step.
        self.draft_tokens = draft_tokens
        self.tokenizer = tokenizer
        self.special = special
        self.shape = shape
        self._context = DecodingContext(tokenizer, special, shape)
        # The model's decoding rules (bad words, n-grams, forced tokens) and beam search; none for atento's own.
        self.generation = generation or ModelGeneration(DecodingRules(start=special.bos, eos=special.eos))
        self._active: dict[str, RequestState] = {}  # insertion order = row order
        self._cache: KvCache | None = None
        self._owners: list[str | None] = []  # per cache row: its request, None for a dead row
        self._watching: set[str] = set()  # requests keeping decoder or cross attention (asked every step)
        # One-row requests whose token the batch's arg-max cannot choose (sampling, penalties, rules): the
        # only ones _choose visits, kept at admission rather than found by asking every request every step.
        self._row_choosers: dict[str, RequestState] = {}
        self._sparse_steps = 0  # consecutive steps with at least a quarter of the rows dead

    @property
    def rows(self) -> int:
        # The live rows, counted in C: the worker asks twice a step, and a sum over requests cost more.
        return len(self._owners) - self._owners.count(None)

    @property
    def request_ids(self) -> list[str]:
        return list(self._active)

    def reset(self) -> list[str]:
        """Forget the whole batch (after a failed step); returns the ids it held."""
        ids = list(self._active)
        self._active.clear()
        self._watching.clear()
        self._row_choosers.clear()
        self._cache = None
        self._owners = []
        self._sparse_steps = 0
        return ids

    def drop(self, request_ids: Sequence[str]) -> None:
        """Remove requests (cancelled, past deadline) and their rows before the next step."""
        gone = set(request_ids) & set(self._active)
        for request_id in gone:
            self._kill(self._active.pop(request_id))
        if gone:
            self._compact_if_sparse(after_steps=1)

    def _kill(self, active: RequestState) -> None:
        """Mark a leaving request's rows dead; the next compaction removes them."""
        self._watching.discard(active.request.id)
        self._row_choosers.pop(active.request.id, None)
        for row in active.rows:
            self._owners[row] = None

    def _compact_if_sparse(self, *, after_steps: int) -> None:
        """Drop the dead rows once they have been at least a quarter of the batch `after_steps` times in a row."""
        dead = self._owners.count(None)
        if not self._active:
            self._cache, self._owners, self._sparse_steps = None, [], 0
        elif dead * 4 >= len(self._owners) and self._cache is not None:
            self._sparse_steps += 1
            if self._sparse_steps >= after_steps:
                order = self._row_order()
                self._cache = self._cache.filter(self._live_rows())  # also trims all-padding columns
                self._place(order)
                self._sparse_steps = 0
        else:
            self._sparse_steps = 0

    def _live_rows(self) -> list[int]:
        return [row for row, owner in enumerate(self._owners) if owner is not None]

    def _row_order(self) -> list[str]:
        """The live requests in the order of their rows."""
        return list(dict.fromkeys(owner for owner in self._owners if owner is not None))

    def _place(self, order: list[str]) -> None:
        """Number the rows of a freshly built cache: `order`'s requests, each one's rows contiguous."""
        self._owners = []
        for request_id in order:
            active = self._active[request_id]
            active.first_row = len(self._owners)
            self._owners.extend([request_id] * active.width)

    def _reuse_dead_rows(self, fresh: KvCache, joiners: list[str]) -> bool:
        """Write freshly encoded rows over dead rows in place; False (nothing written) when they don't fit.

        A steady stream of arrivals then costs no copy of the batch: a reused row's whole self-attention
        history is masked (its length is 0) and its position restarts at 0.
        """
        cache = self._cache
        dead = [row for row, owner in enumerate(self._owners) if owner is None]
        width = fresh.src_mask.shape[1]
        if cache is None or len(joiners) > len(dead) or width > cache.src_mask.shape[1]:
            return False
        slots = dead[: len(joiners)]
        for name in ("cross_keys", "cross_values"):
            target = getattr(cache, name)
            target[:, slots] = 0.0  # as concatenate's right padding
            target[:, slots, :, :width] = getattr(fresh, name)
        cache.device.clear()  # device copies of the old rows are stale now
        cache.src_mask[slots] = False
        cache.src_mask[slots, :width] = fresh.src_mask
        cache.self_mask[slots] = False
        for slot, request_id in zip(slots, joiners, strict=True):
            self._owners[slot] = request_id
            self._active[request_id].first_row = slot
        return True

    def step(self, join: Sequence[Request]) -> StepOutcome:
        """Admit `join` (one batched encoder pass), then one decoder step for every row.

        Raises:
            StepFailed: naming the requests the failure took down (only the joiners when the encoder
                failed; the whole batch, which is then reset, when the decoder step failed).
        """
        outcome = StepOutcome()
        if join:
            try:
                self._admit(join, outcome)
            except Exception as error:
                for request in join:
                    self._active.pop(request.id, None)
                    self._watching.discard(request.id)
                    self._row_choosers.pop(request.id, None)
                raise StepFailed([r.id for r in join], error) from error
        if not self._active:
            return outcome
        try:
            self._decode(outcome)
        except Exception as error:
            raise StepFailed(self.reset(), error) from error
        return outcome

    def _admit(self, join: Sequence[Request], outcome: StepOutcome) -> None:
        batch = EncoderBatch.from_sources([r.source_ids for r in join], pad_id=self.special.pad)
        wants_encoder = any(r.attention is not None and "encoder" in r.attention.kinds for r in join)
        encoded = self.runner.encode(batch, attention=wants_encoder)
        joined: list[int] = []
        for row, request in enumerate(join):
            active = self._new_active(request)
            if request.attention is not None:
                log = AttentionLog(request.attention, len(request.source_ids))
                if encoded.attention is not None and "encoder" in request.attention.kinds:
                    s = len(request.source_ids)
                    log.encoder = log.select(encoded.attention[:, row, :, :s, :s]).copy()
                active.logs = [log]
            if request.forced_target is not None:
                outcome.results[request.id] = self._teacher_force(active, encoded.cache.filter([row]))
                outcome.tokens.extend((request.id, e) for e in active.events)
                continue
            self._active[request.id] = active
            if active.wants("decoder") or active.wants("cross"):
                self._watching.add(request.id)
            if active.chooser is not None and (self._rules(request).active or not active.chooser.is_plain_greedy):
                self._row_choosers[request.id] = active
            elif active.chooser is not None and self.draft_tokens:
                active.drafts = SourceDrafts.of_source(request.source_ids)
            joined.append(row)
        if joined:
            fresh = encoded.cache if len(joined) == encoded.cache.batch else encoded.cache.filter(joined)
            joiners = [join[row].id for row in joined]
            if self._reuse_dead_rows(fresh, joiners):
                return
            order = self._row_order() + joiners
            if self._cache is not None:
                # The concatenation copies every row anyway: drop the dead ones with it.
                live = self._live_rows()
                kept = self._cache if len(live) == len(self._owners) else self._cache.filter(live)
                fresh = KvCache.concatenate([kept, fresh])
            self._cache = fresh  # assigned last: a failure above leaves the running batch as it was
            self._place(order)

    def _rules(self, request: Request) -> DecodingRules:
        return self.generation.rules if request.rules is None else request.rules

    def _new_active(self, request: Request) -> RequestState:
        params = request.params
        active = RequestState(request=request, text=new_detokenizer(self.tokenizer), last_tokens=[self.special.bos])
        if params.num_beams > 1 and self.generation.beam_search == "transformers":
            active.beam = TransformersBeamSearch(
                num_beams=params.num_beams,
                max_new_tokens=params.max_new_tokens,
                length_penalty=params.length_penalty,
                eos_id=self.special.eos,
                early_stopping=self.generation.early_stopping,
                rules=self._rules(request),
                repetition_penalty=params.repetition_penalty,
            )
        elif params.num_beams > 1:
            active.beam = BeamSearch(
                num_beams=params.num_beams,
                max_new_tokens=params.max_new_tokens,
                length_penalty=params.length_penalty,
                eos_id=self.special.eos,
                repetition_penalty=params.repetition_penalty,
                rules=request.rules,  # atento's own models have no model rules, only a request's
            )
        else:
            active.chooser = TokenChooser(params, seed=request.seed)
        return active

    def _teacher_force(self, active: RequestState, cache: KvCache) -> GenerationResult:
        """One decoder call over BOS + target: log-probabilities of target + EOS, and attention."""
        target = list(active.request.forced_target or [])
        tgt = np.asarray([[self.special.bos, *target]], dtype=np.int64)
        out = self.runner.decode(tgt, cache, attention=active.request.attention is not None)
        logprobs = log_softmax(out.logits[0])  # (T, V)
        for position, token in enumerate([*target, self.special.eos]):
            is_eos = token == self.special.eos and position == len(target)
            text = active.text.push(token, final=is_eos) if not is_eos else active.text.flush()
            active.events.append(TokenEvent(token, text, float(logprobs[position, token]), is_eos))
        if active.logs and out.self_attention is not None and out.cross_attention is not None:
            log = active.logs[0]
            s = len(active.request.source_ids)
            for t in range(tgt.shape[1]):
                log.decoder.append(log.select(out.self_attention[:, 0, :, t, : t + 1]).copy())
                log.cross.append(log.select(out.cross_attention[:, 0, :, t, :s]).copy())
        active.generated = target
        return active.result(self._context, "eos")

    def _decode(self, outcome: StepOutcome) -> None:
        assert self._cache is not None  # noqa: S101 - invariant: active rows always have a cache
        batch = len(self._owners)
        flat = [self.special.bos] * batch  # dead rows: any valid id
        for active in self._active.values():
            flat[active.first_row : active.first_row + active.width] = active.last_tokens
        tokens = np.asarray(flat, dtype=np.int64).reshape(batch, 1)
        tgt_mask = None
        if None in self._owners:
            # A dead row's new column is masked: its position stops growing (stays in range).
            tgt_mask = np.asarray([owner is not None for owner in self._owners]).reshape(batch, 1)
        drafts: dict[int, list[int]] = {}
        if self.draft_tokens and not self._watching:
            # Lazy: at more rows than DRAFT_POSITIONS allows, propose_drafts returns before reading it.
            drafting = ((a.first_row, a.drafts, a.generated) for a in self._active.values() if a.drafts is not None)
            drafts = propose_drafts(drafting, draft_count(self.draft_tokens, rows=len(self._owners)))
        if drafts:
            tokens, tgt_mask = with_drafts(tokens, tgt_mask, drafts, filler=self.special.bos)
        out = self.runner.decode(tokens, self._cache, attention=bool(self._watching), tgt_mask=tgt_mask)
        outcome.rows = batch
        logits = out.logits[:, 0]  # (B, V): the column after each row's last token
        chosen = self._choose(logits)
        logprobs = self._token_logprobs(logits, chosen)
        # Beam searches' rows and where their next rows come from. One-row requests never move: they
        # need no entry, which spares a tuple per request and step (most steps move nothing).
        beams: dict[str, tuple[range, list[int]]] = {}
        events, results, context = outcome.tokens, outcome.results, self._context
        for request_id, active in list(self._active.items()):
            if active.logs:
                active.log_attention(active.rows, out.cache.self_mask, out.self_attention, out.cross_attention)
            if active.beam is not None:
                rows = active.rows
                before = len(active.beam.finished)
                parents = active.beam.step(logits[rows.start : rows.stop])
                if active.logs:
                    active.finished_logs += [active.logs[f.parent].fork() for f in active.beam.finished[before:]]
                    active.logs = [active.logs[p].fork() for p in parents]
                if active.beam.done:
                    results[request_id] = active.finish_beam(context)
                    events.extend((request_id, e) for e in active.events)
                    self._kill(self._active.pop(request_id))
                else:
                    beams[request_id] = (rows, [rows.start + p for p in parents])
                    active.last_tokens = active.beam.last_tokens(self.special.bos)
                continue
            row = active.first_row
            draft = drafts.get(row)
            if draft:
                drafted, reason = active.advance_drafted(context, draft, out.logits[row], out.cache)
                events.extend((request_id, event) for event in drafted)
            else:
                event, reason = active.advance(context, chosen[row], logprobs[row])
                events.append((request_id, event))
            if reason is not None:
                results[request_id] = active.result(context, reason)
                self._kill(self._active.pop(request_id))
        self._cache = out.cache  # no copy when the rows stay put
        self._rearrange(beams)
        if self._cache is not None:
            self._cache = self._cache.trim_padding()

    def _token_logprobs(self, logits: np.ndarray, chosen: list[int]) -> list[float | None]:
        """The chosen tokens' log-probabilities for the one-row requests that asked for them, None elsewhere."""
        rows = [a.first_row for a in self._active.values() if a.beam is None and a.request.params.token_logprobs]
        return logprobs_of_rows(logits, chosen, rows)

    def _choose(self, logits: np.ndarray) -> list[int]:
        """Every row's next token: one arg-max for the batch, per row only sampling and penalties."""
        chosen: list[int] = logits.argmax(axis=-1).tolist()  # first maximum = lowest id on ties
        for active in self._row_choosers.values():
            rules = self._rules(active.request)
            row = active.first_row
            max_new_tokens = active.request.params.max_new_tokens
            assert active.chooser is not None  # noqa: S101 - only requests with a chooser are listed
            if active.chooser.is_plain_greedy and rules.keeps_argmax(
                chosen[row], len(active.generated), max_new_tokens=max_new_tokens
            ):
                continue
            # transformers applies the rules to the raw logits before choosing (greedy and sampling).
            scores = rules.apply(logits[row], active.generated, max_new_tokens=max_new_tokens)
            chosen[row] = active.chooser.choose_token(scores, active.generated)
        return chosen

    def _rearrange(self, beams: dict[str, tuple[range, list[int]]]) -> None:
        """Apply this step's beam reordering and departures to the cache, copying as little as possible.

        `beams`: each surviving beam search's rows and the rows its next ones come from.
        """
        assert self._cache is not None  # noqa: S101
        moved = [(rows, source) for rows, source in beams.values() if source != list(rows)]
        if any(len(source) != len(rows) for rows, source in moved):  # a beam search widened (first step): one gather
            order = sorted(self._active, key=lambda request_id: self._active[request_id].first_row)
            gather: list[int] = []
            for request_id in order:
                beam = beams.get(request_id)
                gather += [self._active[request_id].first_row] if beam is None else beam[1]
            self._cache = self._cache.filter(gather)
            self._place(order)
            return
        for rows, source in moved:  # beams reorder within their own rows: copy just those, in place
            for array in (self._cache.keys, self._cache.values):
                array[:, rows.start : rows.stop] = array[:, source]
            self._cache.self_mask[rows.start : rows.stop] = self._cache.self_mask[source]
        # Requests often finish together and their successors arrive a step or two later: compacting at
        # once made the batch copy itself twice (compacted, then grown again by the joiners; see
        # BENCHMARKS.md#http-at-saturation-leaner-http-layer). Dead rows that stay dead are dropped a few steps later.
        self._compact_if_sparse(after_steps=_SPARSE_STEPS_BEFORE_COMPACTING)
