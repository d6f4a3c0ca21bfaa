"""The engine API's value types (docs/engine-api.md), re-exported by service.engine.

Pure dataclasses plus their validation; imports numpy, service.engine.errors and edit_guard's RevertedEdit only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from service.engine.edit_guard import RevertedEdit
from service.engine.errors import InvalidInput

ATTENTION_KINDS = frozenset({"encoder", "decoder", "cross"})
MAX_LENGTH_PENALTY = 10.0  # |length_penalty|; NaN fails the comparison too


@dataclass(frozen=True)
class GenerationParams:
    max_new_tokens: int = 64  # clipped to the model's max_target_tokens - 1
    do_sample: bool = False
    temperature: float = 1.0  # > 0
    top_k: int | None = None  # >= 1
    top_p: float | None = None  # (0, 1]
    seed: int | None = None  # sampling seed; the engine picks and reports one when None
    repetition_penalty: float | None = None  # > 0, CTRL-style
    num_beams: int = 1  # > 1 = beam search (no sampling)
    length_penalty: float = 1.0
    stop: tuple[str, ...] = ()  # kept in the text; finish_reason "stop_sequence"
    timeout_s: float | None = None  # deadline from submission
    # Beyond the model's generation defaults (service/engine/request_rules.py); none = the model's.
    no_repeat_ngram_size: int | None = None  # replaces the model's; 0 = off
    bad_words: tuple[str, ...] = ()  # added to the model's bad words, tokenized alone and after a space
    bad_words_ids: tuple[tuple[int, ...], ...] = ()  # added to the model's bad words as they are
    source_language: str | None = None  # a code of the model's languages, in place of its source's own
    target_language: str | None = None  # a code of the model's languages, forced first
    # Each greedy or sampled token's log-probability (TokenEvent.logprob): a softmax over the whole
    # vocabulary every step, 10% of a step at a 58k vocabulary. False = None, for callers that drop it.
    token_logprobs: bool = True

    def validate(self) -> None:
        """Raises InvalidInput naming the first bad field."""
        checks = [
            (self.max_new_tokens >= 1, "max_new_tokens must be >= 1"),
            (self.temperature > 0 and np.isfinite(self.temperature), "temperature must be a finite number > 0"),
            (self.top_k is None or self.top_k >= 1, "top_k must be >= 1"),
            (self.top_p is None or 0 < self.top_p <= 1, "top_p must be in (0, 1]"),
            (self.seed is None or 0 <= self.seed < 2**63, "seed must be in [0, 2**63)"),
            (
                self.repetition_penalty is None or self.repetition_penalty > 0,
                "repetition_penalty must be > 0",
            ),
            (self.num_beams >= 1, "num_beams must be >= 1"),
            (not (self.do_sample and self.num_beams > 1), "do_sample cannot be combined with num_beams > 1"),
            (
                self.repetition_penalty is None or np.isfinite(self.repetition_penalty),
                "repetition_penalty must be finite",
            ),
            # Beam scores divide by length ** length_penalty: past this it overflows (or reaches 0).
            (
                abs(self.length_penalty) <= MAX_LENGTH_PENALTY,
                f"length_penalty must be in [-{MAX_LENGTH_PENALTY:g}, {MAX_LENGTH_PENALTY:g}]",
            ),
            (all(isinstance(s, str) and s for s in self.stop), "stop sequences must be non-empty strings"),
            (self.timeout_s is None or self.timeout_s > 0, "timeout_s must be > 0"),
            (
                self.no_repeat_ngram_size is None or self.no_repeat_ngram_size >= 0,
                "no_repeat_ngram_size must be >= 0",
            ),
            (all(isinstance(w, str) and w for w in self.bad_words), "bad_words must be non-empty strings"),
            (all(w and min(w) >= 0 for w in self.bad_words_ids), "bad_words_ids must be non-empty lists of ids"),
        ]
        for ok, message in checks:
            if not ok:
                raise InvalidInput(message)


@dataclass(frozen=True)
class AttentionSpec:
    kinds: frozenset[str] = ATTENTION_KINDS
    layers: tuple[int, ...] | None = None  # None = all
    heads: tuple[int, ...] | None = None  # None = all

    def validate(self, *, encoder_layers: int, decoder_layers: int, heads: int) -> None:
        unknown = set(self.kinds) - ATTENTION_KINDS
        if unknown or not self.kinds:
            raise InvalidInput(f"attention kinds must be a non-empty subset of {sorted(ATTENTION_KINDS)}")
        if self.layers is not None:
            limit = min(
                encoder_layers if "encoder" in self.kinds else decoder_layers,
                decoder_layers if self.kinds & {"decoder", "cross"} else encoder_layers,
            )
            if not self.layers or any(not 0 <= layer < limit for layer in self.layers):
                raise InvalidInput(f"attention layers must be in [0, {limit})")
        if self.heads is not None and (not self.heads or any(not 0 <= h < heads for h in self.heads)):
            raise InvalidInput(f"attention heads must be in [0, {heads})")


@dataclass(frozen=True, slots=True)  # slots: made for every token, at half a frozen dataclass's cost
class TokenEvent:
    id: int
    text: str  # decode of the ids so far minus decode before
    logprob: float | None  # the model's log-probability (log-softmax of the raw logits); None unless asked
    special: bool  # True for EOS

    def with_text(self, text: str) -> TokenEvent:
        """This event with `text` instead (itself when the text is the same): dataclasses.replace cost a
        request's join 17 calls at 15 us each."""
        return self if text == self.text else TokenEvent(self.id, text, self.logprob, self.special)


@dataclass(frozen=True)
class Attention:
    encoder: dict[int, np.ndarray]  # layer -> (heads, S, S)
    decoder: dict[int, np.ndarray]  # layer -> (heads, T, T), T = decoder positions incl. BOS
    cross: dict[int, np.ndarray]  # layer -> (heads, T, S)
    heads: tuple[int, ...]


@dataclass(frozen=True)
class GenerationResult:
    text: str
    token_ids: list[int]  # generated, without BOS; EOS excluded
    tokens: list[TokenEvent]  # EOS included when finish_reason == "eos"
    finish_reason: str  # "eos" | "length" | "stop_sequence"
    input_token_ids: list[int]  # source ids including EOS
    seed: int | None
    attention: Attention | None = field(default=None)
    # The spans the edit guard put back (service/engine/edit_guard.py); None when no guard ran.
    edit_guard: tuple[RevertedEdit, ...] | None = None


@dataclass(frozen=True)
class EngineStats:
    """What the engine holds now (the HTTP side's gauges)."""

    queue_depth: int
    running_sequences: int  # decoder rows (beams count each)
    running_requests: int


@dataclass(frozen=True)
class ModelInfo:
    """The served model, as GET /info reports it."""

    name: str
    version: str
    config: Mapping[str, Any]
    files: Mapping[str, str]  # file name -> sha256
    variant: str
    provider: str
    max_source_tokens: int
    max_target_tokens: int
    limits: Mapping[str, Any]  # the batching settings
    languages: Mapping[str, Any] | None = None  # manifest["languages"]: codes, source, target; None = none
    # Labels of the special ids a source or an output can hold without text of their own (the source
    # template's EOS and language code, the forced target code): what /attention shows for them.
    special_labels: Mapping[int, str] = field(default_factory=dict)
    # The output side's labels when the decoder has a vocabulary of its own (a target tokenizer: one id is a
    # different entry on each side); None: special_labels label outputs too.
    output_labels: Mapping[int, str] | None = None
    # The decoder graphs the engine runs (runner.py): {"format_3": file or None, "format_2": file}; {} for a
    # runner of the embedding program's own.
    decoder_graphs: Mapping[str, str | None] = field(default_factory=dict)
