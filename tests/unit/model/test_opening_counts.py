"""Texts whose later sentence opens with its count: the count (or the words just before it) opens that sentence,
capitalized, the target is the same text with the count in digits, every pair passes the edit guard unchanged,
and the drill draws from training's carriers only."""

from __future__ import annotations

import random
import re

from model.carrier_text import carriers
from model.data import generate_examples
from model.drills import OPENING_COUNT_CATEGORY, mix_in_opening_count_drills
from model.frequent_text import held_out_only_words
from model.opening_counts import (
    HEADING_WORDS,
    capitalized,
    count_line,
    lookalike_words,
    opening_count_sentence,
    opening_count_text,
)
from model.words import edit_guard_spec, number_word_stems
from service.engine.edit_guard import EditGuard


def test_the_count_or_the_words_before_it_open_the_sentence_capitalized() -> None:
    rng = random.Random(1)
    opened_by_count = opened_by_lead = copied = 0
    for _ in range(2000):
        lang = rng.choice(("es", "en"))
        source, target = opening_count_sentence(rng, lang)
        first_letter = re.search(r"[^\W\d_]", source)
        assert first_letter and first_letter.group().isupper(), source
        if source == target:  # a lookalike of a number word where the count would be, copied
            copied += 1
            continue
        digits = re.findall(r"\d+", target)
        assert len(digits) == 1 and int(digits[0]) >= 2, target
        if target[:1].isdigit():
            opened_by_count += 1
            assert source.endswith(target[len(digits[0]) :]), (source, target)
        else:
            opened_by_lead += 1
            assert source.split(" ")[0] == target.split(" ")[0], (source, target)
        # Every sentence is the tail of one of training's carriers, the part after the slot kept whole.
        tails = {t.split("{n}")[1] for t in carriers(f"number_{lang}", "train") if t.count("{n}") == 1}
        assert any(target.endswith(tail) for tail in tails), target
    assert 0.25 < copied / 2000 < 0.35 and 0.3 < opened_by_count / 2000 < 0.45 and opened_by_lead > 400


def test_no_quote_bracket_or_spanish_question_is_cut_open() -> None:
    rng = random.Random(2)
    for _ in range(2000):
        lang = rng.choice(("es", "en"))
        source, _ = opening_count_sentence(rng, lang)
        for opening, closing in (("«", "»"), ("“", "”"), ("(", ")"), ("[", "]")):
            assert source.count(closing) <= source.count(opening), source
        if lang == "es":
            assert source.count("?") <= source.count("¿") and source.count("!") <= source.count("¡"), source


def test_a_later_sentence_opens_with_the_count_and_every_text_passes_the_guard() -> None:
    guard = EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")
    rng = random.Random(3)
    for _ in range(1500):
        source, target = opening_count_text(rng, rng.choice(("es", "en")))
        assert guard.apply(source, target).text == target, (source, target)
        # The opening sentence is never the first: something ends before it.
        assert re.search(r"[.!?…][»\"”')]*\s+\S", source), source
        assert source.count("\n") == target.count("\n")


def test_texts_hold_no_held_out_carrier() -> None:
    held_out = {
        template.split("{n}")[1]
        for split in ("valid", "test")
        for template in carriers("number_es", split) + carriers("number_en", split)
        if "{n}" in template
    }
    rng = random.Random(4)
    for _ in range(1000):
        source, _ = opening_count_sentence(rng, rng.choice(("es", "en")))
        assert not any(len(tail) > 12 and source.endswith(tail) for tail in held_out), source


def test_capitalized_skips_opening_marks_and_leaves_digits() -> None:
    assert capitalized("¿tiene dos?") == "¿Tiene dos?"
    assert capitalized("«dos» dijo") == "«Dos» dijo"
    assert capitalized("40 tickets") == "40 tickets"
    assert capitalized("") == ""


def test_mix_in_replaces_the_last_quarter_and_is_seeded() -> None:
    batch = generate_examples(64, seed=3, split="train")
    mixed = mix_in_opening_count_drills(batch, random.Random(5), 0.0625)
    assert len(mixed) == 64 and mixed[:48] == batch[:48] and mixed[52:] == batch[52:]
    assert [e.category for e in mixed[48:52]] == [OPENING_COUNT_CATEGORY] * 4
    assert mixed == mix_in_opening_count_drills(batch, random.Random(5), 0.0625)


def test_count_lines_are_headings_table_rows_and_dialogue_and_pass_the_guard() -> None:
    guard = EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")
    rng = random.Random(6)
    kinds = {"heading": 0, "table_row": 0, "separator_row": 0, "dialogue": 0, "lookalike": 0}
    for _ in range(1500):
        lang = rng.choice(("es", "en"))
        source, target = count_line(rng, lang)
        assert "\n" not in source and guard.apply(source, target).text == target, (source, target)
        if re.fullmatch(r"\|[-: |]+\|", source):
            kinds["separator_row"] += 1
            assert source == target
            continue
        if source == target:
            assert lookalike_opening(source), source
            kinds["lookalike"] += 1
            continue
        assert len(re.findall(r"\d+", target)) == 1, (source, target)
        if source.startswith("|"):
            kinds["table_row"] += 1
            assert source.count("|") == target.count("|") >= 3
        elif re.sub(r"^[#* ]+", "", source).split(" ")[0] in HEADING_WORDS[lang]:
            kinds["heading"] += 1
        else:
            kinds["dialogue"] += 1
    assert kinds.pop("separator_row") > 30 and kinds.pop("lookalike") > 300 and min(kinds.values()) > 250, kinds


def lookalike_opening(text: str) -> bool:
    """Whether `text` holds a word that opens like a number word (its first three letters) or holds one, and is
    none ("Those", "Renineteen")."""
    stems = set(number_word_stems("es")) | set(number_word_stems("en"))
    return any(
        (w[:3].lower() in {s[:3] for s in stems} or any(s in w.lower() for s in stems)) and w.lower() not in stems
        for w in re.findall(r"\w+", text)
    )


def test_lookalikes_open_like_a_number_word_and_are_none() -> None:
    for lang in ("es", "en"):
        words = lookalike_words(lang)
        assert len(words) > 100 and not set(words) & set(number_word_stems(lang))
        assert all(lookalike_opening(word) for word in words)
    assert {"those", "several", "thought"} <= set(lookalike_words("en"))
    assert {"cuando", "siempre", "nuevo"} <= set(lookalike_words("es"))


def test_count_lines_hold_no_held_out_word_and_only_with_a_line_share() -> None:
    for lang in ("es", "en"):
        assert not {w.lower() for w in HEADING_WORDS[lang]} & held_out_only_words(lang)
    rng = random.Random(7)
    texts = [opening_count_text(rng, "en") for _ in range(200)]
    assert all(re.search(r"[.!?…][»\"”')]*\s+\S", source) for source, _ in texts)
    lines = [opening_count_text(rng, "es", line_share=1.0) for _ in range(200)]
    assert all("\n" not in source for source, _ in lines)
