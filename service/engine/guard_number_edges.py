"""The edit guard's rule (d) (docs/model-directory.md, `edit_guard`): an edit's digits at the edge of a number
that the output still writes partly in words converted part of it ("ciento 99", "3 mil", "1000 una noches").

Pure Python; imports only service.engine: errors, guard_alignment (tokens, alignment), guard_links (HTML tags).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.engine.errors import ModelLoadError
from service.engine.guard_alignment import Alignment, hyphenated
from service.engine.guard_links import HTML_TAG


def number_tails_from_manifest(
    entry: Mapping[str, Any], *, words: frozenset[str], where: str
) -> tuple[frozenset[str], frozenset[str]]:
    """The optional `number_tails` object: its `words` ("un", "una", "uno") and the words they end a number
    after (`after`: "ciento", "mil"), both from `consumable_words`; empty when absent.

    Raises:
        ModelLoadError: naming `edit_guard.number_tails` when it is not such an object.
    """
    tails = entry.get("number_tails", {"words": [], "after": []})
    if not (
        isinstance(tails, Mapping)
        and set(tails) == {"words", "after"}
        and all(isinstance(tails[key], list) and all(w in words for w in tails[key]) for key in tails)
    ):
        raise ModelLoadError(
            f"{where}: field 'edit_guard.number_tails' must be an object with lists 'words' and 'after' of words "
            "from consumable_words"
        )
    return frozenset(tails["words"]), frozenset(tails["after"])


def digits_beside_number_word(
    alignment: Alignment,
    j1: int,
    j2: int,
    *,
    number_words: frozenset[str],
    joining_words: frozenset[str],
    ordinal_words: frozenset[str],
) -> bool:
    """Whether output tokens j1:j2 begin or end with digits that the nearest token of the output on that side,
    past whitespace and at most one of `joining_words`, one of `number_words`, continues: "ciento" + "99", "3" +
    "mil", "Treinta y" + "2". A number word in a hyphenated ordinal is none: "December 29 thirty-first of June"
    keeps its "29"."""
    if not number_words:
        return False
    tokens, offset = alignment.output_context, alignment.output_offset
    written = "".join(alignment.output[j1:j2]).strip()
    sides = ((written[:1], offset + j1 - 1, -1), (written[-1:], offset + j2, 1))
    for edge, i, step in sides:
        i = _past_whitespace(tokens, i, step)
        if 0 <= i < len(tokens) and tokens[i].lower() in joining_words:
            i = _past_whitespace(tokens, i + step, step)
        if edge.isdigit() and 0 <= i < len(tokens) and tokens[i].lower() in number_words:
            compound = hyphenated(tokens, i)
            ordinal = any(word.lower() in ordinal_words for word in compound)
            if not ordinal and _stands_alone(tokens, i, "-".join(compound)):
                return True
    return False


def digits_before_number_tail(
    alignment: Alignment, i2: int, j2: int, *, tail_words: frozenset[str], tail_after: frozenset[str]
) -> bool:
    """Whether the output tokens up to j2 end with digits that the next output token past whitespace, one of
    `tail_words` with a word after it (whitespace between), ends as a number, the source up to i2 ending in one
    of `tail_after`: "mil" -> "1000" + "una noches". Before a comma ("ochocientos un, ...") or at the end the
    word may be a pronoun, and the edit stands."""
    src = alignment.source
    last_source = next((src[i] for i in range(i2 - 1, -1, -1) if not src[i].isspace()), "")
    if not (tail_words and last_source.lower() in tail_after):
        return False
    tokens, offset = alignment.output_context, alignment.output_offset
    out = alignment.output
    last_written = next((out[j].rstrip()[-1] for j in range(j2 - 1, -1, -1) if out[j].strip()), "")
    i = _past_whitespace(tokens, offset + j2, 1)
    # As written: a lone word in capitals ("trescientos UNA hablar") is read as written, no tail (case_folding.py).
    if not (last_written.isdigit() and i < len(tokens) and tokens[i] in tail_words):
        return False
    after = _past_whitespace(tokens, i + 1, 1)
    return i + 1 < len(tokens) and tokens[i + 1].isspace() and after < len(tokens) and tokens[after][0].isalpha()


def _past_whitespace(tokens: list[str], i: int, step: int) -> int:
    while 0 <= i < len(tokens) and tokens[i].isspace():
        i += step
    return i


def _stands_alone(tokens: list[str], at: int, compound: str) -> bool:
    """Whether the text between whitespace around tokens[at] is its hyphenated compound, punctuation around it
    and HTML tags aside ("(ciento", "mil.", "<td>dos"): a number word inside a link or a path ("x.es/tres-mil")
    continues no number."""
    start, stop = at, at + 1
    while start > 0 and not tokens[start - 1].isspace():
        start -= 1
    while stop < len(tokens) and not tokens[stop].isspace():
        stop += 1
    chunk = HTML_TAG.sub("", "".join(tokens[start:stop]))
    first = next(n for n, c in enumerate(chunk) if c.isalnum())
    last = max(n for n, c in enumerate(chunk) if c.isalnum())
    return chunk[first : last + 1] == compound
