"""A count before a unit: converted, the unit copied, the Spanish count agreeing with it; in the frequent-word
drills, passing the edit guard."""

from __future__ import annotations

import random
import re

from model.count_units import UNITS_EN, UNITS_ES, count_with_unit
from model.frequent_text import frequent_word_text
from model.words import edit_guard_spec
from service.engine.edit_guard import EditGuard


def test_the_count_converts_and_the_unit_is_copied() -> None:
    rng = random.Random(4)
    units = {"es": {unit for unit, _ in UNITS_ES}, "en": set(UNITS_EN)}
    seen_hundreds = seen_mil = 0
    for _ in range(2000):
        lang = rng.choice(("es", "en"))
        source, target = count_with_unit(rng, lang)
        count, unit = target.split(" ")
        assert unit in units[lang] and source.endswith(f" {unit}") and not re.search(r"\d", source)
        assert 2 <= int(count) <= 999
        seen_hundreds += int(count) >= 100
        seen_mil += unit.startswith("mil")
    assert seen_hundreds > 300 and seen_mil > 300


def test_spanish_counts_agree_with_their_unit() -> None:
    rng = random.Random(6)
    checked = set()
    for _ in range(6000):
        source, target = count_with_unit(rng, "es")
        if target.startswith(("200 ", "300 ", "500 ", "21 ")):
            feminine = source.split(" ")[-1] in {unit for unit, gender in UNITS_ES if gender == "f"}
            assert ("ientas" in source or "veintiuna" in source) == feminine, source
            checked.add(feminine)
    assert checked == {True, False}


def test_drills_hold_units_that_pass_the_guard() -> None:
    guard = EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")
    rng = random.Random(8)
    units = 0
    pattern = "|".join(unit for unit, _ in UNITS_ES) + "|" + "|".join(UNITS_EN)
    for _ in range(1500):
        source, target = frequent_word_text(rng, rng.choice(("es", "en")), unit_share=0.5)
        assert guard.apply(source, target).text == target, (source, target)
        units += bool(re.search(rf"\b\d+ ({pattern})\b", target))
    assert units > 300
