"""Where a training run's examples come from: the bundled generator (fresh examples every step, its
category shares adjustable per run) or a TSV file of pairs (reshuffled every epoch)."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import TYPE_CHECKING

from model.data import CATEGORIES, DataError, Example, generate_examples, read_pairs_tsv

if TYPE_CHECKING:
    from model.train_config import TrainConfig


def parse_category_weights(text: str | None) -> dict[str, float]:
    """ "a=1.5,b=2" -> {"a": 1.5, "b": 2.0}; names are checked against the generator's categories."""
    if not text:
        return {}
    weights = {}
    for item in text.split(","):
        name, separator, value = item.strip().partition("=")
        if not separator:
            raise DataError(f"--category-weights: {item!r} is not category=weight")
        if name not in CATEGORIES:
            raise DataError(f"--category-weights: unknown category {name!r}; the categories are in model/data.py")
        try:
            weights[name] = float(value)
        except ValueError:
            raise DataError(f"--category-weights: {value!r} is not a number") from None
        if weights[name] < 0:
            raise DataError(f"--category-weights: {name} has a negative weight")
    return weights


def stable_bucket(text: str, buckets: int = 100) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") % buckets


class PairSource:
    """Where examples come from: the bundled generator (fresh examples every step) or a TSV file
    (reshuffled every epoch). Both are pure functions of (seed, step)."""

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.category_weights = parse_category_weights(config.category_weights)
        if self.category_weights and config.data is not None:
            raise DataError("--category-weights applies to the bundled generator, not to --data files")
        self.cooldown_weights = {**self.category_weights, **parse_category_weights(config.cooldown_category_weights)}
        if config.cooldown_category_weights and config.data is not None:
            raise DataError("--cooldown-category-weights applies to the bundled generator, not to --data files")
        if config.cooldown_category_weights and config.cooldown_steps <= 0:
            raise DataError("--cooldown-category-weights needs a cool-down (--cooldown-steps)")
        if config.leap_day_drill_share > 0 and config.data is not None:
            raise DataError("--leap-day-drill-share applies to the bundled generator, not to --data files")
        if config.frequent_word_drill_share > 0 and config.data is not None:
            raise DataError("--frequent-word-drill-share applies to the bundled generator, not to --data files")
        if config.frequent_word_punctuated_share > 0 and config.frequent_word_drill_share <= 0:
            raise DataError("--frequent-word-punctuated-share shapes the frequent-word drills: give their share too")
        if config.frequent_word_markup_share > 0 and config.frequent_word_punctuated_share <= 0:
            raise DataError("--frequent-word-markup-share shapes the punctuated marks: give their share too")
        if config.frequent_word_range_share > 0 and config.frequent_word_drill_share <= 0:
            raise DataError("--frequent-word-range-share shapes the frequent-word drills: give their share too")
        if config.frequent_word_unit_share > 0 and config.frequent_word_drill_share <= 0:
            raise DataError("--frequent-word-unit-share shapes the frequent-word drills: give their share too")
        if config.frequent_word_opening_share > 0 and config.frequent_word_drill_share <= 0:
            raise DataError("--frequent-word-opening-share shapes the frequent-word drills: give their share too")
        if config.opening_count_drill_share > 0 and config.data is not None:
            raise DataError("--opening-count-drill-share applies to the bundled generator, not to --data files")
        if config.opening_count_line_share > 0 and config.opening_count_drill_share <= 0:
            raise DataError("--opening-count-line-share shapes the opening-count drills: give their share too")
        if config.character_drill_share > 0 and config.data is not None:
            raise DataError("--character-drill-share applies to the bundled generator, not to --data files")
        if config.leap_day_minimal_pairs and config.leap_day_drill_share <= 0:
            raise DataError("--leap-day-minimal-pairs shapes the leap-day drills: give --leap-day-drill-share too")
        self.file_train: list[Example] = []
        self.file_valid: list[Example] = []
        if config.data is not None:
            examples = read_pairs_tsv(Path(config.data))
            if not examples:
                raise DataError(f"{config.data}: no examples")
            # 5% held out for validation, chosen by a hash of the source so it is stable.
            self.file_valid = [e for e in examples if stable_bucket(e.source) < 5] or examples[:1]
            self.file_train = [e for e in examples if stable_bucket(e.source) >= 5] or examples

    def train_batch(self, step: int, *, cooling: bool = False) -> list[Example]:
        """The examples of `step` (0-based); `cooling`: the step is in the cool-down, where the generator
        draws with --cooldown-category-weights."""
        size, seed = self.config.batch_size, self.config.seed
        if self.config.data is None:
            weights = self.cooldown_weights if cooling else self.category_weights
            return generate_examples(size, seed=seed * 1_000_003 + step, split="train", weights=weights)
        per_epoch = max(1, len(self.file_train) // size)
        epoch, index = divmod(step, per_epoch)
        order = list(range(len(self.file_train)))
        random.Random(seed * 7919 + epoch).shuffle(order)
        picked = order[index * size : (index + 1) * size]
        return [self.file_train[i] for i in picked]

    def validation(self) -> list[Example]:
        if self.config.data is None:
            return generate_examples(self.config.valid_size, seed=self.config.seed + 17, split="valid")
        return self.file_valid[: self.config.valid_size]

    def tokenizer_corpus(self) -> list[str]:
        if self.config.data is None:
            examples = generate_examples(self.config.tokenizer_corpus, seed=self.config.seed + 29, split="train")
        else:
            examples = self.file_train
        return [text for e in examples for text in (e.source, e.target)]
