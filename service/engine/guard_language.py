"""The edit guard's language rule: a word that is a number in one language only and an everyday word in the other
("once": Spanish eleven, English "at once"; "ten": English ten, Spanish "ten cuidado") may become digits only in
text that does not read as that other language.

Both bundled fine-tunes of 2026-12-05 wrote "Once you finish, close the door." as "11 you finish, ..." and "Ten
cuidado con el perro." as "10 cuidado ...": the other rules allow a number word to become its digits whatever the
language around it. The language of a sentence is the one more of its lowercase words belong to, among each
language's frequent words that are not the other's (`language_words` in the manifest); a sentence with as many of
either, or none, is read as neither, and the edit is judged by the other rules alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.engine.errors import ModelLoadError

LANGUAGE_FIELDS = ("everyday_words", "language_words")  # of the manifest's edit_guard
SENTENCE_END_MARKS = frozenset({".", "!", "?", "…", ";", "。", "！", "？"})


@dataclass(frozen=True)
class LanguageRule:
    # The word (lowercase) -> the language it is an everyday word of: {"once": "en", "ten": "es"}.
    everyday_words: Mapping[str, str]
    # Language -> frequent words of it that are not the other's, lowercase: what a text is read by.
    language_words: Mapping[str, frozenset[str]]

    def language_of(self, tokens: Iterable[str]) -> str | None:
        """The language most of the tokens' lowercase words belong to; None when no single one does. Capitalized
        words are not read: names ("James" is an English word) and sentence openings say little."""
        counts = dict.fromkeys(self.language_words, 0)
        for token in tokens:
            for language, words in self.language_words.items():
                if token in words:
                    counts[language] += 1
        best = max(counts.values(), default=0)
        leaders = [language for language, count in counts.items() if count == best]
        return leaders[0] if best > 0 and len(leaders) == 1 else None

    def allows(self, tokens: Sequence[str], start: int, stop: int, *, copied: Sequence[bool] = ()) -> bool:
        """False when tokens[start:stop] hold an everyday word of the language their sentence reads as, one the edit
        consumes: `copied[i]`, tokens[start + i] is copied (an English "ago" kept between two converted numbers). The
        sentence is read only for a span that consumes such a word, rarely: the guard asks of every span it judges."""
        consumed = [t for i, t in enumerate(tokens[start:stop]) if not (i < len(copied) and copied[i])]
        languages = {self.everyday_words[t.lower()] for t in consumed if t.lower() in self.everyday_words}
        return not languages or self.language_of(_sentence_around(tokens, start, stop)) not in languages


def _sentence_around(tokens: Sequence[str], start: int, stop: int) -> Sequence[str]:
    """tokens[start:stop] with the rest of their sentence (up to a line break or a sentence's end mark): the
    sentences of a text, and the lines of a document, may be of either language ("Once you finish, close the
    door. Tengo once años.")."""
    while start > 0 and not _ends_a_sentence(tokens[start - 1]):
        start -= 1
    while stop < len(tokens) and not _ends_a_sentence(tokens[stop]):
        stop += 1
    return tokens[start:stop]


def _ends_a_sentence(token: str) -> bool:
    return "\n" in token or token in SENTENCE_END_MARKS


def language_rule_from_manifest(entry: Mapping[str, Any], *, words: frozenset[str], where: str) -> LanguageRule | None:
    """The rule the manifest's `edit_guard.everyday_words` and `edit_guard.language_words` declare (both or neither).

    Raises:
        ModelLoadError: naming the field that is wrong.
    """
    everyday, languages = entry.get("everyday_words"), entry.get("language_words")
    if everyday is None and languages is None:
        return None
    if (
        not isinstance(languages, Mapping)
        or len(languages) < 2
        or not all(
            isinstance(name, str)
            and isinstance(listed, list)
            and all(isinstance(w, str) and w == w.lower() for w in listed)
            for name, listed in languages.items()
        )
    ):
        raise ModelLoadError(
            f"{where}: field 'edit_guard.language_words' must map two or more languages to lists of lowercase words"
        )
    if not isinstance(everyday, Mapping) or not all(
        isinstance(word, str) and word in words and language in languages for word, language in everyday.items()
    ):
        raise ModelLoadError(
            f"{where}: field 'edit_guard.everyday_words' must map words from consumable_words to a language of "
            "language_words"
        )
    return LanguageRule(
        everyday_words=dict(everyday),
        language_words={name: frozenset(listed) for name, listed in languages.items()},
    )
