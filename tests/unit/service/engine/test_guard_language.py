"""The edit guard's language rule: "once" is English for a word and Spanish for eleven, "ten" English for ten and
Spanish for "have!"; each becomes digits only in a sentence that does not read as the language it is a word of."""

from __future__ import annotations

from typing import Any

import pytest

from model.words import edit_guard_spec
from service.engine.edit_guard import EditGuard
from service.engine.errors import ModelLoadError
from service.engine.guard_alignment import split_tokens
from service.engine.guard_language import LanguageRule


@pytest.fixture(scope="module")
def guard() -> EditGuard:
    return EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")


@pytest.mark.parametrize(
    ("source", "output", "guarded"),
    [
        # What the fine-tunes of 2026-12-05 wrote: reverted, the rest of the edit kept.
        ("I've only been there once, years ago.", "I've only been there 11, years ago.", None),
        ("Once you finish, close the door.", "11 you finish, close the door.", None),
        ("Please reply at once.", "Please reply at 11.", None),
        (
            "It happened only once in ten years.",
            "It happened only 11 in 10 years.",
            "It happened only once in 10 years.",
        ),
        ("I went there once, two years ago.", "I went there 11, 2 years ago.", "I went there once, 2 years ago."),
        ("Ten cuidado con el perro.", "10 cuidado con el perro.", None),
        # Written in one aligned span with a date, whose comma the aligner pairs with the wrong one: the word
        # alone is put back, the date kept (it went back with it before 2026-12-05's re-pairing at marks).
        (
            "We met on August fifteenth, two thousand eleven, once again.",
            "We met on 2011-08-15, 11 again.",
            "We met on 2011-08-15, once again.",
        ),
        # Where the word is a number: kept.
        ("Tengo once años.", "Tengo 11 años.", "Tengo 11 años."),
        (
            "Llegaron once personas a la reunión.",
            "Llegaron 11 personas a la reunión.",
            "Llegaron 11 personas a la reunión.",
        ),
        ("We waited for ten minutes.", "We waited for 10 minutes.", "We waited for 10 minutes."),
        # An everyday word the edit copies between two converted numbers is not consumed: the span is judged on the
        # words it converts (a frequent-word drill's pair, 2026-12-06; "ago" is also Spanish August's abbreviation).
        ("Way on May thirty-first ago four my real:", "Way on May 31 ago 4 my real:", "Way on May 31 ago 4 my real:"),
        (
            "They left three days ago, four of them.",
            "They left 3 days 8, 4 of them.",
            "They left 3 days ago, 4 of them.",
        ),
        # A line without words of either language tells nothing: the other rules decide.
        ("Once", "11", "11"),
        # Each sentence and each line is read by itself.
        (
            "Once you finish, close the door. Tengo once años.",
            "11 you finish, close the door. Tengo 11 años.",
            "Once you finish, close the door. Tengo 11 años.",
        ),
        (
            "Hola, tengo once años.\nI went there once.",
            "Hola, tengo 11 años.\nI went there 11.",
            "Hola, tengo 11 años.\nI went there once.",
        ),
    ],
)
def test_an_everyday_word_of_the_sentences_language_is_no_number(
    guard: EditGuard, source: str, output: str, guarded: str | None
) -> None:
    assert guard.apply(source, output).text == (source if guarded is None else guarded)


def test_the_spec_reads_each_language_by_words_the_other_does_not_share() -> None:
    spec = edit_guard_spec()
    english, spanish = (set(spec["language_words"][lang]) for lang in ("en", "es"))  # type: ignore[index]
    assert not english & spanish
    assert {"you", "is", "to", "in", "at"} <= english and {"la", "el", "que", "los", "con", "por"} <= spanish
    assert not {"no", "me", "once", "ten", "dos", "one"} & (english | spanish)
    assert spec["everyday_words"] == {"once": "en", "ago": "en", "ten": "es"}


def test_a_tie_or_no_evidence_reads_as_neither() -> None:
    rule = LanguageRule(
        everyday_words={"once": "en"}, language_words={"en": frozenset({"you"}), "es": frozenset({"la"})}
    )
    assert rule.language_of(split_tokens("you la")) is None
    assert rule.language_of(split_tokens("Once")) is None
    tokens = split_tokens("you once")
    assert not rule.allows(tokens, 2, 3) and rule.allows(split_tokens("la once"), 2, 3)


BASE = {
    "consumable_words": ["once", "tres"],
    "consumable_characters": "0123456789",
    "producible_characters": "0123456789",
}


@pytest.mark.parametrize(
    "extra",
    [
        {"everyday_words": {"once": "en"}},  # without the words that tell the languages apart
        {"language_words": {"en": ["you"], "es": ["la"]}},  # without the words it is about
        {"everyday_words": {"twice": "en"}, "language_words": {"en": ["you"], "es": ["la"]}},  # not consumable
        {"everyday_words": {"once": "fr"}, "language_words": {"en": ["you"], "es": ["la"]}},  # no such language
        {"everyday_words": {"once": "en"}, "language_words": {"en": ["You"], "es": ["la"]}},  # not lowercase
        {"everyday_words": {"once": "en"}, "language_words": {"en": ["you"]}},  # one language
    ],
)
def test_a_bad_language_rule_names_its_field(extra: dict[str, Any]) -> None:
    with pytest.raises(ModelLoadError, match=r"edit_guard\.(everyday|language)_words"):
        EditGuard.from_manifest({**BASE, **extra}, where="manifest.json")


def test_a_manifest_without_the_rule_converts_once_anywhere() -> None:
    guard = EditGuard.from_manifest(BASE, where="manifest.json")
    assert guard.languages is None
    assert guard.apply("You were there once", "You were there 11").text == "You were there 11"
