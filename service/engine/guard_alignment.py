"""How the edit guard (service/engine/edit_guard.py) cuts a source and an output into tokens.

Pure Python (re, difflib): the guard's rules judge the spans; this module says what a token is, where the
differing middle of two texts lies, which tokens surround it, and how its differing spans pair up.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from service.engine.guard_links import may_hold_link_or_tag

# A word (\w+: letters, digits, underscore in any script), a whitespace run, or any other single character.
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)
# difflib's (tag, i1, i2, j1, j2) over a source's and an output's tokens.
Opcode = tuple[str, int, int, int, int]
# How many other pairings of its punctuation a refused region is tried with, and the most tokens (source and
# output) it may have to be tried at all: each pairing aligns the region's two sides again, which costs difflib
# the square of their length on repetitive text ("tres, tres, ..." -> "4, 4, ...": 60 of them took 2.4 s).
MAX_PAIRINGS = 16
MAX_REPAIRED_TOKENS = 64


def split_tokens(text: str) -> list[str]:
    """Split text into words, whitespace runs and single punctuation/symbol characters ("".join = text)."""
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class Alignment:
    """The differing middles of a source and an output, split into tokens, and each whole text's tokens with where
    its middle begins in them: a span's neighbours may lie in the common prefix or suffix that `apply` leaves out
    of the alignment."""

    source: list[str]
    output: list[str]
    source_context: list[str]
    source_offset: int
    output_context: list[str]
    output_offset: int
    # The source's tokens as the client wrote them, where the model read it case-folded (service/engine/
    # case_folding.py): the same tokens but for their capitals.
    cased_source_context: list[str]
    # Whether the source holds anything a link, an address, a path or a tag needs (guard_links): if not, rule (i)
    # has nothing to read.
    source_may_hold_links: bool = True

    @classmethod
    def of(cls, source: str, output: str, start: int, end: int, *, cased_source: str | None = None) -> Alignment:
        """The alignment of source[start:-end] with output[start:-end] (`end` may be 0); `cased_source`, the source
        with its capitals where `source` is it folded (as long, character for character)."""
        src, out = split_tokens(source[start : len(source) - end]), split_tokens(output[start : len(output) - end])
        source_before, output_before = split_tokens(source[:start]), split_tokens(output[:start])
        source_context = source_before + src + split_tokens(source[len(source) - end :])
        cased = split_tokens(cased_source) if cased_source is not None else source_context
        if [len(token) for token in cased] != [len(token) for token in source_context]:
            cased = source_context  # not the same text: its capitals are not read
        return cls(
            src,
            out,
            source_context=source_context,
            source_offset=len(source_before),
            output_context=output_before + out + split_tokens(output[len(output) - end :]),
            output_offset=len(output_before),
            cased_source_context=cased,
            source_may_hold_links=may_hold_link_or_tag(source),
        )


def hyphenated(tokens: list[str], at: int) -> list[str]:
    """The words of the hyphenated compound holding tokens[at] ("thirty-first" from "thirty" or "first")."""
    start, stop = at, at
    while start >= 2 and tokens[start - 1] == "-" and tokens[start - 2][0].isalnum():
        start -= 2
    while stop + 2 < len(tokens) and tokens[stop + 1] == "-" and tokens[stop + 2][0].isalnum():
        stop += 2
    return tokens[start : stop + 1 : 2]


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, backed off to a token boundary of both (never inside a word)."""
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    while n > 0 and (joins(a, n) or joins(b, n)):
        n -= 1
    return n


def common_suffix(a: str, b: str) -> int:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    while n > 0 and (joins(a, len(a) - n) or joins(b, len(b) - n)):
        n -= 1
    return n


def joins(text: str, i: int) -> bool:
    """True when position i is inside one token of `split_tokens` (between two word or two space characters)."""
    if i <= 0 or i >= len(text):
        return False
    left, right = text[i - 1], text[i]
    word = (left.isalnum() or left == "_") and (right.isalnum() or right == "_")
    return word or (left.isspace() and right.isspace())


def regions(
    source: list[str], output: list[str], consumable: Callable[[str], bool], *, anchor_on_copies: bool
) -> list[list[Opcode]]:
    """The aligner's opcodes grouped: an equal run alone, or differing spans with the equal runs of
    consumable tokens between them. `anchor_on_copies`: no equal run may start on a consumable token."""
    opcodes = difflib.SequenceMatcher(consumable if anchor_on_copies else None, source, output, autojunk=False)
    grouped: list[list[Opcode]] = []
    for op in opcodes.get_opcodes():
        if op[0] != "equal" and len(grouped) >= 2 and grouped[-2][0][0] != "equal":
            _, g1, g2, _, _ = grouped[-1][0]
            if all(consumable(t) for t in source[g1:g2]):
                gap = grouped.pop()
                grouped[-1].extend([*gap, op])
                continue
        grouped.append([op])
    return grouped


def repaired_at_marks(
    region: list[Opcode], source: list[str], output: list[str], consumable: Callable[[str], bool]
) -> Iterator[list[list[Opcode]]]:
    """The region's tokens aligned again, with one punctuation mark of its source paired with the same mark of
    its output and each side of the pair aligned alone (at most MAX_PAIRINGS ways, the first marks first; none for
    a region of over MAX_REPAIRED_TOKENS tokens), then with all its marks paired at once, as the two sequences of
    marks align ("1 de mayo de 2001, veinte, tres" -> "2001-05-01, 2, 3": three parts, of which only "veinte" -> "2"
    is refused; its parts are short, so any region is tried so)."""
    i1, i2, j1, j2 = region[0][1], region[-1][2], region[0][3], region[-1][4]
    source_marks = [p for p in range(i1, i2) if _is_mark(source[p])]
    output_marks = [q for q in range(j1, j2) if _is_mark(output[q])]
    if _short(region):
        pairs = [(p, q) for p in source_marks for q in output_marks if source[p] == output[q]]
        for pair in pairs[:MAX_PAIRINGS]:
            yield _paired_at(region, source, output, [pair], consumable)
    matcher = difflib.SequenceMatcher(
        None, [source[p] for p in source_marks], [output[q] for q in output_marks], autojunk=False
    )
    every = [
        (source_marks[a + k], output_marks[b + k]) for a, b, size in matcher.get_matching_blocks() for k in range(size)
    ]
    if len(every) > 1:
        yield _paired_at(region, source, output, every, consumable)


def _paired_at(
    region: list[Opcode],
    source: list[str],
    output: list[str],
    pairs: list[tuple[int, int]],
    consumable: Callable[[str], bool],
) -> list[list[Opcode]]:
    """The region aligned again with each (source, output) mark of `pairs`, in order, paired and the parts between
    aligned alone."""
    parts: list[list[Opcode]] = []
    start = (region[0][1], region[0][3])
    for p, q in pairs:
        parts += _regions_between(source, output, (start[0], p), (start[1], q), consumable)
        parts.append([("equal", p, p + 1, q, q + 1)])
        start = (p + 1, q + 1)
    return parts + _regions_between(source, output, (start[0], region[-1][2]), (start[1], region[-1][4]), consumable)


def with_unknown_words_apart(
    region: list[Opcode], source: list[str], output: list[str], consumable: Callable[[str], bool]
) -> Iterator[list[list[Opcode]]]:
    """The region with the words no edit may consume that open or close one of its differing spans taken apart, a
    deletion of their own, the span's whole output left to the words between: "Tiene dos" -> "2" as "Tiene " -> ""
    and "dos" -> "2" (the model dropped "Tiene": put back alone, the edit stays). One way per such span; none for
    a region of over MAX_REPAIRED_TOKENS tokens."""
    if not _short(region):
        return
    for at, (kind, a1, a2, b1, b2) in enumerate(region):
        words = [i for i in range(a1, a2) if not source[i].isspace()]
        consumed = [i for i in words if consumable(source[i])]
        if kind == "equal" or not consumed or len(consumed) == len(words):
            continue
        first, last = consumed[0], consumed[-1] + 1
        apart = [("delete", a1, first, b1, b1)] if first > a1 else []
        apart.append(("replace", first, last, b1, b2))
        apart += [("delete", last, a2, b2, b2)] if last < a2 else []
        if len(apart) > 1:
            yield [[*region[:at], *apart, *region[at + 1 :]]]


def _regions_between(
    source: list[str],
    output: list[str],
    source_span: tuple[int, int],
    output_span: tuple[int, int],
    consumable: Callable[[str], bool],
) -> list[list[Opcode]]:
    """`regions` of source[a1:a2] against output[b1:b2], with indices into source and output."""
    (a1, a2), (b1, b2) = source_span, output_span
    return [
        [(kind, a1 + s1, a1 + s2, b1 + o1, b1 + o2) for kind, s1, s2, o1, o2 in region]
        for region in regions(source[a1:a2], output[b1:b2], consumable, anchor_on_copies=False)
    ]


def _short(region: list[Opcode]) -> bool:
    """Whether the region holds at most MAX_REPAIRED_TOKENS tokens, source and output together."""
    return (region[-1][2] - region[0][1]) + (region[-1][4] - region[0][3]) <= MAX_REPAIRED_TOKENS


def _is_mark(token: str) -> bool:
    """A punctuation mark or symbol: a token of one character that is no word and no whitespace."""
    return len(token) == 1 and not (token.isalnum() or token == "_" or token.isspace())
