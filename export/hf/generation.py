"""The manifest's `special_tokens` and `generation` for an imported model, from generation_config.json
(or config.json when a directory has none, as transformers does).
"""

from __future__ import annotations

import re
from typing import Any

from export.hf.checkpoint import HfCheckpointError

# generation_config.json keys the service honours, with transformers' defaults.
DEFAULTS: dict[str, Any] = {
    "num_beams": 1,
    "length_penalty": 1.0,
    "early_stopping": False,
    "max_length": 20,
    "min_length": 0,
    "no_repeat_ngram_size": 0,
    "bad_words_ids": None,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
}


def _setting(name: str, generation: dict[str, Any], config: dict[str, Any]) -> Any:
    """generation_config.json's value when the directory has one (transformers then ignores config.json's
    generation fields), else config.json's; transformers' default when neither says."""
    source = generation if generation else config
    return source.get(name, DEFAULTS.get(name))


def _token_id(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, list):  # transformers allows a list of EOS ids; atento decodes with one
        if len(value) != 1:
            raise HfCheckpointError(f"{name} {value}: only one id is supported")
        value = value[0]
    if not isinstance(value, int) or isinstance(value, bool):
        raise HfCheckpointError(f"{name} must be a token id, not {value!r}")
    return value


def special_tokens(generation: dict[str, Any], config: dict[str, Any], *, unk: int | None) -> dict[str, int]:
    """pad, bos (= the decoder's start token, which is what atento's decoders start from), eos, unk.

    Raises:
        HfCheckpointError: a required id is missing.
    """
    ids = {
        "pad": _token_id(generation.get("pad_token_id", config.get("pad_token_id")), "pad_token_id"),
        "bos": _token_id(
            generation.get("decoder_start_token_id", config.get("decoder_start_token_id")), "decoder_start_token_id"
        ),
        "eos": _token_id(generation.get("eos_token_id", config.get("eos_token_id")), "eos_token_id"),
    }
    missing = [name for name, value in ids.items() if value is None]
    if missing:
        raise HfCheckpointError(f"config.json / generation_config.json lack {', '.join(missing)} token ids")
    out = {name: int(value) for name, value in ids.items() if value is not None}
    if unk is not None:
        out["unk"] = unk
    return out


def generation_fields(generation: dict[str, Any], config: dict[str, Any], *, vocab_size: int) -> dict[str, Any]:
    """The manifest's `generation`: the defaults and the rules every decoding strategy applies.

    Raises:
        HfCheckpointError: a setting is malformed (bad words that are not lists of ids in the vocabulary).
    """
    bad_words = _setting("bad_words_ids", generation, config) or []
    if not isinstance(bad_words, list) or not all(
        isinstance(word, list) and word and all(isinstance(t, int) and 0 <= t < vocab_size for t in word)
        for word in bad_words
    ):
        raise HfCheckpointError(f"bad_words_ids must be lists of token ids below {vocab_size}: {bad_words!r}")
    early = _setting("early_stopping", generation, config)
    if early not in (True, False, "never"):
        raise HfCheckpointError(f'early_stopping must be true, false or "never", not {early!r}')
    return {
        "beam_search": "transformers",  # transformers' beam search rules (docs/model-directory.md)
        "num_beams": int(_setting("num_beams", generation, config)),
        "length_penalty": float(_setting("length_penalty", generation, config)),
        "early_stopping": early,
        "max_length": int(_setting("max_length", generation, config)),
        "min_length": int(_setting("min_length", generation, config) or 0),
        "no_repeat_ngram_size": int(_setting("no_repeat_ngram_size", generation, config) or 0),
        "bad_words_ids": bad_words,
        "forced_bos_token_id": _token_id(_setting("forced_bos_token_id", generation, config), "forced_bos_token_id"),
        "forced_eos_token_id": _token_id(_setting("forced_eos_token_id", generation, config), "forced_eos_token_id"),
    }


# Language codes as multilingual tokenizers spell them: mBART-50's "es_XX", NLLB's "spa_Latn", M2M100's "__es__".
LANGUAGE_CODE = re.compile(r"^(?:[a-z]{2,3}_[A-Z][A-Za-z]{1,3}|__[a-z]{2,3}__)$")


def language_fields(
    vocab: dict[str, int], *, special: set[str], template: dict[str, list[int]], forced_bos: int | None
) -> dict[str, Any] | None:
    """The manifest's `languages`: the language codes among the tokenizer's special tokens and the ones the
    checkpoint was saved with (the source code in the source template, the target code forced first), or
    None for a model without language codes."""
    codes = {
        token: token_id for token, token_id in sorted(vocab.items()) if token in special and LANGUAGE_CODE.match(token)
    }
    if not codes:
        return None
    by_id = {token_id: token for token, token_id in codes.items()}
    around = [*template["prefix"], *template["suffix"]]
    source = next((by_id[i] for i in around if i in by_id), None)
    return {"codes": codes, "source": source, "target": by_id.get(forced_bos) if forced_bos is not None else None}


def marian_language_fields(vocab: dict[str, int]) -> dict[str, Any] | None:
    """Multilingual Marian's `languages`: its target codes (">>fra<<"), which a source starts with (in_source);
    None for a single-pair model."""
    codes = {
        token: token_id for token, token_id in sorted(vocab.items()) if token.startswith(">>") and token.endswith("<<")
    }
    if not codes:
        return None
    return {"codes": codes, "source": None, "target": None, "in_source": True}
