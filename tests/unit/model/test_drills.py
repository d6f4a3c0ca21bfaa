"""Copy drills: every token of the vocabulary becomes a training target, never a number word or month.
Leap-day drills: 29 February of leap and common years alike, each rewritten as the contract says; as minimal
pairs, the same words with a leap year and a common year beside it."""

from __future__ import annotations

import calendar
import os
import random
import re
from collections import Counter

from model.data import generate_examples
from model.drills import (
    CATEGORY,
    CHARACTER_CATEGORY,
    LEAP_DAY_CATEGORY,
    CopyDrills,
    character_drill_sentence,
    lead_byte_character,
    mix_in_character_drills,
    mix_in_leap_day_drills,
)
from model.sentences_rewritten import leap_day_drill, leap_day_minimal_pair
from model.tokenizer import Tokenizer
from model.words import forbidden_words


def test_drills_reach_every_token_of_the_vocabulary(tok: Tokenizer) -> None:
    drills = CopyDrills(tok, forbidden=forbidden_words())
    rng = random.Random(0)
    seen: Counter[int] = Counter()
    for _ in range(3000):
        sentence = drills.sentence(rng)
        ids = tok.encode(sentence)
        assert tok.decode(ids) == sentence
        seen.update(ids)
    pieces = [i for i in range(5, tok.vocab_size) if len(tok.decode([i]).strip()) > 1]
    # Source-only pieces too ("cto" of "October", "veint"): the targets of the task never hold them.
    assert sum(seen[i] > 0 for i in pieces) >= 0.98 * len(pieces)


def test_drills_hold_no_number_word_or_month(tok: Tokenizer) -> None:
    drills = CopyDrills(tok, forbidden=forbidden_words())
    rng = random.Random(1)
    words = [w.lower().strip(".,;:!?¿¡«»\"'()") for _ in range(2000) for w in drills.sentence(rng).split(" ")]
    assert not set(words) & forbidden_words()


def test_mix_into_keeps_the_batch_size_and_is_seeded(tok: Tokenizer) -> None:
    drills = CopyDrills(tok, forbidden=forbidden_words())
    batch = generate_examples(64, seed=3, split="train")
    mixed = drills.mix_into(batch, random.Random(5), 0.0625)
    assert len(mixed) == 64 and mixed[:60] == batch[:60]
    assert [e.category for e in mixed[60:]] == [CATEGORY] * 4
    assert all(e.source == e.target for e in mixed[60:])
    assert mixed == drills.mix_into(batch, random.Random(5), 0.0625)


def test_run_drills_repeat_one_token_two_to_four_times(tok: Tokenizer) -> None:
    """A run word holds one token at least twice in a row, as "currículos" ("r" "r") and "37181114" do."""
    drills = CopyDrills(tok, forbidden=forbidden_words())
    rng = random.Random(2)
    for _ in range(500):
        word = drills.run_word(rng)
        ids = tok.encode(" " + word)
        assert tok.decode(ids).strip() == word
        longest = max(len(m.group()) for m in re.finditer(r"(.)\1*", word))
        assert 2 <= longest, word
        assert word.lower() not in forbidden_words()


def test_run_share_leaves_the_drills_as_they_were_when_zero(tok: Tokenizer) -> None:
    drills = CopyDrills(tok, forbidden=forbidden_words())
    plain = [drills.sentence(random.Random(seed)) for seed in range(200)]
    assert plain == [drills.sentence(random.Random(seed), run_share=0.0) for seed in range(200)]
    with_runs = [drills.sentence(random.Random(seed), run_share=1.0) for seed in range(200)]
    assert all(re.search(r"(.)\1", sentence) for sentence in with_runs)


def test_leap_day_drills_are_dates_exactly_in_leap_years() -> None:
    rng = random.Random(7)
    leap_years, common_years = set(), set()
    for _ in range(600):
        lang = rng.choice(("es", "en"))
        source, target = leap_day_drill(rng, lang)
        assert "veintinueve de febrero" in source or "twenty-ninth" in source
        iso = re.search(r"\b(\d{4})-02-29\b", target)
        kept = re.search(r"(?:febrero de|February,|twenty-ninth,) (\d{4})\b", target)
        assert bool(iso) != bool(kept), (source, target)
        year = int((iso or kept).group(1))  # type: ignore[union-attr]
        assert calendar.isleap(year) == bool(iso), (source, target)
        (leap_years if iso else common_years).add(year)
    # Both kinds in both centuries, about as often: the year must decide, not the century.
    assert len(leap_years) > 40 and len(common_years) > 80
    assert {y // 100 for y in leap_years} == {y // 100 for y in common_years} == {19, 20}


def test_mix_in_leap_day_drills_replaces_the_first_examples() -> None:
    batch = generate_examples(64, seed=3, split="train")
    mixed = mix_in_leap_day_drills(batch, random.Random(5), 0.1)
    assert len(mixed) == 64 and mixed[6:] == batch[6:]
    assert [e.category for e in mixed[:6]] == [LEAP_DAY_CATEGORY] * 6
    assert mixed == mix_in_leap_day_drills(batch, random.Random(5), 0.1)


def test_leap_day_minimal_pairs_differ_by_their_year_alone() -> None:
    rng = random.Random(11)
    for _ in range(300):
        lang = rng.choice(("es", "en"))
        (leap_source, leap_target), (common_source, common_target) = leap_day_minimal_pair(rng, lang)
        leap_year = int(re.search(r"\b(\d{4})-02-29\b", leap_target).group(1))  # type: ignore[union-attr]
        common_year = int(re.search(r"(?:febrero de|February,|twenty-ninth,) (\d{4})\b", common_target).group(1))  # type: ignore[union-attr]
        assert calendar.isleap(leap_year) and not calendar.isleap(common_year)
        assert 1 <= abs(leap_year - common_year) <= 2 and leap_year // 100 == common_year // 100
        # The same carrier and day; only the year's reading differs.
        day = re.search(
            r"veintinueve de febrero de|February twenty-ninth, |the twenty-ninth of February, ", leap_source
        )
        assert day is not None and common_source.startswith(leap_source[: day.end()])
        head = leap_source[: day.start()]
        tail = os.path.commonprefix([leap_source[::-1], common_source[::-1]])[::-1]
        tail = tail[tail.find(" ") :] if " " in tail else ""  # from the end of the year's words on
        for target in (leap_target, common_target):
            assert target.startswith(head) and target.endswith(tail)


def test_minimal_pairs_come_side_by_side_in_the_batch() -> None:
    batch = generate_examples(64, seed=3, split="train")
    mixed = mix_in_leap_day_drills(batch, random.Random(5), 0.125, minimal_pairs=True)
    assert len(mixed) == 64 and mixed[8:] == batch[8:]
    for first, second in zip(mixed[0:8:2], mixed[1:8:2], strict=True):
        assert first.category == second.category == LEAP_DAY_CATEGORY
        assert "-02-29" in first.target and "-02-29" not in second.target


def test_two_in_three_leap_day_drills_are_english() -> None:
    batch = generate_examples(64, seed=3, split="train")
    rng = random.Random(8)
    drills = [e for _ in range(30) for e in mix_in_leap_day_drills(batch, rng, 0.25, minimal_pairs=True)[:16]]
    english = sum(re.search(r"February", e.source) is not None for e in drills)
    assert 0.55 < english / len(drills) < 0.8


def test_character_drills_reach_every_two_byte_lead_evenly() -> None:
    rng = random.Random(2)
    leads = Counter(lead_byte_character(rng).encode("utf-8")[0] for _ in range(6000))
    # 0xC2 leads C1 controls and the no-break space, redrawn. Text hardly holds 0xDC-0xDF (Syriac, Thaana,
    # N'Ko); here each lead is drawn about as often as Cyrillic's 0xD0 (unassigned characters are redrawn).
    two_byte = [leads[b] for b in range(0xC3, 0xE0)]
    assert leads[0xC2] and min(two_byte) > 0.4 * max(two_byte)
    # 0xEE leads only private-use characters (U+E000-U+EFFF), which no text holds.
    assert all(leads[b] for b in range(0xE0, 0xF0) if b != 0xEE) and not leads[0xEE] and leads[0xF0]


def test_character_drills_are_written_text_copied() -> None:
    import unicodedata

    rng = random.Random(3)
    for _ in range(500):
        sentence = character_drill_sentence(rng)
        assert all(unicodedata.category(c) not in {"Cn", "Co", "Cs", "Cc"} for c in sentence)
        assert not set(w.lower() for w in sentence.split(" ")) & forbidden_words()
    batch = generate_examples(64, seed=3, split="train")
    mixed = mix_in_character_drills(batch, random.Random(5), 0.0625)
    assert len(mixed) == 64 and mixed[:16] == batch[:16] and mixed[20:] == batch[20:]
    assert [e.category for e in mixed[16:20]] == [CHARACTER_CATEGORY] * 4
    assert all(e.source == e.target for e in mixed[16:20])
