"""What one request asks of decoding beyond the model's defaults: its source and target language (for
models whose manifest lists language codes: NLLB, M2M100, mBART-50) and its own no-repeat n-gram size and
bad words. Resolved once at submit into the request's source ids and DecodingRules; the executor then
applies those rules instead of the model's. Pure Python; the tokenizer turns bad words into ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from service.engine.decoding_rules import DecodingRules
from service.engine.errors import InvalidInput, ModelLoadError
from service.engine.model_dir import MANIFEST, ModelFiles
from service.engine.tokenizer import ModelTokenizers, load_tokenizers
from service.engine.types import GenerationParams


@dataclass(frozen=True)
class ModelLanguages:
    """The manifest's `languages`: every code the model knows (code -> token id), the source code its source
    template carries (None: the source has no language token) and the target code it forces by default."""

    codes: Mapping[str, int]
    source: str | None
    target: str | None
    in_source: bool = False  # multilingual Marian: the target's code is written first in the source (">>fra<<")

    @classmethod
    def from_manifest(cls, value: Any, *, where: str) -> ModelLanguages | None:
        """Raises ModelLoadError when manifest["languages"] is malformed; None when the model has none."""
        if value is None:
            return None
        codes = value.get("codes") if isinstance(value, Mapping) else None
        if not isinstance(codes, Mapping) or not codes:
            raise ModelLoadError(f"{where}: languages.codes must be a non-empty object of code -> token id")
        if not all(isinstance(c, str) and isinstance(i, int) and not isinstance(i, bool) for c, i in codes.items()):
            raise ModelLoadError(f"{where}: languages.codes must map strings to token ids")
        source, target = value.get("source"), value.get("target")
        for name, code in (("source", source), ("target", target)):
            if code is not None and code not in codes:
                raise ModelLoadError(f"{where}: languages.{name} {code!r} is not among languages.codes")
        in_source = value.get("in_source", False)
        if not isinstance(in_source, bool):
            raise ModelLoadError(f"{where}: languages.in_source must be a boolean")
        return cls(codes=dict(codes), source=source, target=target, in_source=in_source)

    def code_id(self, code: str, *, field: str) -> int:
        """Raises InvalidInput naming the known codes when `code` is not one."""
        if code not in self.codes:
            raise InvalidInput(f"{field} {code!r} is not a language of this model; known: {', '.join(self.codes)}")
        return self.codes[code]


class Encoding(Protocol):
    prefix: list[int]
    suffix: list[int]

    def encode_plain(self, text: str) -> list[int]: ...


def with_languages(
    source_ids: Sequence[int], params: GenerationParams, *, languages: ModelLanguages | None, tokenizer: Encoding
) -> list[int]:
    """The source ids with the requested source language's code in place of the one the template carries
    and, for a model that reads its target code off the source (multilingual Marian), the target's code first.

    Raises:
        InvalidInput: the model has no languages, its source carries no language code, or the code is unknown.
    """
    if languages is not None and languages.in_source and params.target_language is not None:
        code = languages.code_id(params.target_language, field="target_language")
        source_ids = [*source_ids[: len(tokenizer.prefix)], code, *source_ids[len(tokenizer.prefix) :]]
    if params.source_language is None:
        return list(source_ids)
    if languages is None:
        raise InvalidInput("source_language: this model has no languages (its manifest lists none)")
    wanted = languages.code_id(params.source_language, field="source_language")
    if languages.source is None:
        raise InvalidInput("source_language: this model's source carries no language code (set target_language only)")
    saved = languages.codes[languages.source]
    ids = list(source_ids)
    around = [*range(len(tokenizer.prefix)), *range(len(ids) - len(tokenizer.suffix), len(ids))]
    for position in around:
        if ids[position] == saved:
            ids[position] = wanted
            return ids
    raise InvalidInput("source_language: this model's source template has no language code to replace")


def bad_word_ids(words: Sequence[str], tokenizer: Encoding) -> list[tuple[int, ...]]:
    """Each word's ids alone and after a space (as vLLM's bad_words): a byte-level BPE spells " word"
    differently, SentencePiece the same (deduplicated).

    Raises:
        InvalidInput: a word that encodes to no tokens.
    """
    out: list[tuple[int, ...]] = []
    for word in words:
        variants = [tuple(tokenizer.encode_plain(word)), tuple(tokenizer.encode_plain(" " + word))]
        if not variants[0]:
            raise InvalidInput(f"bad_words: {word!r} encodes to no tokens")
        out += [v for v in dict.fromkeys(variants) if v]
    return out


def request_rules(
    params: GenerationParams,
    model_rules: DecodingRules,
    *,
    languages: ModelLanguages | None,
    tokenizer: Encoding,
    vocab_size: int,
) -> DecodingRules | None:
    """The request's DecodingRules, or None when it asks for nothing beyond the model's.

    Bad words add to the model's own (generation_config's bad_words_ids, e.g. Marian's <pad>); the n-gram size
    replaces the model's (0 = off); target_language forces its code first, as forced_bos_token_id does.

    Raises:
        InvalidInput: a bad word id outside the vocabulary, or a target language the model does not have.
    """
    asked = (
        params.no_repeat_ngram_size is not None
        or params.bad_words
        or params.bad_words_ids
        or params.target_language is not None
    )
    if not asked:
        return None
    forced_bos = model_rules.forced_bos
    if params.target_language is not None:
        if languages is None:
            raise InvalidInput("target_language: this model has no languages (its manifest lists none)")
        if not languages.in_source:  # in_source: the code went into the source (with_languages)
            forced_bos = languages.code_id(params.target_language, field="target_language")
    for word in params.bad_words_ids:
        if any(not 0 <= token < vocab_size for token in word):
            raise InvalidInput(f"bad_words_ids: ids must be in [0, {vocab_size}), got {list(word)}")
    extra = [*params.bad_words_ids, *bad_word_ids(params.bad_words, tokenizer)]
    # transformers drops a bad word that is EOS alone (NoBadWordsLogitsProcessor), and so does from_manifest.
    bad_words = tuple(dict.fromkeys([*model_rules.bad_words, *(w for w in extra if w != (model_rules.eos,))]))
    ngram = model_rules.no_repeat_ngram_size if params.no_repeat_ngram_size is None else params.no_repeat_ngram_size
    return replace(model_rules, bad_words=bad_words, no_repeat_ngram_size=ngram, forced_bos=forced_bos)


def model_tokenizers(model: ModelFiles) -> tuple[ModelLanguages | None, ModelTokenizers]:
    """The model directory's languages (manifest["languages"]) and its tokenizers, sources led by a language
    code where the languages say so."""
    languages = ModelLanguages.from_manifest(model.manifest.get("languages"), where=str(model.directory / MANIFEST))
    tokenizers = load_tokenizers(
        model, leading_codes=languages.codes if languages is not None and languages.in_source else None
    )
    return languages, tokenizers
