"""The edit guard (docs/model-directory.md, `edit_guard`): every span of a model's output that differs
from its input must be an edit the model directory allows; a span that is not is put back as the source.

Pure Python (re, difflib); imports only service.engine: guard_manifest (its fields read from the manifest),
guard_alignment (tokens, alignment), guard_values (what numbers an edit's source says), guard_number_edges (digits
at the edge of a number left partly in words), guard_links (links, addresses, paths and HTML tags), guard_names
(names that open with a number word) and guard_language (which language a sentence reads as).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from service.engine.guard_alignment import (
    Alignment,
    Opcode,
    common_prefix,
    common_suffix,
    regions,
    repaired_at_marks,
    with_unknown_words_apart,
)
from service.engine.guard_language import LanguageRule
from service.engine.guard_links import inside_link_or_tag
from service.engine.guard_manifest import guard_fields_from_manifest
from service.engine.guard_names import names_a_thing
from service.engine.guard_number_edges import digits_before_number_tail, digits_beside_number_word
from service.engine.guard_values import NumberValues, writes_wrong_date


@dataclass(frozen=True)
class RevertedEdit:
    """One span the guard put back: the source text it kept, and the output the model had written."""

    source: str
    output: str
    source_start: int = 0  # where `source` begins in the guarded source text, in characters


@dataclass(frozen=True)
class GuardedText:
    text: str  # the output with every disallowed span replaced by its source text
    reverted: tuple[RevertedEdit, ...]


@dataclass(frozen=True)
class EditGuard:
    """What an edit may consume (words, case-insensitive; characters) and produce (characters).

    A span of the alignment that differs is allowed when (a) its source side is non-empty, holds only
    consumable words, tokens made of consumable characters (digit runs included) and whitespace, and
    at least one consumable word that is neither a digit run nor a connector (so "3,50" -> "250" and
    "un" -> "1" are reverted); and (b) its output side is non-empty and holds only tokens made of producible
    characters, whitespace, and tokens of its source side (same case), each at most as often as it appears there;
    (c) it writes no ISO date the calendar lacks ("2001-02-29"), nor a real one of `date_years` in parts ("29 de
    febrero de 2020"); (d) it writes no digits right beside (whitespace between, or one of the `joining_words`) one
    of the optional `number_words` left in the output:
    "ciento noventa y nueve" -> "ciento 99", "tres mil" -> "3 mil" or "treinta y dos" -> "treinta y 2" converted
    part of a number and left the rest in words, nor digits of a number ending in one of the optional
    `number_tails`' `after` words right before one of their `words` left in the output: "mil una noches" -> "1000
    una noches"; (e) when its
    source side holds one of the optional `ordinal_words`, a month name (`name_words`) is in it or the nearest
    word beside it, past connectors: an ordinal is an expression only in a date, so "the first of September" ->
    "the 1 of September" passes and "Our first child" -> "Our 1 child" is reverted; (f) its source side does not
    end with one of the optional `joining_words` ("y", "of") that its output drops: no expression ends with one,
    so "dos mil veintidós y ya" -> "2022-06-12 ya" is reverted; (g) with the optional `number_values` (and
    `month_numbers`), the numbers it writes are, in order, the ones its source says (guard_values.py): "ciento"
    -> "10" and "mil novecientos ochenta" -> "980" are reverted; (h) with the optional `everyday_words` and
    `language_words`, it consumes no everyday word of its text's language (guard_language.py): "Once you" -> "11 you";
    (i) it consumes no word inside a link, an e-mail address, a path or an HTML tag (guard_links.py):
    "x.es/twenty-five-ways" -> "x.es/twenty-5-ways" and '<td colspan="dos">' -> '<td colspan="2">' are reverted;
    (j) inside a sentence, it does not end with a title-case `number_words` word before another capitalized word
    (a name, guard_names.py): "en Dos Hermanas" -> "en 2 Hermanas" is reverted, "Room Twelve" -> "Room 12" passes.
    Differing spans separated only by consumable tokens ("tres" -> "3", " y ", "cuatro" -> "4") are
    judged as one span, so an edit the aligner cut in pieces ("12 de abril de 1950" -> "1950-04-12",
    where "12" or "1950" aligns on its own) is judged whole. Anything else is reverted, pure
    insertions and deletions included.
    """

    consumable_words: frozenset[str]
    consumable_characters: frozenset[str]
    producible_characters: frozenset[str]
    # Consumable words that join an expression but are none alone ("de", "y", "the", "un"): a span must
    # consume another consumable word too, so "un" -> "10" or "es de 3,50" -> "es 2" is reverted.
    connector_words: frozenset[str] = frozenset()
    # Consumable words that name something ("octubre", "May") and are an expression only with a number:
    # a span whose substantive words are all names must consume a digit run too ("12 de abril de 1950" ->
    # "1950-04-12"), so "October" -> "5" is reverted.
    name_words: frozenset[str] = frozenset()
    # Consumable words of cardinals ("ciento", "mil", "tres", "hundred"): an edit's digits next to one that the
    # output still writes in words took part of a number ("ciento 99"), and are reverted.
    number_words: frozenset[str] = frozenset()
    # Connectors that end a number after a round one ("mil un", "ciento una": 1001, 101) but stand alone too ("una
    # noche"), and the words they end a number after: digits converted from "mil" right before "una" left in words
    # took part of a number ("1000 una noches"); after "seis" or a date's year, "un" is an article ("1925 un grupo").
    number_tail_words: frozenset[str] = frozenset()
    number_tail_after: frozenset[str] = frozenset()
    # Consumable words of ordinals ("first", "twenty-third"'s "third", "primero"): consumed only in a date.
    ordinal_words: frozenset[str] = frozenset()
    # Connectors that join an expression's words and never end one ("y", "and", "de", "of").
    joining_words: frozenset[str] = frozenset()
    # What the number words and month names are worth, to check the digits an edit writes; None: not checked.
    values: NumberValues | None = None
    languages: LanguageRule | None = None  # "once", "ten": a number in one language, a word in the other

    @classmethod
    def from_manifest(cls, entry: Any, *, where: str) -> EditGuard:
        """Build the guard from a manifest's `edit_guard` object.

        Raises:
            ModelLoadError: naming the field (`edit_guard.consumable_words`, ...) that is missing or wrong.
        """
        return cls(**guard_fields_from_manifest(entry, where=where))

    def _consumable(self, token: str) -> bool:
        return token.isspace() or token.lower() in self.consumable_words or set(token) <= self.consumable_characters

    def _substantive(self, token: str) -> bool:
        """A consumable word with a letter that is not a connector: what an edit must consume at least one
        of. Digits alone do not count, so "3,50" -> "250" (digits rewritten into other digits) is reverted."""
        word = token.lower()
        return word in self.consumable_words and word not in self.connector_words and not token.isdigit()

    def allows(
        self,
        source: Sequence[str],
        output: Sequence[str],
        *,
        copied: Sequence[str] = (),
        beside_substantive: bool = False,
        beside_name: bool = False,
    ) -> bool:
        """Whether replacing the `source` tokens by the `output` tokens is an allowed edit.

        `copied` are output tokens the aligner matched inside the span (equal runs the span was merged
        across): they need not be producible, and they do not make a deletion an edit: "27 de septiembre
        de 2022" -> "27" keeps a token of its source and writes nothing, so it is reverted. `beside_substantive`: the
        nearest word before or after the span, past connectors, is a substantive consumable word, so a
        span of connectors alone is part of an expression ("el uno de septiembre" -> "el 1 de septiembre").
        `beside_name`: that nearest word on either side is a month name (`name_words`), as an ordinal needs.
        """
        if not source or all(t.isspace() for t in output):
            return False  # every conversion writes something of its own: digits, a date's "-"
        if not all(self._consumable(t) for t in source):
            return False
        written = "".join([*output, *copied])
        if any("".join(source).count(mark) != written.count(mark) for mark in "\n\r"):
            return False  # an edit never adds, drops or moves a line break
        substantive = [t for t in source if self._substantive(t)]
        if not substantive and not (beside_substantive and any(t.lower() in self.connector_words for t in source)):
            return False
        names_only = substantive and all(t.lower() in self.name_words for t in substantive)
        if names_only and not any(t.isdigit() for t in source):
            return False  # a month name alone is no expression: "October" -> "5"
        ordinal = any(t.lower() in self.ordinal_words for t in substantive)
        if ordinal and not beside_name and not any(t.lower() in self.name_words for t in substantive):
            return False  # an ordinal outside a date stays a word: "Our first child" -> "Our 1 child"
        words = [t for t in source if not t.isspace()]
        written_words = [t for t in [*output, *copied] if not t.isspace()]
        if words and words[-1].lower() in self.joining_words and (not written_words or written_words[-1] != words[-1]):
            return False  # no expression ends with "y": the sentence's word was taken with it
        # Beside what it produces, an edit may keep tokens of its own source side, each at most as often as
        # it is there: "de noviembre de" or a sentence's "." that the aligner put inside a merged span.
        kept = Counter(source)
        for token in output:
            if token.isspace() or set(token) <= self.producible_characters:
                continue
            if kept[token] == 0:
                return False
            kept[token] -= 1
        return True

    def apply(self, source: str, output: str, *, cased_source: str | None = None) -> GuardedText:
        """Return `output` with every disallowed differing span replaced by its source text; `cased_source`: the
        source as the client wrote it, where the model read `source` case-folded (rule (j) reads its capitals)."""
        if source == output:
            return GuardedText(output, ())
        # Only the middle differs: align the tokens of that part (cheap on long, mostly copied text).
        start = common_prefix(source, output)
        end = common_suffix(source[start:], output[start:])
        alignment = Alignment.of(source, output, start, end, cased_source=cased_source)
        guarded = self._guard(alignment, output, start, end, anchor_on_copies=False)
        if not guarded.reverted:
            return guarded
        # The aligner's longest common run may pair text of one expression's source with another's output: the
        # " de junio de " of two dates, the first converted, the second not. Aligned again on the tokens an
        # edit cannot consume (copied text), the same rules may allow more; either result is the source with
        # allowed edits only, so the one that puts back less is kept.
        realigned = self._guard(alignment, output, start, end, anchor_on_copies=True)
        return realigned if _reverted_length(realigned) < _reverted_length(guarded) else guarded

    def _guard(self, alignment: Alignment, output: str, start: int, end: int, *, anchor_on_copies: bool) -> GuardedText:
        src, out = alignment.source, alignment.output
        pieces: list[str] = [output[:start]]
        reverted: list[RevertedEdit] = []
        for region in regions(src, out, self._consumable, anchor_on_copies=anchor_on_copies):
            if region[0][0] == "equal":
                pieces.append("".join(out[region[0][3] : region[0][4]]))
                continue
            settled = self._judged_in_parts([region], alignment)
            # Where it puts anything back, a region may pair its punctuation wrongly: in "August fifteenth, two
            # thousand eleven, once" -> "2011-08-15, 11" the aligner matches the date's comma with the first, so that
            # neither part is an allowed edit. Paired again at its marks, the way that puts back least is kept (a
            # pairing that only copies its mark, and reverts the rest, gains nothing: hence the 2). So are the words
            # no edit consumes that open or close one of its spans, set apart (a dropped "Tiene" put back).
            if settled.reverted:
                bar = _reverted_length(settled) - 2
                for pairing in itertools.chain(
                    repaired_at_marks(region, src, out, self._consumable),
                    with_unknown_words_apart(region, src, out, self._consumable),
                ):
                    candidate = self._judged_in_parts(pairing, alignment)
                    if _reverted_length(candidate) < bar:
                        settled, bar = candidate, _reverted_length(candidate)
            pieces.append(settled.text)
            reverted.extend(settled.reverted)
        pieces.append(output[len(output) - end :])
        return GuardedText("".join(pieces), tuple(reverted))

    def _judged_in_parts(self, regions: list[list[Opcode]], alignment: Alignment) -> GuardedText:
        """The regions' text, each allowed whole or else judged in parts: a region may hold a span that cannot
        belong to any expression (a source word the guard does not know) beside a good edit; in "tengo veinticinco"
        -> "10go 25" only "tengo" -> "10go" breaks the rule. Such spans are judged alone and the rest together, so
        "25" stays, while "doscientas mil" -> "2cientas 1000" (number words only) is still reverted whole."""
        pieces: list[str] = []
        reverted: list[RevertedEdit] = []
        for region in regions:
            if not self._judge(region, alignment, pieces, reverted):
                for part in self._split_at_unknown_words(region, alignment):
                    self._judge(part, alignment, pieces, reverted, final=True)
        return GuardedText("".join(pieces), tuple(reverted))

    def _judge(
        self,
        region: list[Opcode],
        alignment: Alignment,
        pieces: list[str],
        reverted: list[RevertedEdit],
        *,
        final: bool = False,
    ) -> bool:
        """Append the region's output when it is an allowed edit and return True; otherwise, when `final`,
        append its source text instead (recording the reverted edit), else append nothing and return False."""
        src, out = alignment.source, alignment.output
        i1, i2, j1, j2 = region[0][1], region[-1][2], region[0][3], region[-1][4]
        written = "".join(out[j1:j2])
        if all(kind == "equal" for kind, *_ in region):
            pieces.append(written)
            return True
        edited = [t for kind, _, _, b1, b2 in region if kind != "equal" for t in out[b1:b2]]
        copied = [t for kind, _, _, b1, b2 in region if kind == "equal" for t in out[b1:b2]]
        offset = alignment.source_offset
        context, start, stop = alignment.source_context, offset + i1, offset + i2
        allowed = self.allows(
            src[i1:i2],
            edited,
            copied=copied,
            beside_substantive=self._beside(context, start, stop, self._substantive),
            beside_name=self._beside(context, start, stop, lambda word: word.lower() in self.name_words),
        )
        source_copied = _copied_source(region)
        if (
            allowed
            and not writes_wrong_date(alignment.output_context, alignment.output_offset, j1, j2, self.values)
            and not digits_beside_number_word(
                alignment,
                j1,
                j2,
                number_words=self.number_words,
                joining_words=self.joining_words,
                ordinal_words=self.ordinal_words,
            )
            and not digits_before_number_tail(
                alignment, i2, j2, tail_words=self.number_tail_words, tail_after=self.number_tail_after
            )
            and (self.values is None or self.values.agree(src[i1:i2], out[j1:j2], source_copied))
            and (self.languages is None or self.languages.allows(context, start, stop, copied=source_copied))
            and not (alignment.source_may_hold_links and inside_link_or_tag(context, start, stop))
            and not self._names_a_thing(alignment, start, stop)
        ):
            pieces.append(written)
            return True
        if final:
            kept = "".join(src[i1:i2])
            pieces.append(kept)
            kept_start = sum(len(token) for token in context[:start])
            reverted.append(RevertedEdit(source=kept, output=written, source_start=kept_start))
        return False

    def _split_at_unknown_words(self, region: list[Opcode], alignment: Alignment) -> list[list[Opcode]]:
        """The region's opcodes in runs: a differing span with an unknown or everyday word, a word inside a link or a
        tag, or a name's number word, alone; the rest together."""
        src, context, offset = alignment.source, alignment.source_context, alignment.source_offset
        parts: list[list[Opcode]] = [[]]
        for op in region:
            kind, a1, a2, _, _ = op
            if kind != "equal" and (
                not all(self._consumable(t) for t in src[a1:a2])
                or (self.languages is not None and not self.languages.allows(context, offset + a1, offset + a2))
                or (alignment.source_may_hold_links and inside_link_or_tag(context, offset + a1, offset + a2))
                or self._names_a_thing(alignment, offset + a1, offset + a2)
            ):
                parts += [[op], []]
            else:
                parts[-1].append(op)
        return [part for part in parts if part]

    def _names_a_thing(self, alignment: Alignment, start: int, stop: int) -> bool:
        return names_a_thing(
            alignment.cased_source_context,
            start,
            stop,
            number_words=self.number_words,
            consumable_words=self.consumable_words,
            number_values={} if self.values is None else self.values.words,
        )

    def _beside(self, tokens: list[str], start: int, stop: int, test: Callable[[str], bool]) -> bool:
        """Whether the nearest word before tokens[start:stop] or after it, past whitespace, punctuation and
        connectors, passes `test`."""
        return self._neighbour(tokens, start, -1, test) or self._neighbour(tokens, stop - 1, 1, test)

    def _neighbour(self, tokens: list[str], at: int, step: int, test: Callable[[str], bool]) -> bool:
        """Whether the first word from tokens[at + step] on (in `step`'s direction), past whitespace,
        punctuation and connectors, passes `test`."""
        i = at + step
        while 0 <= i < len(tokens):
            token = tokens[i]
            if token[0].isalnum() and token.lower() not in self.connector_words:
                return test(token)
            i += step
        return False


def _reverted_length(guarded: GuardedText) -> int:
    return sum(len(edit.source) + len(edit.output) for edit in guarded.reverted)


def _copied_source(region: list[Opcode]) -> list[bool]:
    """For each source token of the region, whether the aligner matched it to an output token."""
    return [kind == "equal" for kind, a1, a2, _, _ in region for _ in range(a1, a2)]
