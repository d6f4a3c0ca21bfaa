"""Per-request token selection over one row of logits: repetition penalty, temperature, top-k, top-p,
seeded sampling (a numpy Generator per request, so a seed gives the same output whatever shares the
batch) and greedy arg-max (ties -> lowest id). Pure numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.types import GenerationParams

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in the logits' own float type, (..., V) -> (..., V)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_total = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    result: np.ndarray = (shifted - log_total).astype(logits.dtype, copy=False)
    return result


def apply_repetition_penalty(logits: np.ndarray, previous: Sequence[int], penalty: float) -> np.ndarray:
    """CTRL (Keskar et al., 2019): divide positive logits of already generated ids, multiply negative ones."""
    if not previous or penalty == 1.0:
        return logits
    ids = np.unique(np.asarray(previous, dtype=np.int64))
    out = logits.copy()
    picked = out[..., ids].astype(np.float64)
    # Any positive finite penalty is valid; an extreme one must leave a finite float32 logit, not inf.
    with np.errstate(over="ignore"):
        penalized = np.where(picked > 0, picked / penalty, picked * penalty)
    out[..., ids] = np.clip(penalized, -_FLOAT32_MAX, _FLOAT32_MAX)
    return out


def top_k_filter(logits: np.ndarray, k: int) -> np.ndarray:
    """Keep the k largest logits (and any tied with the k-th); the rest become -inf."""
    if k >= logits.shape[-1]:
        return logits
    kth = np.partition(logits, -k)[-k]
    return np.where(logits >= kth, logits, -np.inf).astype(logits.dtype, copy=False)


def top_p_filter(logits: np.ndarray, p: float) -> np.ndarray:
    """Nucleus filtering: keep the smallest most-probable set whose probability reaches p."""
    if p >= 1.0:
        return logits
    order = np.argsort(-logits, kind="stable")
    probs = np.exp(log_softmax(logits[order]).astype(np.float64))
    # Keep a token if the mass strictly before it is below p; the top token always stays.
    keep_sorted = (np.cumsum(probs) - probs) < p
    keep = np.zeros_like(keep_sorted)
    keep[order] = keep_sorted
    return np.where(keep, logits, -np.inf).astype(logits.dtype, copy=False)


class TokenChooser:
    """Chooses one request's next token from its logits row (greedy or sampling)."""

    def __init__(self, params: GenerationParams, *, seed: int | None) -> None:
        self.params = params
        self._rng = np.random.Generator(np.random.PCG64(seed)) if params.do_sample else None

    def process(self, logits: np.ndarray, previous: Sequence[int]) -> np.ndarray:
        """The logits after the repetition penalty (shared by greedy, sampling and beam search)."""
        if self.params.repetition_penalty is not None:
            logits = apply_repetition_penalty(logits, previous, self.params.repetition_penalty)
        return logits

    @property
    def is_plain_greedy(self) -> bool:
        """Arg-max of the raw logits: the batch picks these rows' tokens at once (see choose_token)."""
        return self._rng is None and self.params.repetition_penalty is None

    def choose(
        self, logits: np.ndarray, previous: Sequence[int], *, logprobs: np.ndarray | None = None
    ) -> tuple[int, float]:
        """Returns (token id, the model's log-probability of it) for one (V,) float32 row.

        `logprobs` is log_softmax(logits) when the caller computed it for the whole batch at once.
        """
        model_logprobs = log_softmax(logits) if logprobs is None else logprobs
        token = self.choose_token(logits, previous)
        return token, float(model_logprobs[token])

    def choose_token(self, logits: np.ndarray, previous: Sequence[int]) -> int:
        """The next token id for one (V,) float32 row of raw logits."""
        scores = self.process(logits, previous)
        if self._rng is None:
            return int(np.argmax(scores))  # first maximum = lowest id on ties
        # Any positive temperature is valid, down to 5e-324: scaled from the top logit in float64, a tiny
        # one sends every other logit to -inf (probability 0, almost greedy), never to +inf or NaN.
        scores = scores.astype(np.float64)
        with np.errstate(over="ignore"):
            scores = (scores - scores.max()) / self.params.temperature
        if self.params.top_k is not None:
            scores = top_k_filter(scores, self.params.top_k)
        if self.params.top_p is not None:
            scores = top_p_filter(scores, self.params.top_p)
        probs = np.exp(scores - scores.max())  # unnormalised: the draw below scales by the total
        # Inverse CDF with one uniform draw per step: the draw sequence depends on the seed alone.
        cdf = np.cumsum(probs)
        token = int(np.searchsorted(cdf, self._rng.random() * cdf[-1], side="right"))
        token = min(token, len(cdf) - 1)
        while probs[token] == 0.0:  # float round-off at the top can land on a filtered id
            token -= 1
        return token


def chosen_logprobs(logits: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """(B,) log_softmax(logits)[b, tokens[b]] for (B, V) logits, bit-identical to log_softmax's values.

    Same float32 operations as log_softmax, but the final subtraction only for the chosen ids.
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)
    picked = shifted[np.arange(len(tokens)), tokens]
    # exp in place: at a 58k vocabulary and batch 32 a second (B, V) array cost 1.1 ms of 5.7 a step.
    log_total = np.log(np.exp(shifted, out=shifted).sum(axis=-1, keepdims=True))  # (B, 1)
    chosen: np.ndarray = (picked - log_total[:, 0]).astype(np.float32, copy=False)
    return chosen


def logprobs_of_rows(logits: np.ndarray, chosen: Sequence[int], rows: Sequence[int]) -> list[float | None]:
    """The log-probabilities of `chosen` (one token per row of `logits`) at `rows`, None at the others."""
    logprobs: list[float | None] = [None] * len(chosen)
    if not rows:
        return logprobs
    tokens = np.asarray(chosen, dtype=np.int64)
    if 2 * len(rows) >= len(chosen):  # most rows: the whole batch costs less than gathering them first
        every_row = chosen_logprobs(logits, tokens).tolist()
        for row in rows:
            logprobs[row] = every_row[row]
        return logprobs
    index = np.asarray(rows, dtype=np.int64)
    for row, value in zip(rows, chosen_logprobs(logits[index], tokens[index]).tolist(), strict=True):
        logprobs[row] = value
    return logprobs
