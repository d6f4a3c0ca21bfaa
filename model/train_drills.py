"""Which drills a training batch gets: each kind replaces its share of the batch (`TrainConfig`'s *_drill_share
flags), drawn from a generator seeded by the run's seed and the step alone, so a resumed or repeated run draws the
same batches (model/drills.py makes them)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from model.data import Example
from model.drills import (
    CopyDrills,
    mix_in_character_drills,
    mix_in_frequent_word_drills,
    mix_in_leap_day_drills,
    mix_in_opening_count_drills,
)
from model.train_config import TrainConfig


def mix_in_drills(
    examples: Sequence[Example], config: TrainConfig, step: int, drills: CopyDrills | None
) -> Sequence[Example]:
    """`examples` (one step's batch) with every drill the config asks for mixed in, in a fixed order."""
    if config.leap_day_drill_share > 0:
        leap_rng = random.Random(f"leap-day-drills:{config.seed}:{step}")
        examples = mix_in_leap_day_drills(
            examples, leap_rng, config.leap_day_drill_share, minimal_pairs=config.leap_day_minimal_pairs
        )
    if config.frequent_word_drill_share > 0:
        frequent_rng = random.Random(f"frequent-word-drills:{config.seed}:{step}")
        examples = mix_in_frequent_word_drills(
            examples,
            frequent_rng,
            config.frequent_word_drill_share,
            punctuated_share=config.frequent_word_punctuated_share,
            opening_share=config.frequent_word_opening_share,
            markup_share=config.frequent_word_markup_share,
            range_share=config.frequent_word_range_share,
            unit_share=config.frequent_word_unit_share,
        )
    if config.opening_count_drill_share > 0:
        opening_rng = random.Random(f"opening-count-drills:{config.seed}:{step}")
        examples = mix_in_opening_count_drills(
            examples, opening_rng, config.opening_count_drill_share, line_share=config.opening_count_line_share
        )
    if config.character_drill_share > 0:
        character_rng = random.Random(f"character-drills:{config.seed}:{step}")
        examples = mix_in_character_drills(examples, character_rng, config.character_drill_share)
    if drills is not None:
        examples = drills.mix_into(
            examples,
            random.Random(f"drills:{config.seed}:{step}"),
            config.copy_drill_share,
            run_share=config.copy_drill_run_share,
        )
    return examples
