"""Case folding (docs/model-directory.md, `case_folding`): a model directory may say that the model reads
title-case words in lower case ("Quinientas" as "quinientas"); the service then folds every input before
tokenizing it and puts the capitals back on the words of the output that copy a folded source word.

Folding changes only the first letter of a word, to one character, so a folded text is as long as the
original and every character offset into one is an offset into the other (token offsets, attention
labels). Pure text work: imports only service.engine.errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.engine.errors import ModelLoadError

# A word: a maximal run of letters (no digits, no underscore), in any script.
WORD = re.compile(r"[^\W\d_]+")
# What the output is matched to the source by: words and runs of digits.
TOKEN = re.compile(r"[^\W\d_]+|\d+")


def _foldable_first(letter: str) -> str | None:
    """The lower case of a word's first letter when lowering and raising it round-trip one character to
    one ("Q" -> "q"); None for a letter that is not upper case or whose case maps are not one to one
    ("İ" lowers to two characters)."""
    lowered = letter.lower()
    if letter == lowered or len(lowered) != 1 or lowered.upper() != letter:
        return None
    return lowered


@dataclass(frozen=True)
class CaseFolding:
    """Title-case words (an upper-case first letter, the rest lower case) are read in lower case, except
    `keep_words` (lower-cased; the bundled model reads English dates by their capitalized month names)."""

    keep_words: frozenset[str]

    @classmethod
    def from_manifest(cls, entry: Any, *, where: str) -> CaseFolding:
        """Build it from a manifest's `case_folding` object (`{"fold": "title_case", "keep_words": [...]}`).

        Raises:
            ModelLoadError: naming the field that is missing or wrong.
        """
        if not isinstance(entry, Mapping):
            raise ModelLoadError(f"{where}: field 'case_folding' must be an object")
        unknown = set(entry) - {"fold", "keep_words"}
        if unknown:
            raise ModelLoadError(f"{where}: field 'case_folding' has unknown keys {sorted(unknown)}")
        if entry.get("fold") != "title_case":
            raise ModelLoadError(f"{where}: field 'case_folding.fold' must be 'title_case'")
        keep = entry.get("keep_words", [])
        if not isinstance(keep, list) or not all(isinstance(word, str) and WORD.fullmatch(word) for word in keep):
            raise ModelLoadError(f"{where}: field 'case_folding.keep_words' must be a list of words (letters only)")
        return cls(keep_words=frozenset(word.lower() for word in keep))

    def fold_word(self, word: str) -> str:
        """`word` as the model reads it: title case lowered, anything else (ALLCAPS, camelCase) unchanged."""
        lowered = _foldable_first(word[0])
        rest = word[1:]
        if lowered is None or rest != rest.lower() or word.lower() in self.keep_words:
            return word
        return lowered + rest

    def fold(self, text: str) -> str:
        """`text` as the model reads it; as long as `text`, character for character."""
        return WORD.sub(lambda match: self.fold_word(match.group()), text)

    def restorer(self, source: str) -> CaseRestorer:
        return CaseRestorer(self, source)

    def restore(self, source: str, output: str) -> str:
        """`output` (generated from `fold(source)`) with the capitals of the source words it copies."""
        restorer = self.restorer(source)
        return restorer.push(output) + restorer.finish()


class CaseRestorer:
    """Puts the source's capitals back on an output that arrives in parts (a stream of tokens).

    The output's words and digit runs (tokens) are matched to the source's in order. An output word copies
    a source word at or after the last match that folds to it: the first one whose next token is the
    output's next token (the copy goes on), else the first one. A word no source word folds to is left as
    generated. The look at the next token keeps a word that a conversion consumed from taking a later
    copy: "the thirtieth of September, two thousand eighty-two The band" -> "2082-09-30 The band", not "the
    band". A token is decided once the one after it is complete; text that no decision can change (a word no
    folded source word begins with, digits, spaces) is handed back at once, so a stream waits only on the
    words that may take a capital. `push` returns a prefix of what it was given and `finish` the rest; the
    lengths always add up to the output's.
    """

    def __init__(self, folding: CaseFolding, source: str) -> None:
        tokens = [match.group() for match in TOKEN.finditer(source)]
        self._original = tokens
        self._folded = [folding.fold_word(token) for token in tokens]
        # The words folding changed (index, folded form): the only output words restoring can change.
        self._changed = [(i, f) for i, (f, o) in enumerate(zip(self._folded, tokens, strict=True)) if f != o]
        self._next = 0  # the first source word a later output word may copy
        self._pending = ""  # output not yet decided: from the last complete word on
        self._sent_ahead = 0  # characters of _pending already handed back, unchanged (no decision can change them)

    def push(self, text: str) -> str:
        """Add output text; return the output decided so far, restored."""
        pending = self._pending + text
        words = list(TOKEN.finditer(pending))
        complete = [word for word in words if word.end() < len(pending)]  # a letter after could not go on with it
        if complete:
            cut = complete[-1].start()  # the last complete word waits for the one after it
        elif words:
            cut = words[-1].start()  # a word that may go on
        else:
            cut = len(pending)
        restored = self._restore(pending, words, cut)
        # The end of the text no later decision can change: up to the first undecided word that may take a capital.
        undecided = (word.start() for word in words if word.start() >= cut and self._may_capitalize(word.group()))
        settled = next(undecided, len(pending))
        decided = restored + pending[cut:settled]
        sent, self._sent_ahead = self._sent_ahead, max(0, settled - cut)
        self._pending = pending[cut:]
        return decided[sent:]

    def finish(self) -> str:
        """The output left undecided, restored: call it once the output is complete."""
        pending, self._pending = self._pending, ""
        sent, self._sent_ahead = self._sent_ahead, 0
        return self._restore(pending, list(TOKEN.finditer(pending)), len(pending))[sent:]

    def _may_capitalize(self, word: str) -> bool:
        """Whether `word`, or a word it is the start of, may still copy a word folding changed: one at or after
        the next source word a copy may take (a later decision only moves that on)."""
        if not WORD.fullmatch(word):
            return False
        return any(index >= self._next and folded.startswith(word) for index, folded in self._changed)

    def _restore(self, text: str, words: list[re.Match[str]], cut: int) -> str:
        """`text[:cut]` with its words restored; `words` are text's tokens, each but the last followed by the next."""
        parts: list[str] = []
        at = 0
        for index, word in enumerate(words):
            if word.start() >= cut:
                break
            following = words[index + 1].group() if index + 1 < len(words) else None
            restored = self._restore_word(word.group(), following) if WORD.fullmatch(word.group()) else word.group()
            parts += [text[at : word.start()], restored]
            at = word.end()
        parts.append(text[at:cut])
        return "".join(parts)

    def _restore_word(self, word: str, following: str | None) -> str:
        candidates = [index for index in range(self._next, len(self._folded)) if self._folded[index] == word]
        if not candidates:
            return word
        going_on = (i for i in candidates if following is None or self._folded[i + 1 : i + 2] == [following])
        chosen = next(going_on, candidates[0])
        self._next = chosen + 1
        return self._original[chosen]
