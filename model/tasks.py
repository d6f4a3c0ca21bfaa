"""The three training tasks of the transformer literature, as pure functions from text pairs to
(source ids, target ids): seq2seq (T5/Vaswani), denoise (BART-style span masking) and prefix_lm
(the second half of a text predicted from the first). Imports only model/.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

TASKS = ("seq2seq", "denoise", "prefix_lm")


@dataclass(frozen=True)
class TokenPair:
    source: list[int]  # without EOS; the batcher appends it
    target: list[int]


def seq2seq_pair(source: list[int], target: list[int], rng: random.Random, mask_id: int) -> TokenPair:
    return TokenPair(source, target)


def denoise_pair(source: list[int], target: list[int], rng: random.Random, mask_id: int) -> TokenPair:
    """Replace random spans (about 15% of tokens, mean span 3) of the target text with one <mask>
    each; the decoder restores the whole text."""
    text = target
    masked: list[int] = []
    position = 0
    while position < len(text):
        if rng.random() < 0.15 / 3:
            span = max(1, min(len(text) - position, int(rng.expovariate(1 / 3)) + 1))
            masked.append(mask_id)
            position += span
        else:
            masked.append(text[position])
            position += 1
    return TokenPair(masked, text)


def prefix_lm_pair(source: list[int], target: list[int], rng: random.Random, mask_id: int) -> TokenPair:
    """The first half of the text is the source, the hidden second half the target."""
    text = target
    middle = max(1, len(text) // 2)
    return TokenPair(text[:middle], text[middle:])


TASK_FUNCTIONS: dict[str, Callable[[list[int], list[int], random.Random, int], TokenPair]] = {
    "seq2seq": seq2seq_pair,
    "denoise": denoise_pair,
    "prefix_lm": prefix_lm_pair,
}


def make_pairs(
    task: str, encoded: Sequence[tuple[list[int], list[int]]], *, seed: int, mask_id: int
) -> list[TokenPair]:
    if task not in TASK_FUNCTIONS:
        raise ValueError(f"unknown task {task!r}; choose one of {TASKS}")
    rng = random.Random(seed)
    build = TASK_FUNCTIONS[task]
    return [build(source, target, rng, mask_id) for source, target in encoded]
