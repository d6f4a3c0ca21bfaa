"""Counts beside lookalikes of number words: the counts become digits, everything else (the lookalikes first) is
copied, most counts stand beside a lookalike, some counts are capitalized, every pair passes the edit guard and
fits one piece, and the drills take their own place in a batch."""

from __future__ import annotations

import random
import re
from difflib import SequenceMatcher

from model.copytext import fits_one_piece
from model.data import generate_examples
from model.drills import LOOKALIKE_COUNT_CATEGORY, mix_in_lookalike_count_drills
from model.lookalike_counts import lookalike_count_passage, lookalike_count_text
from model.words import edit_guard_spec, number_word_stems
from service.engine.edit_guard import EditGuard

DRAWS = 1500


def _changed_runs(source: str, target: str) -> tuple[list[str], list[str]]:
    """The runs of `source`'s words that `target` writes differently, and what it writes for each."""
    words, written = source.split(" "), target.split(" ")
    opcodes = SequenceMatcher(None, words, written, autojunk=False).get_opcodes()
    changed = [(words[i1:i2], written[j1:j2]) for op, i1, i2, j1, j2 in opcodes if op != "equal"]
    assert all(len(digits) == 1 for _, digits in changed), (source, target)
    return [" ".join(run) for run, _ in changed], [digits[0] for _, digits in changed]


def test_counts_become_digits_and_everything_else_is_copied() -> None:
    rng = random.Random(1)
    capitalized = beside_lookalike = counts = 0
    stems = {lang: tuple(number_word_stems(lang)) for lang in ("es", "en")}
    for _ in range(DRAWS):
        lang = rng.choice(("es", "en"))
        source, target = lookalike_count_text(rng, lang)
        runs, numbers = _changed_runs(source, target)
        assert 1 <= len(runs) <= 2, (source, target)
        assert all(re.fullmatch(r"\d+[.?!,]?", n) and int(n.rstrip(".?!,")) >= 2 for n in numbers), (source, target)
        counts += len(runs)
        capitalized += sum(run[:1].isupper() for run in runs)
        for run in runs:
            before, _, after = f" {source} ".partition(f" {run} ")
            neighbours = [*before.split()[-1:], *after.split()[:1]]
            beside_lookalike += any(
                word.lower().startswith(stem) or word.lower().endswith(stem) or stem in word.lower()
                for word in neighbours
                for stem in stems[lang]
            )
    assert 0.3 < capitalized / counts < 0.5
    assert beside_lookalike / counts > 0.6


def test_every_text_and_passage_passes_the_guard_and_fits_one_piece() -> None:
    guard = EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")
    rng = random.Random(2)
    refused = []
    for make in (lookalike_count_text, lookalike_count_passage):
        for _ in range(DRAWS):
            source, target = make(rng, rng.choice(("es", "en")))
            if guard.apply(source, target).text != target:
                refused.append((source, target))
            assert fits_one_piece(source) and fits_one_piece(target)
            assert source.count("\n") == target.count("\n")
    # One in thousands is refused: an English "ten" after a Spanish sentence and a word the guard reads as
    # Spanish ("tener") is the Spanish imperative to its language rule ("Ten cuidado" stays words).
    assert len(refused) <= 2, refused


def test_most_passages_put_sentences_of_training_before_the_counts() -> None:
    rng = random.Random(5)
    after_a_sentence = 0
    for _ in range(DRAWS):
        source, _ = lookalike_count_passage(rng, rng.choice(("es", "en")))
        after_a_sentence += bool(re.search(r"[.!?…][»\"”')]*\s+\S", source))
    assert 0.6 < after_a_sentence / DRAWS < 0.95


def test_the_drills_take_five_eighths_on_of_a_batch() -> None:
    examples = generate_examples(64, seed=3, split="train")
    mixed = mix_in_lookalike_count_drills(examples, random.Random(4), 0.0625)
    assert len(mixed) == 64
    assert [i for i, e in enumerate(mixed) if e.category == LOOKALIKE_COUNT_CATEGORY] == [40, 41, 42, 43]
    assert mixed[:40] == examples[:40] and mixed[44:] == examples[44:]
