"""The edit guard's rule (j) (docs/model-directory.md, `edit_guard`): a number word in title case right before
another capitalized word is part of a name, copied: "Dos Hermanas", "Tres Cantos", "Ocho Ríos", "The Three
Musketeers".

The bundled model of 2026-12-06 read them as counts ("Vivo en 2 Hermanas, Sevilla.", "3 Cantos es un municipio",
"The 3 Musketeers"): it reads title-case words folded (service/engine/case_folding.py) and cannot see the capital
that makes the name. A count before a noun writes the noun in lower case ("Tres casas"); where the noun is
capitalized too, as in a headline ("Two Americans Arrested"), copying it leaves a number in words, which the
contract allows far sooner than a place name rewritten. Two number words in title case joined by a hyphen
that make no compound number are a name too, wherever they stand ("Seven-Eleven" -> "7-11"; "Twenty-One" -> "21"
converts). A number after a word in title case ("Room Twelve",
"Chapter Seven"), a date ("Cinco de Mayo", "de" between) and a number opening a sentence or a line ("Tres Cantos
es ..." is converted) are no name by this rule.

Pure Python; the guard gives it the source's tokens as the client wrote them (guard_alignment.Alignment).
"""

from __future__ import annotations

from collections.abc import Mapping


def names_a_thing(
    cased_tokens: list[str],
    start: int,
    stop: int,
    *,
    number_words: frozenset[str],
    consumable_words: frozenset[str],
    number_values: Mapping[str, int],
) -> bool:
    """Whether the last word of cased_tokens[start:stop] is one of `number_words` in title case followed, past one
    space, by a capitalized word that no edit consumes ("Tres" + " " + "Cantos"), inside a sentence: its first
    word follows another word, past one space ("en Dos Hermanas"). At a sentence's or a line's start the capital
    says nothing, and the training contract converts a count there before any word ("Veinte. Tenemos ..."). Or
    whether a word of the span is such a number word joined by a hyphen to another that makes no compound number
    with it by `number_values` ("Seven-Eleven", "Fifty-Fifty"; not "Twenty-One")."""
    words = [at for at in range(start, stop) if cased_tokens[at][0].isalnum()]
    if not words:
        return False
    first, last = words[0], words[-1]

    def title_number(at: int) -> bool:
        return (
            0 <= at < len(cased_tokens) and _title_case(cased_tokens[at]) and cased_tokens[at].lower() in number_words
        )

    # Two number words in title case joined by a hyphen, no compound number ("Seven-Eleven", not "Twenty-One").
    def hyphen_name(left: int, right: int) -> bool:
        if not (title_number(left) and title_number(right) and cased_tokens[left + 1] == "-"):
            return False
        return not _compound(*(number_values.get(cased_tokens[at].lower()) for at in (left, right)))

    if any(hyphen_name(at - 2, at) or hyphen_name(at, at + 2) for at in words):
        return True
    if not title_number(last):
        return False
    if first < 2 or cased_tokens[first - 1] != " " or not cased_tokens[first - 2][0].isalnum():
        return False
    if last + 2 >= len(cased_tokens) or cased_tokens[last + 1] != " ":
        return False
    following = cased_tokens[last + 2]
    return _title_case(following) and following.lower() not in consumable_words


def _compound(tens: int | None, unit: int | None) -> bool:
    """Whether "tens-unit" is one number (twenty-one); unknown values count as one (the rule then stands aside)."""
    return tens is None or unit is None or (tens in range(20, 100, 10) and unit in range(1, 10))


def _title_case(word: str) -> bool:
    return len(word) > 1 and word[0].isupper() and word[1:].islower()
