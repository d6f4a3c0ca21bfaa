"""How the edit guard (service/engine/edit_guard.py) cuts a source and an output into tokens.

Pure Python (re): the guard's rules judge the spans; this module says what a token is, where the differing
middle of two texts lies and which tokens surround it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A word (\w+: letters, digits, underscore in any script), a whitespace run, or any other single character.
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)


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

    @classmethod
    def of(cls, source: str, output: str, start: int, end: int) -> Alignment:
        """The alignment of source[start:-end] with output[start:-end] (`end` may be 0)."""
        src, out = split_tokens(source[start : len(source) - end]), split_tokens(output[start : len(output) - end])
        source_before, output_before = split_tokens(source[:start]), split_tokens(output[:start])
        return cls(
            src,
            out,
            source_context=source_before + src + split_tokens(source[len(source) - end :]),
            source_offset=len(source_before),
            output_context=output_before + out + split_tokens(output[len(output) - end :]),
            output_offset=len(output_before),
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
