"""Segmentation of long inputs (docs/model-directory.md, `segmentation`): split a text the model cannot
take at once into pieces within its source limit, at sentence boundaries and line breaks.

Pure splitting; the engine submits the pieces (service/engine/pieces.py). Imports sentencex and
service.engine.errors only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sentencex import segment  # type: ignore[import-untyped]  # sentencex ships no type information

from service.engine.errors import InputTooLong, ModelLoadError

SEGMENTERS = ("sentencex",)
# Positions just after a run of line breaks: where a line (with its line breaks) ends.
_AFTER_LINE_BREAKS = re.compile(r"(?<=[\r\n])(?=[^\r\n])")
_PREVIEW_CHARS = 60


@dataclass(frozen=True)
class SegmentationSpec:
    segmenter: str  # "sentencex"
    language: str  # the segmenter's language code ("es", "en", ...)
    # Inputs over this many tokens are split into pieces of at most this many, for a model that is more
    # accurate on short inputs than near its source limit; None = the source limit.
    piece_tokens: int | None = None
    # True: every line is a piece of its own and any input with a line break is split at them, for a
    # model trained on running text that does worse on many short lines packed into one call.
    split_lines: bool = False

    @classmethod
    def from_manifest(cls, entry: Any, *, where: str) -> SegmentationSpec:
        """Build the spec from a manifest's `segmentation` object.

        Raises:
            ModelLoadError: naming the field (`segmentation.segmenter`, ...) that is missing or wrong.
        """
        if not isinstance(entry, Mapping):
            raise ModelLoadError(f"{where}: field 'segmentation' must be an object")
        unknown = set(entry) - {"segmenter", "language", "piece_tokens", "split_lines"}
        if unknown:
            raise ModelLoadError(f"{where}: field 'segmentation' has unknown keys {sorted(unknown)}")
        segmenter = entry.get("segmenter")
        if segmenter not in SEGMENTERS:
            raise ModelLoadError(f"{where}: field 'segmentation.segmenter' must be one of {list(SEGMENTERS)}")
        language = entry.get("language")
        if not isinstance(language, str) or not re.fullmatch(r"[A-Za-z]{2,3}([-_][A-Za-z0-9]+)*", language):
            raise ModelLoadError(f"{where}: field 'segmentation.language' must be a language code such as 'es'")
        piece_tokens = entry.get("piece_tokens")
        if piece_tokens is not None and (type(piece_tokens) is not int or piece_tokens < 2):
            raise ModelLoadError(f"{where}: field 'segmentation.piece_tokens' must be an integer of at least 2")
        split_lines = entry.get("split_lines", False)
        if type(split_lines) is not bool:
            raise ModelLoadError(f"{where}: field 'segmentation.split_lines' must be true or false")
        return cls(segmenter=segmenter, language=language, piece_tokens=piece_tokens, split_lines=split_lines)


@dataclass(frozen=True)
class Piece:
    before: str  # the whitespace between the previous piece (or the start) and this one, kept outside the model
    text: str  # what the model gets: no leading or trailing whitespace


@dataclass(frozen=True)
class Segmented:
    pieces: tuple[Piece, ...]
    after: str  # the whitespace after the last piece

    def join(self, outputs: list[str]) -> str:
        """The pieces' outputs with the whitespace around them put back byte for byte."""
        return "".join(piece.before + out for piece, out in zip(self.pieces, outputs, strict=True)) + self.after


def units(text: str, spec: SegmentationSpec, *, fits: Callable[[str], bool]) -> list[str]:
    """Lines (each with its line breaks), and the sentences of a line that does not fit on its own;
    "".join(units) == text. Lines first: a piece then never cuts a line that would fit whole."""
    out: list[str] = []
    for line in _AFTER_LINE_BREAKS.split(text):
        if not line:
            continue
        if fits(line.strip()):
            out.append(line)
            continue
        sentences = [str(sentence) for sentence in segment(spec.language, line)]
        # The segmenter promises its sentences join back to the line; never lose a byte if it breaks that.
        out.extend(sentences if "".join(sentences) == line else [line])
    return out


def split_text(text: str, spec: SegmentationSpec, *, count_tokens: Callable[[str], int], limit: int) -> Segmented:
    """Pack consecutive lines (or, for a line over the piece size, its sentences) greedily into pieces of
    at most `spec.piece_tokens` tokens (the limit when unset); a sentence over the piece size but within
    the limit is a piece of its own.

    Args:
        text: the input, longer than the model takes at once (or than its piece size).
        spec: the model's segmentation entry.
        count_tokens: the model's token count of a text (EOS included).
        limit: the model's max_source_tokens.

    Returns:
        The pieces (stripped of surrounding whitespace) and the whitespace between them.

    Raises:
        InputTooLong: one sentence alone is over the limit; the message gives the limit in tokens and,
            estimated from this input's characters per token, in characters.
    """
    target = min(spec.piece_tokens or limit, limit)
    groups: list[str] = []
    current = ""
    for unit in units(text, spec, fits=lambda piece: count_tokens(piece) <= target):
        if spec.split_lines and current.strip() and current[-1] in "\r\n":
            groups.append(current)  # a line ends the piece
            current = ""
        candidate = current + unit
        if count_tokens(candidate.strip()) <= target:
            current = candidate
            continue
        if current.strip():
            groups.append(current)
            current = unit
        else:
            current = candidate
        if count_tokens(current.strip()) > limit:
            raise _too_long(current.strip(), text, count_tokens=count_tokens, limit=limit)
    groups.append(current)
    pieces: list[Piece] = []
    pending = ""  # whitespace not yet placed before a piece
    for group in groups:
        core = group.strip()
        if not core:
            pending += group
            continue
        start = len(group) - len(group.lstrip())
        pieces.append(Piece(before=pending + group[:start], text=core))
        pending = group[start + len(core) :]
    return Segmented(pieces=tuple(pieces), after=pending)


def _too_long(sentence: str, text: str, *, count_tokens: Callable[[str], int], limit: int) -> InputTooLong:
    tokens = count_tokens(text)
    per_token = len(text) / max(tokens, 1)
    preview = sentence if len(sentence) <= _PREVIEW_CHARS else sentence[:_PREVIEW_CHARS] + "..."
    return InputTooLong(
        f"the input has {tokens} tokens with EOS and is split at sentence boundaries and line breaks, but one "
        f"sentence alone has {count_tokens(sentence)} tokens ({len(sentence)} characters): the limit is "
        f"{limit} tokens, about {int(limit * per_token)} characters (estimated from this input's "
        f"{per_token:.1f} characters per token); sentence: {preview!r}"
    )
