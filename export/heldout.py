"""Held-out (source, reference) token pairs for parity and the int8 exact-match check, built the
way training builds them: the bundled generator's held-out split, the checkpoint's task, EOS on
the source. Imports model/.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.data import generate_examples
from model.tasks import make_pairs
from model.tokenizer import Tokenizer


@dataclass(frozen=True)
class HeldOut:
    sources: list[list[int]]  # EOS included
    references: list[list[int]]  # target ids, without BOS/EOS


def held_out_pairs(
    tokenizer_path: Path,
    metadata: dict[str, Any],
    *,
    count: int,
    split: str,
    seed: int,
    max_source_tokens: int,
    max_target_tokens: int,
) -> HeldOut:
    """`count` held-out pairs that fit the manifest's maximum lengths.

    Args:
        tokenizer_path: the checkpoint's tokenizer.json.
        metadata: the checkpoint's config.json; its "train" section names the task.
        count: how many pairs to return.
        split: the generator split ("valid" or "test").
        seed: the generator seed.
        max_source_tokens: longest source, EOS included.
        max_target_tokens: longest reference, EOS included.
    """
    tokenizer = Tokenizer.from_file(tokenizer_path)
    task = str(metadata.get("train", {}).get("task", "seq2seq"))
    # Spares for the too-long ones: a small model's short limit (64 tokens) can leave fewer than half of a
    # stream that holds paragraphs. The first `count` that fit are the same whatever the number of spares.
    examples = generate_examples(8 * count, seed=seed, split=split)
    encoded = [(tokenizer.encode(e.source), tokenizer.encode(e.target)) for e in examples]
    pairs = make_pairs(task, encoded, seed=seed, mask_id=tokenizer.mask_id)
    fitting = [p for p in pairs if len(p.source) + 1 <= max_source_tokens and len(p.target) + 1 <= max_target_tokens][
        :count
    ]
    return HeldOut(
        sources=[p.source + [tokenizer.eos_id] for p in fitting],
        references=[list(p.target) for p in fitting],
    )
