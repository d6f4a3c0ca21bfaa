"""Case folding (docs/model-directory.md, `case_folding`): a model directory may say that the model reads
title-case words in lower case ("Quinientas" as "quinientas"), and words in runs of capitals too ("TREINTA AÑOS"
as "treinta años"); the service then folds every input before tokenizing it and puts the capitals back on the
words of the output that copy a folded source word.

Folding changes letters one character to one, so a folded text is as long as the original and every
character offset into one is an offset into the other (token offsets, attention labels). Pure text work:
imports only service.engine.errors.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from service.engine.errors import ModelLoadError

# A word: a maximal run of letters (no digits, no underscore), in any script.
WORD = re.compile(r"[^\W\d_]+")
# What the output is matched to the source by: words and runs of digits.
TOKEN = re.compile(r"[^\W\d_]+|\d+")
# How many folded texts CaseFolding keeps (the requests in flight at once, a few times over), and the longest it
# keeps: a few MB at most, a long document's folding being a small part of its decoding.
_RECENT_TEXTS = 256
_RECENT_TEXT_CHARS = 4096


def _foldable_first(letter: str) -> str | None:
    """The lower case of a word's first letter when lowering and raising it round-trip one character to
    one ("Q" -> "q"); None for a letter that is not upper case or whose case maps are not one to one
    ("İ" lowers to two characters)."""
    lowered = letter.lower()
    if letter == lowered or len(lowered) != 1 or lowered.upper() != letter:
        return None
    return lowered


def _upper_case(word: str) -> bool:
    """Every letter of `word` upper case, and lowered one character to one ("TREINTA", "Y"; not "NaSA", "日本")."""
    return all(_foldable_first(letter) is not None for letter in word)


def _stands_clear(text: str, match: re.Match[str]) -> bool:
    """Whether no digit or underscore touches the word: "MAX_RETRIES" and "COVID19" are names, not words of a run."""
    before = text[match.start() - 1 : match.start()]
    after = text[match.end() : match.end() + 1]
    return not any(char.isdigit() or char == "_" for char in before + after)


def _joins_a_run(gap: str) -> bool:
    """Whether the text between two words in capitals keeps them in one run: anything but a digit ("DOS POR",
    "UNO, DOS", "TWENTY-FIVE"; not "TOP 10 LISTAS")."""
    return not any(char.isdigit() for char in gap)


@dataclass(frozen=True)
class CaseFolding:
    """Title-case words (an upper-case first letter, the rest lower case) are read in lower case, except
    `keep_words` (lower-cased; the bundled model reads English dates by their capitalized month names).

    With `upper_case_runs`, a word of two or more capitals is read in lower case too when it stands in a run of
    such words with a space between two of them ("OFERTA: DOS POR UNO", "TREINTA Y DOS", "YEAR TWENTY-FIVE";
    single capitals like "Y" join a run, a digit or an underscore breaks it), a keep word in title case ("MAY
    THIRD" as "May third"); a word in capitals alone ("la ONCE", "NASA", "MS-DOS", "MAX_RETRIES") is read as
    written, since an acronym is more often alone than a heading is."""

    keep_words: frozenset[str]
    upper_case_runs: bool = False
    # The latest texts folded and their folds: a request's text is folded by its tokenizing, its piece, its case
    # restorers and its guard, five times on the event loop for one short request (bench.profile_engine).
    _recent: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_manifest(cls, entry: Any, *, where: str) -> CaseFolding:
        """Build it from a manifest's `case_folding` object (`{"fold": "title_case", "keep_words": [...]}`).

        Raises:
            ModelLoadError: naming the field that is missing or wrong.
        """
        if not isinstance(entry, Mapping):
            raise ModelLoadError(f"{where}: field 'case_folding' must be an object")
        unknown = set(entry) - {"fold", "keep_words", "upper_case_runs"}
        if unknown:
            raise ModelLoadError(f"{where}: field 'case_folding' has unknown keys {sorted(unknown)}")
        if entry.get("fold") != "title_case":
            raise ModelLoadError(f"{where}: field 'case_folding.fold' must be 'title_case'")
        keep = entry.get("keep_words", [])
        if not isinstance(keep, list) or not all(isinstance(word, str) and WORD.fullmatch(word) for word in keep):
            raise ModelLoadError(f"{where}: field 'case_folding.keep_words' must be a list of words (letters only)")
        upper_case_runs = entry.get("upper_case_runs", False)
        if not isinstance(upper_case_runs, bool):
            raise ModelLoadError(f"{where}: field 'case_folding.upper_case_runs' must be true or false")
        return cls(keep_words=frozenset(word.lower() for word in keep), upper_case_runs=upper_case_runs)

    def fold_word(self, word: str) -> str:
        """`word` as the model reads it: title case lowered, anything else (ALLCAPS, camelCase) unchanged."""
        lowered = _foldable_first(word[0])
        rest = word[1:]
        if lowered is None or rest != rest.lower() or word.lower() in self.keep_words:
            return word
        return lowered + rest

    def fold_run_word(self, word: str) -> str:
        """A word of a run in capitals as the model reads it: lowered, a keep word in title case."""
        lowered = word.lower()
        return word[0] + lowered[1:] if lowered in self.keep_words else lowered

    def fold(self, text: str) -> str:
        """`text` as the model reads it; as long as `text`, character for character."""
        folded = self._recent.get(text)
        if folded is None:
            folded = self._fold(text)
            if len(text) <= _RECENT_TEXT_CHARS:
                if len(self._recent) >= _RECENT_TEXTS:
                    self._recent.clear()
                self._recent[text] = folded
        return folded

    def _fold(self, text: str) -> str:
        words = list(WORD.finditer(text))
        in_runs = self._in_upper_case_runs(text, words) if self.upper_case_runs else set()
        parts: list[str] = []
        at = 0
        for index, match in enumerate(words):
            word = match.group()
            parts += [text[at : match.start()], self.fold_run_word(word) if index in in_runs else self.fold_word(word)]
            at = match.end()
        parts.append(text[at:])
        return "".join(parts)

    @staticmethod
    def _in_upper_case_runs(text: str, words: list[re.Match[str]]) -> set[int]:
        """The indexes of the words of two letters or more in runs in capitals that hold at least two of them
        apart (words joined by no space, "MS-DOS", "TWENTY-FIVE", "AC/DC", count as one)."""
        runs: list[list[list[int]]] = []  # each run: its parts (words with no space between), each word's index
        for index, match in enumerate(words):
            if not (_upper_case(match.group()) and _stands_clear(text, match)):
                continue
            gap = text[words[index - 1].end() : match.start()] if index else ""
            if not (runs and runs[-1][-1][-1] == index - 1 and _joins_a_run(gap)):
                runs.append([[index]])
            elif any(char.isspace() for char in gap):
                runs[-1].append([index])
            else:
                runs[-1][-1].append(index)
        folded: set[int] = set()
        for run in runs:
            long_words = [[index for index in part if len(words[index].group()) > 1] for part in run]
            if sum(1 for part in long_words if part) >= 2:
                folded.update(index for part in long_words for index in part)
        return folded

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
        matches = list(TOKEN.finditer(source))
        folded_source = folding.fold(source)  # as long as the source: its tokens lie at the same offsets
        tokens = [match.group() for match in matches]
        self._original = tokens
        self._folded = [folded_source[match.start() : match.end()] for match in matches]
        # Where each folded word stands, in order: a word's candidates without a scan of the whole source.
        self._positions: dict[str, list[int]] = {}
        for index, folded in enumerate(self._folded):
            self._positions.setdefault(folded, []).append(index)
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
        positions = self._positions.get(word, [])
        candidates = positions[bisect.bisect_left(positions, self._next) :]
        if not candidates:
            return word
        going_on = (i for i in candidates if following is None or self._folded[i + 1 : i + 2] == [following])
        chosen = next(going_on, candidates[0])
        self._next = chosen + 1
        return self._original[chosen]
