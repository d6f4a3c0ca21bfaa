"""Two counts as a range or a choice: both converted, never one number read as two, the smaller first where the
words say so; in the frequent-word drills, passing the edit guard."""

from __future__ import annotations

import random
import re

from model.count_ranges import RANGE_LINKS, count_range, reads_as_one_number
from model.frequent_text import frequent_word_text
from model.words import edit_guard_spec
from service.engine.edit_guard import EditGuard


def test_both_counts_convert_and_the_rest_is_copied() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        lang = rng.choice(("es", "en"))
        source, target = count_range(rng, lang, "casas")
        lead, link, ascending = next(
            (lead, link, up)
            for lead, link, up in RANGE_LINKS[lang]
            if re.fullmatch(rf"{lead}\d+{link}\d+ casas", target)
        )
        first, second = (int(n) for n in re.findall(r"\d+", target))
        assert first >= 2 and second >= 2 and first != second
        assert not ascending or first < second
        assert not reads_as_one_number(first, link)
        assert source.startswith(lead) and source.endswith(" casas") and link in source
        assert not re.search(r"\d", source)


def test_no_range_reads_as_one_number() -> None:
    # "treinta y dos" is 32 and "two hundred and five" is 205; "quince y treinta" and "twenty and ninety" are two.
    assert reads_as_one_number(30, " y ") and reads_as_one_number(200, " and ") and reads_as_one_number(150, " and ")
    assert not reads_as_one_number(15, " y ") and not reads_as_one_number(20, " and ")
    assert not reads_as_one_number(30, " a ") and not reads_as_one_number(300, " to ")


def test_drills_hold_ranges_that_pass_the_guard() -> None:
    guard = EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")
    rng = random.Random(8)
    ranges = 0
    for _ in range(1500):
        source, target = frequent_word_text(rng, rng.choice(("es", "en")), range_share=0.5)
        assert guard.apply(source, target).text == target, (source, target)
        ranges += bool(re.search(r"\b\d+ (to|and|or|out of|in|a|y|o|hasta|de cada) \d+\b", target))
    assert ranges > 300
