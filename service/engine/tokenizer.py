"""The service's tokenizers: `tokenizers` loaded from the model directory's tokenizer.json (sources, and outputs
unless the directory has a target_tokenizer.json for a decoder with a vocabulary of its own).

Encodes with character offsets (EOS appended) and detokenizes incrementally for streaming.
Imports only `tokenizers`; never model/.
"""

from __future__ import annotations

import codecs
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import tokenizers

from service.engine.errors import ModelLoadError
from service.engine.model_dir import MANIFEST, ModelFiles


@dataclass(frozen=True)
class UnknownIds:
    vocab_size: int  # the model's: a tokenizer id at or above it becomes unk_id
    unk_id: int


class Tokenizer:
    """Literal special-token text in the input ("<s>") is encoded as ordinary text, as in training; an
    imported model's manifest may say to read it as the token instead, as transformers' tokenizers do
    (`match_special_tokens`: NLLB's "eng_Latn" typed in an input is that language's token).

    A source is `prefix + ids + suffix`: by default no prefix and EOS after; an imported model's manifest
    may say otherwise (`source_template`: BART's <s> first, mBART-50's and NLLB's language code first).

    `fold`: how the model reads a text (service/engine/case_folding.py), applied to every text encoded; it
    keeps a text's length, so the offsets are the original text's.
    """

    def __init__(
        self,
        tok: tokenizers.Tokenizer,
        *,
        eos_id: int,
        prefix: Sequence[int] = (),
        suffix: Sequence[int] | None = None,
        unknown: UnknownIds | None = None,
        leading_codes: Mapping[str, int] | None = None,
        match_special_tokens: bool = False,
        fold: Callable[[str], str] | None = None,
    ) -> None:
        self._tok = tok
        self._fold = fold
        self._tok.encode_special_tokens = not match_special_tokens
        self.eos_id = eos_id
        self.prefix = list(prefix)
        self.suffix = [eos_id] if suffix is None else list(suffix)
        self.unknown = unknown
        # Multilingual Marian: a source may start with its target code (">>fra<<"), read off as MarianTokenizer does.
        self.leading_codes = leading_codes

    @classmethod
    def from_file(
        cls,
        path: Path,
        *,
        eos_id: int,
        prefix: Sequence[int] = (),
        suffix: Sequence[int] | None = None,
        unknown: UnknownIds | None = None,
        leading_codes: Mapping[str, int] | None = None,
        match_special_tokens: bool = False,
        fold: Callable[[str], str] | None = None,
    ) -> Tokenizer:
        try:
            tok = tokenizers.Tokenizer.from_file(str(path))
        except Exception as error:  # tokenizers raises a bare Exception for malformed files
            raise ModelLoadError(f"{path} is not a valid tokenizer: {error}") from error
        return cls(
            tok,
            eos_id=eos_id,
            prefix=prefix,
            suffix=suffix,
            unknown=unknown,
            leading_codes=leading_codes,
            match_special_tokens=match_special_tokens,
            fold=fold,
        )

    @property
    def vocab_size(self) -> int:
        return int(self._tok.get_vocab_size(with_added_tokens=True))

    def encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids with the prefix and suffix (EOS), and per id its (start, end) character offsets (prefix:
        (0, 0), suffix: (len, len))."""
        if self._fold is not None:
            text = self._fold(text)
        code_ids, start = self._leading_code(text)
        enc = self._tok.encode(text[start:], add_special_tokens=False)
        offsets = [(0, start)] * len(code_ids) + [(int(s) + start, int(e) + start) for s, e in enc.offsets]
        end = (len(text), len(text))
        return (
            [*self.prefix, *code_ids, *self._known(enc.ids), *self.suffix],
            [*[(0, 0)] * len(self.prefix), *offsets, *[end] * len(self.suffix)],
        )

    def _leading_code(self, text: str) -> tuple[list[int], int]:
        """MarianTokenizer.remove_language_code: ">>...<<" at the very start is one token (<unk> if unknown)."""
        if self.leading_codes is None or not text.startswith(">>") or (end := text.find("<<")) == -1:
            return [], 0
        code = text[: end + 2]
        token = self.leading_codes.get(code, None if self.unknown is None else self.unknown.unk_id)
        return ([], 0) if token is None else ([token], end + 2)

    def _known(self, ids: list[int]) -> list[int]:
        """Ids at or above the model's vocabulary are pieces it has no embedding for: <unk>, as transformers
        maps a SentencePiece piece missing from vocab.json (export/hf/tokenizer.py's M2M100 conversion)."""
        if self.unknown is None or not ids or max(ids) < self.unknown.vocab_size:
            return ids
        limit, unk = self.unknown.vocab_size, self.unknown.unk_id
        return [unk if token >= limit else token for token in ids]

    @property
    def longest_token_chars(self) -> int:
        """An upper bound on the characters one id stands for: the longest vocabulary entry (a byte-level
        entry spells each byte as one character, so it is never shorter than the text it decodes to)."""
        return max((len(token) for token in self._tok.get_vocab(with_added_tokens=True)), default=1)

    def encode_plain(self, text: str) -> list[int]:
        """Ids without prefix or suffix (a forced target, a bad word), a leading code read as encode reads it."""
        if self._fold is not None:
            text = self._fold(text)
        code_ids, start = self._leading_code(text)
        return [*code_ids, *self._known(list(self._tok.encode(text[start:], add_special_tokens=False).ids))]

    def token_text(self, token_id: int) -> str | None:
        """The vocabulary entry of `token_id` ("</s>", "eng_Latn"), None for an id the tokenizer lacks."""
        token = self._tok.id_to_token(token_id)
        return None if token is None else str(token)

    def decode(self, ids: Sequence[int]) -> str:
        return str(self._tok.decode(list(ids), skip_special_tokens=True))

    def detokenizer(self) -> Detokenizer:
        """Per-token text for streaming: from a table of each id's bytes where the tokenizer is byte-level
        (the same text as decoding, a fraction of its cost), else by decoding a window of recent ids."""
        table = self._byte_table
        return IncrementalDetokenizer(self) if table is None else ByteLevelDetokenizer(table)

    @functools.cached_property
    def _byte_table(self) -> tuple[bytes, ...] | None:
        return byte_level_table(self._tok)


@dataclass(frozen=True)
class ModelTokenizers:
    """A model directory's two sides: `source` encodes inputs; `output` decodes generated ids (texts, streamed
    pieces, stop sequences, token labels) and encodes what stands for output ids (forced targets, bad words).
    They are one object unless the directory has a target_tokenizer (docs/model-directory.md)."""

    source: Tokenizer
    output: Tokenizer

    @property
    def separate(self) -> bool:
        return self.output is not self.source


def load_tokenizers(model: ModelFiles, *, leading_codes: Mapping[str, int] | None = None) -> ModelTokenizers:
    """Both sides' tokenizers as the manifest describes them (source_template, special_tokens, target_tokenizer,
    source_vocabulary).

    Args:
        model: the verified model directory.
        leading_codes: target codes a source may start with (multilingual Marian's languages.in_source).

    Raises:
        ModelLoadError: a tokenizer file is invalid, or source_template.match_special_tokens or leading_code is not
            a boolean.
    """
    template = model.manifest.get("source_template") or {}  # imported models: docs/model-directory.md
    match_special_tokens = template.get("match_special_tokens", False)
    if not isinstance(match_special_tokens, bool):
        raise ModelLoadError(f"{model.directory / MANIFEST}: source_template.match_special_tokens must be a boolean")
    # Marian: MarianTokenizer reads ">>...<<" at the very start of any text, source or target, as one token (a
    # language code's id, else <unk>), multilingual or not.
    leading_code = template.get("leading_code", False)
    if not isinstance(leading_code, bool):
        raise ModelLoadError(f"{model.directory / MANIFEST}: source_template.leading_code must be a boolean")
    if leading_codes is None and leading_code:
        leading_codes = {}
    unk = model.special_tokens.get("unk")
    # special_tokens and config's vocab_size are the decoder's; the encoder's differ only with a target tokenizer.
    output_unknown = None if unk is None else UnknownIds(vocab_size=model.vocab_size, unk_id=int(unk))
    vocabulary = model.source_vocabulary
    fold = None if model.case_folding is None else model.case_folding.fold
    source = Tokenizer.from_file(
        model.tokenizer,
        eos_id=model.special_tokens["eos"],
        prefix=template.get("prefix", ()),
        suffix=template.get("suffix"),
        unknown=output_unknown if vocabulary is None else UnknownIds(vocab_size=vocabulary.size, unk_id=vocabulary.unk),
        leading_codes=leading_codes,
        match_special_tokens=match_special_tokens,
        fold=fold,
    )
    if model.target_tokenizer is None:
        return ModelTokenizers(source=source, output=source)
    output = Tokenizer.from_file(
        model.target_tokenizer,
        eos_id=model.special_tokens["eos"],
        unknown=output_unknown,
        # The source vocabulary's language codes are no target ids: a leading code in a target is <unk>.
        leading_codes={} if leading_code else None,
        match_special_tokens=match_special_tokens,  # special-token text in a forced target, as in a source
        fold=fold,
    )
    return ModelTokenizers(source=source, output=output)


def special_labels(tokenizer: Tokenizer, ids: Iterable[int], *, codes: Mapping[str, int]) -> dict[int, str]:
    """What to show for special ids that have no text in an input or output (the source template's EOS and
    language code, a forced target code): their vocabulary entries, and the language codes by their names
    (a converted tokenizer may store a code under another spelling, export/hf/tokenizer.py)."""
    labels = {token_id: text for token_id in ids if (text := tokenizer.token_text(token_id)) is not None}
    labels.update({token_id: code for code, token_id in codes.items()})
    return labels


class Decoding(Protocol):
    def decode(self, ids: Sequence[int]) -> str: ...


class Detokenizer(Protocol):
    def push(self, token_id: int, *, final: bool = False) -> str: ...

    def flush(self) -> str: ...


def new_detokenizer(tokenizer: Decoding) -> Detokenizer:
    """The service's tokenizer's own detokenizer (byte-level where it can); any other Decoding, by windows."""
    return tokenizer.detokenizer() if isinstance(tokenizer, Tokenizer) else IncrementalDetokenizer(tokenizer)


def _bytes_of_characters() -> dict[str, int]:
    """GPT-2's byte-level alphabet: each byte as one printable character (the ByteLevel pre-tokenizer's)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    characters = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in characters:
            characters[byte] = chr(256 + extra)
            extra += 1
    return {character: byte for byte, character in characters.items()}


def byte_level_table(tok: tokenizers.Tokenizer) -> tuple[bytes, ...] | None:
    """Each id's bytes when `tok` decodes with the ByteLevel decoder alone (special tokens: none, as
    decode(skip_special_tokens=True) drops them); None otherwise, or if any id's table entry does not decode
    to what `tok` decodes it to (then the windowed detokenizer is used)."""
    if not isinstance(tok.decoder, tokenizers.decoders.ByteLevel):
        return None
    alphabet = _bytes_of_characters()
    specials = {token.content for token in tok.get_added_tokens_decoder().values() if token.special}
    # Ids may have gaps (an added token past the trained vocabulary): the table runs to the highest one.
    size = max(tok.get_vocab(with_added_tokens=True).values(), default=-1) + 1
    table: list[bytes] = []
    for token_id in range(size):
        token = tok.id_to_token(token_id)
        if token is None or token in specials:
            table.append(b"")
        elif all(character in alphabet for character in token):
            table.append(bytes(alphabet[character] for character in token))
        else:  # as the ByteLevel decoder: a token outside the alphabet is its own UTF-8
            table.append(token.encode())
        if table[-1].decode(errors="replace") != tok.decode([token_id], skip_special_tokens=True):
            return None
    return tuple(table)


class ByteLevelDetokenizer:
    """Each token's text from its bytes: a UTF-8 decoder that holds a character's first bytes until its
    last arrives, so the pieces concatenate to decode(ids) (bytes that are no UTF-8 become U+FFFD there too)."""

    def __init__(self, table: tuple[bytes, ...]) -> None:
        self._table = table
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, token_id: int, *, final: bool = False) -> str:
        # An id the tokenizer lacks (a model whose embeddings were padded past it) has no text, as in decode.
        piece = self._table[token_id] if 0 <= token_id < len(self._table) else b""
        return self._utf8.decode(piece, final=final)

    def flush(self) -> str:
        return self._utf8.decode(b"", final=True)


class IncrementalDetokenizer:
    """Each token's text = decode(window) - decode(window before it), as TGI's `decode_token`.

    The window is a few recent ids (prefix_offset on), so a token costs O(1) whatever the length; the
    ids before the new ones give the decoder its context (leading spaces, merges). A byte-level token
    can end inside a multi-byte character; its text is held back (decodes to U+FFFD) until the
    character completes, so the streamed pieces always concatenate to the final text.
    """

    _WINDOW = 8  # ids decoded per token at most (plus held-back ones) before the window slides
    _CONTEXT = 4  # ids kept as context when it slides

    def __init__(self, tokenizer: Decoding) -> None:
        self._tokenizer = tokenizer
        self.ids: list[int] = []
        self._prefix_offset = 0  # the window starts here
        self._read_offset = 0  # ids before this are emitted
        self._prefix_text = ""  # decode(ids[prefix_offset:read_offset])

    def push(self, token_id: int, *, final: bool = False) -> str:
        self.ids.append(token_id)
        return self._advance(final=final)

    def flush(self) -> str:
        return self._advance(final=True)

    def _advance(self, *, final: bool) -> str:
        window = self._tokenizer.decode(self.ids[self._prefix_offset :])
        if not final and window.endswith("\ufffd"):
            return ""
        # A decoder cleanup that rewrote the context emits nothing rather than a wrong piece.
        piece = window[len(self._prefix_text) :] if window.startswith(self._prefix_text) else ""
        self._read_offset = len(self.ids)
        if self._read_offset - self._prefix_offset > self._WINDOW:
            self._prefix_offset = self._read_offset - self._CONTEXT
            self._prefix_text = self._tokenizer.decode(self.ids[self._prefix_offset : self._read_offset])
        else:
            self._prefix_text = window
        return piece
