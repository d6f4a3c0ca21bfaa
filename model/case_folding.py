"""Case folding on the model's side (docs/model-directory.md, `case_folding`): what the bundled model declares,
and the text it trains on folded as the service folds what it reads (service/engine/case_folding.py is the
reference; model/ may not import service/, so the rule is restated here and a property test holds the two equal).

Imports only model.words (Babel's locales).
"""

from __future__ import annotations

import functools
import re

from model.words import BABEL_LOCALES, babel_locale


def case_folding_spec() -> dict[str, object]:
    """The case folding the bundled model declares in its manifest (docs/model-directory.md): the service
    lowers title-case words before the model reads them, except English month and weekday names and "I", and words
    in runs of capitals ("TREINTA AÑOS DE EXPERIENCIA"; a lone "ONCE" or "NASA" stays as written).

    The byte-level tokenizer splits a capitalized word into other, rarer pieces than its lower-case form
    ("Qu in ient as" / "qu in ient as", "Th ree" / "three"), and the model misread capitalized number words
    at the start of a sentence (README, issue 19). English dates are read by their capitals: lowering the
    month names too took the paragraphs from 98.2% to 73.1% (test split, seed 4242, 2026-12-05). English "I" is
    kept too: folded, "On May third, I left." came out "On 3, I left." (the model of 2026-12-06, tune31).
    """
    keep: set[str] = {"I"}
    for loc in BABEL_LOCALES:
        if not loc.startswith("en"):
            continue
        locale = babel_locale(loc)
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                keep.update(str(name).strip(".") for name in locale.months[context][width].values())
                keep.update(str(name).strip(".") for name in locale.days[context][width].values())
    return {"fold": "title_case", "keep_words": sorted(keep), "upper_case_runs": True}


_LETTERS = re.compile(r"[^\W\d_]+")


def fold_title_case(text: str) -> str:
    """`text` as the service reads it for a model that declares `case_folding_spec()`: title-case words with
    their first letter lowered, English month and weekday names and "I" kept, and words of two or more capitals
    in runs of them lowered, those names in title case (service/engine/case_folding.py, the reference;
    training needs the same text on the model's side of the repository)."""
    keep = _case_folding_keep_words()
    words = list(_LETTERS.finditer(text))
    in_runs = _words_in_upper_case_runs(text, words)

    def fold(index: int, word: str) -> str:
        if index in in_runs:
            lowered = word.lower()
            return word[0] + lowered[1:] if lowered in keep else lowered
        first, rest = word[0], word[1:]
        lowered = first.lower()
        one_to_one = first != lowered and len(lowered) == 1 and lowered.upper() == first
        return lowered + rest if one_to_one and rest == rest.lower() and word.lower() not in keep else word

    parts, at = [], 0
    for index, match in enumerate(words):
        parts += [text[at : match.start()], fold(index, match.group())]
        at = match.end()
    return "".join(parts) + text[at:]


def _words_in_upper_case_runs(text: str, words: list[re.Match[str]]) -> set[int]:
    """The words of two or more capitals, each lowered one letter to one and touching no digit or underscore,
    in runs of such words (no digit between) that hold two or more of them with a space between; single
    capitals join a run, words with no space between ("TWENTY-FIVE", "MS-DOS") count as one."""

    def upper(match: re.Match[str]) -> bool:
        one_to_one = all(c != c.lower() and len(c.lower()) == 1 and c.lower().upper() == c for c in match.group())
        touching = text[match.start() - 1 : match.start()] + text[match.end() : match.end() + 1]
        return one_to_one and not any(c.isdigit() or c == "_" for c in touching)

    runs: list[list[list[int]]] = []
    for index, match in enumerate(words):
        if not upper(match):
            continue
        gap = text[words[index - 1].end() : match.start()] if index else ""
        if not (runs and runs[-1][-1][-1] == index - 1 and not any(c.isdigit() for c in gap)):
            runs.append([[index]])
        elif any(c.isspace() for c in gap):
            runs[-1].append([index])
        else:
            runs[-1][-1].append(index)
    folded: set[int] = set()
    for run in runs:
        parts = [[index for index in part if len(words[index].group()) > 1] for part in run]
        if sum(1 for part in parts if part) >= 2:
            folded.update(index for part in parts for index in part)
    return folded


@functools.cache
def _case_folding_keep_words() -> frozenset[str]:
    words = case_folding_spec()["keep_words"]
    assert isinstance(words, list)
    return frozenset(str(word).lower() for word in words)
