"""Beam search by transformers' rules (`GenerationMixin._beam_search`), for imported models whose outputs
must equal `generate()`'s: num_beams running beams from the first step (all but one scored -1e9), the
top 2 * num_beams candidates, only those among the top num_beams that end (EOS or max_new_tokens) may
join the num_beams finished slots, scored sum / (generated tokens incl. EOS) ** length_penalty, and
transformers' early-stopping heuristic. The decoding rules apply to the log-probabilities. Pure numpy,
float32 as transformers computes it; same interface as beam.BeamSearch.
"""

from __future__ import annotations

import numpy as np

from service.engine.beam import Beam, FinishedBeam
from service.engine.decoding_rules import DecodingRules
from service.engine.sampling import apply_repetition_penalty, log_softmax

_PENALTY = np.float32(-1.0e9)  # transformers' "never choose this" score


class TransformersBeamSearch:
    def __init__(
        self,
        *,
        num_beams: int,
        max_new_tokens: int,
        length_penalty: float,
        eos_id: int,
        early_stopping: bool | str,
        rules: DecodingRules,
        repetition_penalty: float | None = None,
    ) -> None:
        self.num_beams = num_beams
        self.max_new_tokens = max_new_tokens
        self.length_penalty = length_penalty
        self.eos_id = eos_id
        self.early_stopping = early_stopping
        self.rules = rules
        self.repetition_penalty = repetition_penalty
        # The first step's beams are copies of one row: transformers scores all but the first -1e9.
        self.beams: list[Beam] = [Beam((), (), 0.0 if i == 0 else float(_PENALTY)) for i in range(num_beams)]
        self._rows = [0] * num_beams  # each beam's row in the logits of the next step
        self.finished: list[FinishedBeam] = []  # every hypothesis that entered a finished slot, in order
        self._slot_scores = np.full(num_beams, _PENALTY, dtype=np.float32)
        self._slot_entries: list[int | None] = [None] * num_beams  # index into `finished`
        self._unsatisfied = True  # transformers' is_early_stop_heuristic_unsatisfied
        self.steps = 0
        self.done = False

    @property
    def width(self) -> int:
        return len(set(self._rows)) if not self.done else 0

    def last_tokens(self, bos_id: int) -> list[int]:
        if self.steps == 0:
            return [bos_id]  # one row stands for the num_beams identical beams
        return [b.tokens[-1] if b.tokens else bos_id for b in self.beams]

    def step(self, logits: np.ndarray) -> list[int]:
        """Advance with this step's logits (rows, V); returns each new beam's parent row ([] once done)."""
        model_logprobs = log_softmax(logits)  # (rows, V) float32
        scores = []
        for beam, row in zip(self.beams, self._rows, strict=True):
            row_logits = logits[row]
            if self.repetition_penalty is not None:
                row_logits = apply_repetition_penalty(row_logits, beam.tokens, self.repetition_penalty)
                row_logprobs = log_softmax(row_logits)
            else:
                row_logprobs = model_logprobs[row]
            processed = self.rules.apply(row_logprobs, beam.tokens, max_new_tokens=self.max_new_tokens)
            scores.append(processed + np.float32(beam.total))
        totals = np.stack(scores).astype(np.float32, copy=False)  # (num_beams, V)
        vocab = totals.shape[1]
        candidates = np.argsort(-totals.reshape(-1), kind="stable")[: 2 * self.num_beams]
        cand_scores = totals.reshape(-1)[candidates]
        beam_of, token_of = candidates // vocab, candidates % vocab
        length = len(self.beams[0].tokens) + 1  # generated tokens after this step, for every beam
        at_limit = length >= self.max_new_tokens
        hits = np.asarray([bool(at_limit or t == self.eos_id) for t in token_of.tolist()])

        # Running beams for the next step: the best candidates that did not just end.
        running_scores = (cand_scores + hits.astype(np.float32) * _PENALTY).astype(np.float32)
        keep = np.argsort(-running_scores, kind="stable")[: self.num_beams]

        # Finished slots: candidates among the top num_beams that ended, length-normalised.
        normalised = (cand_scores / np.float32(float(length) ** self.length_penalty)).astype(np.float32)
        all_finished = all(entry is not None for entry in self._slot_entries)
        normalised = normalised + np.float32(_PENALTY if all_finished and self.early_stopping is True else 0.0)
        normalised = normalised + np.float32(0.0 if self._unsatisfied else _PENALTY)
        top = np.arange(len(candidates)) < self.num_beams
        normalised = (normalised + np.where(hits & top, np.float32(0.0), _PENALTY)).astype(np.float32)
        merged = np.concatenate([self._slot_scores, normalised])
        chosen = np.argsort(-merged, kind="stable")[: self.num_beams]
        slot_entries: list[int | None] = []
        for index in chosen.tolist():
            if index < self.num_beams:
                slot_entries.append(self._slot_entries[index])
                continue
            c = index - self.num_beams
            if not (hits[c] and top[c]):
                slot_entries.append(None)  # a penalised placeholder, as transformers' unfinished slot
                continue
            self.finished.append(
                self._finished(int(beam_of[c]), int(token_of[c]), float(merged[index]), model_logprobs)
            )
            slot_entries.append(len(self.finished) - 1)
        self._slot_scores = merged[chosen].astype(np.float32)
        self._slot_entries = slot_entries

        parents = [self._rows[int(beam_of[k])] for k in keep.tolist()]
        self.beams = [
            self._extend(int(beam_of[k]), int(token_of[k]), float(running_scores[k]), model_logprobs)
            for k in keep.tolist()
        ]
        self.steps += 1
        self._update_heuristic(running_scores[keep[0]])
        finished_slots = [entry is not None for entry in self._slot_entries]
        go_on = self._unsatisfied and not (all(finished_slots) and self.early_stopping is True) and not bool(hits.all())
        if not go_on:
            if self._slot_entries[0] is None:  # nothing ended: the best running beam stands as cut at the limit
                best = self.beams[0]
                self.finished.append(FinishedBeam(best.tokens, best.logprobs, best.total, False, parents[0]))
                self._slot_entries[0] = len(self.finished) - 1
            self.done = True
            self.beams = []
            return []
        self._rows = list(range(self.num_beams))
        return parents

    def _update_heuristic(self, best_running: np.float32) -> None:
        if self.early_stopping == "never" and self.length_penalty > 0.0:
            hypothetical = self.max_new_tokens
        else:
            hypothetical = self.steps
        best = np.float32(best_running / np.float32(float(hypothetical) ** self.length_penalty))
        worst = float(self._slot_scores.min())
        improvable = any(best > (np.float32(worst) if entry is not None else _PENALTY) for entry in self._slot_entries)
        self._unsatisfied = self._unsatisfied and improvable

    def _extend(self, beam_index: int, token: int, total: float, logprobs: np.ndarray) -> Beam:
        beam = self.beams[beam_index]
        logprob = float(logprobs[self._rows[beam_index], token])
        return Beam((*beam.tokens, token), (*beam.logprobs, logprob), total)

    def _finished(self, beam_index: int, token: int, score: float, logprobs: np.ndarray) -> FinishedBeam:
        beam = self.beams[beam_index]
        logprob = float(logprobs[self._rows[beam_index], token])
        by_eos = token == self.eos_id
        tokens = beam.tokens if by_eos else (*beam.tokens, token)
        return FinishedBeam(tokens, (*beam.logprobs, logprob), score, by_eos, self._rows[beam_index])

    def best_index(self) -> int:
        """Index into `finished` of transformers' answer: the first finished slot."""
        entry = self._slot_entries[0]
        if entry is None:
            raise RuntimeError("beam search has no finished hypothesis yet")
        return entry

    def best(self) -> FinishedBeam:
        return self.finished[self.best_index()]
