"""Per-request constraints on the next token, as transformers' logits processors apply them: bad words,
no repeated n-grams, a minimum length, a forced first and a forced last token. Every decoding strategy
applies them (greedy and sampling to the logits, beam search to the log-probabilities, as transformers
does). Pure numpy; the rules come from the manifest's `generation` (docs/model-directory.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from service.engine.errors import ModelLoadError


@dataclass(frozen=True)
class DecodingRules:
    start: int  # the decoder's start token: the n-gram and bad-word rules see it as transformers does
    eos: int
    bad_words: tuple[tuple[int, ...], ...] = ()  # token sequences never generated
    no_repeat_ngram_size: int = 0  # 0 = off
    min_length: int = 0  # transformers' min_length: the sequence with its start token, before EOS may come
    forced_bos: int | None = None  # the first generated token
    forced_eos: int | None = None  # the last token allowed by max_new_tokens

    @classmethod
    def from_manifest(cls, generation: Mapping[str, Any] | None, *, start: int, eos: int, where: str) -> DecodingRules:
        """Raises ModelLoadError naming a malformed field of manifest["generation"]."""
        if not generation:
            return cls(start=start, eos=eos)
        try:
            bad_words = tuple(tuple(int(t) for t in word) for word in generation.get("bad_words_ids") or ())
            # transformers drops a bad word that is EOS alone (NoBadWordsLogitsProcessor).
            bad_words = tuple(word for word in bad_words if word and word != (eos,))
            forced_bos, forced_eos = generation.get("forced_bos_token_id"), generation.get("forced_eos_token_id")
            return cls(
                start=start,
                eos=eos,
                bad_words=bad_words,
                no_repeat_ngram_size=int(generation.get("no_repeat_ngram_size") or 0),
                min_length=int(generation.get("min_length") or 0),
                forced_bos=None if forced_bos is None else int(forced_bos),
                forced_eos=None if forced_eos is None else int(forced_eos),
            )
        except (TypeError, ValueError) as error:
            raise ModelLoadError(f"{where}: malformed generation rules: {error}") from error

    @property
    def active(self) -> bool:
        return bool(
            self.bad_words
            or self.no_repeat_ngram_size
            or self.min_length
            or self.forced_bos is not None
            or self.forced_eos is not None
        )

    @cached_property
    def _single_token_bans(self) -> frozenset[int]:
        return frozenset(word[0] for word in self.bad_words if len(word) == 1)

    @cached_property
    def _depends_on_history(self) -> bool:
        return bool(self.no_repeat_ngram_size) or any(len(word) > 1 for word in self.bad_words)

    def keeps_argmax(self, token: int, generated_count: int, *, max_new_tokens: int) -> bool:
        """Whether `token`, the arg-max of the raw logits, is also the arg-max after the rules, known
        without applying them: no rule that depends on the history, no forced token or minimum length
        at this step, and `token` not a banned single-token word. Then greedy decoding need not copy
        and mask its row (Marian bans <pad> at every step: 58k logits a row)."""
        length = generated_count + 1  # with the start token, as in apply
        return not (
            self._depends_on_history
            or token in self._single_token_bans
            or length < self.min_length
            or (self.forced_bos is not None and length == 1)
            or (self.forced_eos is not None and length == max_new_tokens)
        )

    def apply(self, scores: np.ndarray, generated: Sequence[int], *, max_new_tokens: int) -> np.ndarray:
        """(V,) scores after the rules, for the token after `generated` (ids without the start token)."""
        if not self.active:
            return scores
        sequence = [self.start, *generated]
        length = len(sequence)  # transformers' cur_len
        banned = self._banned(sequence)
        if length < self.min_length:
            banned.add(self.eos)
        out = scores
        if banned:
            out = scores.copy()
            out[list(banned)] = -np.inf
        forced = None
        if self.forced_bos is not None and length == 1:
            forced = self.forced_bos
        if self.forced_eos is not None and length == max_new_tokens:  # transformers: cur_len == max_length - 1
            forced = self.forced_eos
        if forced is not None:
            out = np.full_like(scores, -np.inf)
            out[forced] = 0.0
        return out

    def _banned(self, sequence: list[int]) -> set[int]:
        banned: set[int] = set()
        for word in self.bad_words:
            prefix = word[:-1]
            if not prefix or (len(sequence) >= len(prefix) and tuple(sequence[-len(prefix) :]) == prefix):
                banned.add(word[-1])
        n = self.no_repeat_ngram_size
        if n and len(sequence) + 1 >= n:
            tail = tuple(sequence[len(sequence) + 1 - n :])  # the last n-1 tokens
            for start in range(len(sequence) - n + 1):
                if tuple(sequence[start : start + n - 1]) == tail:
                    banned.add(sequence[start + n - 1])
        return banned


@dataclass(frozen=True)
class ModelGeneration:
    """What a model directory says about decoding: its rules and whose beam search it follows."""

    rules: DecodingRules
    beam_search: str = "atento"  # "atento" (beam.py, model/decoding.py's rules) | "transformers" (transformers_beam.py)
    early_stopping: bool | str = False  # transformers' early_stopping: True, False or "never"

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any], *, start: int, eos: int, where: str) -> ModelGeneration:
        """manifest["generation"] (absent for atento's own models). Raises ModelLoadError when malformed."""
        generation = manifest.get("generation")
        if generation is not None and not isinstance(generation, Mapping):
            raise ModelLoadError(f"{where}: generation must be an object")
        rules = DecodingRules.from_manifest(generation, start=start, eos=eos, where=where)
        beam_search = "atento" if generation is None else str(generation.get("beam_search", "atento"))
        early_stopping = False if generation is None else generation.get("early_stopping", False)
        if beam_search not in ("atento", "transformers") or early_stopping not in (True, False, "never"):
            raise ModelLoadError(f"{where}: generation.beam_search or generation.early_stopping is not understood")
        return cls(rules=rules, beam_search=beam_search, early_stopping=early_stopping)
