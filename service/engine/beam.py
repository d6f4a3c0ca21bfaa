"""Beam search state for one request, one decoder row per live beam.

Follows the rules in model/decoding.py's docstring exactly (the reference the engine is tested
against): 2 * num_beams candidates by score with ties to the lower beam then lower token, EOS
candidates finish scored sum / len ** length_penalty, stop at num_beams finished or max_new_tokens.
Pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.engine.decoding_rules import DecodingRules
from service.engine.sampling import apply_repetition_penalty, log_softmax


@dataclass(frozen=True)
class Beam:
    tokens: tuple[int, ...]  # generated ids, without BOS and EOS
    logprobs: tuple[float, ...]  # per token
    total: float  # running sum of log-probabilities, float32-rounded as in the reference


@dataclass(frozen=True)
class FinishedBeam:
    tokens: tuple[int, ...]
    logprobs: tuple[float, ...]  # includes the EOS's when finished_by_eos
    score: float
    finished_by_eos: bool
    parent: int  # the row (in the step that finished it) whose state it extends


class BeamSearch:
    def __init__(
        self,
        *,
        num_beams: int,
        max_new_tokens: int,
        length_penalty: float,
        eos_id: int,
        repetition_penalty: float | None = None,
        rules: DecodingRules | None = None,
    ) -> None:
        self.num_beams = num_beams
        self.rules = rules  # a request's bad words / n-grams / forced tokens, on the log-probabilities
        self.max_new_tokens = max_new_tokens
        self.length_penalty = length_penalty
        self.eos_id = eos_id
        self.repetition_penalty = repetition_penalty
        self.beams: list[Beam] = [Beam((), (), 0.0)]
        self.finished: list[FinishedBeam] = []
        self.steps = 0
        self.done = False

    @property
    def width(self) -> int:
        return len(self.beams)

    def last_tokens(self, bos_id: int) -> list[int]:
        return [b.tokens[-1] if b.tokens else bos_id for b in self.beams]

    def step(self, logits: np.ndarray) -> list[int]:
        """Advance with this step's logits (width, V); returns each new live beam's parent row.

        After the step that ends the search, `done` is True and the returned list is empty.
        """
        if self.repetition_penalty is not None:
            logits = np.stack(
                [
                    apply_repetition_penalty(row, beam.tokens, self.repetition_penalty)
                    for row, beam in zip(logits, self.beams, strict=True)
                ]
            )
        log_probs = log_softmax(logits)  # (W, V)
        scores = log_probs
        if self.rules is not None and self.rules.active:
            # As transformers: the rules act on the log-probabilities; a beam keeps the model's own logprobs.
            scores = np.stack(
                [
                    self.rules.apply(row, beam.tokens, max_new_tokens=self.max_new_tokens)
                    for row, beam in zip(log_probs, self.beams, strict=True)
                ]
            )
        totals = scores + np.asarray([b.total for b in self.beams], dtype=np.float32)[:, None]  # float32
        vocab = totals.shape[1]
        # A stable sort of the negated scores keeps ties in (beam, token) order, like the reference.
        order = np.argsort(-totals.reshape(-1), kind="stable")[: 2 * self.num_beams]
        next_beams: list[Beam] = []
        parents: list[int] = []
        for flat in order.tolist():
            parent, token = divmod(flat, vocab)
            total = float(totals[parent, token])
            beam = self.beams[parent]
            logprob = float(log_probs[parent, token])
            if token == self.eos_id:
                score = total / (len(beam.tokens) + 1) ** self.length_penalty
                self.finished.append(FinishedBeam(beam.tokens, (*beam.logprobs, logprob), score, True, parent))
            else:
                next_beams.append(Beam((*beam.tokens, token), (*beam.logprobs, logprob), total))
                parents.append(parent)
            if len(next_beams) == self.num_beams:
                break
        self.steps += 1
        if len(self.finished) >= self.num_beams:
            self.done = True
            self.beams = []
            return []
        self.beams = next_beams
        if self.steps >= self.max_new_tokens:
            self.finished.extend(
                FinishedBeam(b.tokens, b.logprobs, b.total / max(len(b.tokens), 1) ** self.length_penalty, False, p)
                for b, p in zip(self.beams, parents, strict=True)
            )
            self.done = True
            self.beams = []
            return []
        return parents

    def best_index(self) -> int:
        """Index into `finished` of the best hypothesis by score; ties go to the earliest."""
        return max(range(len(self.finished)), key=lambda i: (self.finished[i].score, -i))

    def best(self) -> FinishedBeam:
        return self.finished[self.best_index()]
