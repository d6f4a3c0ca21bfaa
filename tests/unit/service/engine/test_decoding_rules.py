"""DecodingRules (service/engine/decoding_rules.py) against transformers' own logits processors, which they
re-implement in numpy: bad words, no repeated n-grams, min length, forced first and last tokens."""

from __future__ import annotations

import numpy as np
import pytest

from service.engine.decoding_rules import DecodingRules, ModelGeneration
from service.engine.errors import ModelLoadError

START, EOS, VOCAB = 0, 1, 12


def test_atento_models_have_no_rules() -> None:
    generation = ModelGeneration.from_manifest({}, start=START, eos=EOS, where="m")
    assert generation.beam_search == "atento" and not generation.rules.active
    scores = np.arange(VOCAB, dtype=np.float32)
    assert generation.rules.apply(scores, [3, 4], max_new_tokens=5) is scores


def test_malformed_generation_is_a_load_error() -> None:
    with pytest.raises(ModelLoadError, match="m"):
        ModelGeneration.from_manifest({"generation": {"bad_words_ids": [["x"]]}}, start=START, eos=EOS, where="m")
    with pytest.raises(ModelLoadError, match="beam_search"):
        ModelGeneration.from_manifest({"generation": {"beam_search": "mine"}}, start=START, eos=EOS, where="m")


def test_rules_equal_transformers_processors() -> None:
    torch = pytest.importorskip("torch")
    processors = pytest.importorskip("transformers.generation.logits_process")
    rng = np.random.default_rng(0)
    bad_words = [[5], [2, 3], [EOS], [7, 8, 9]]
    for case in range(400):
        n = int(rng.integers(0, 4))
        min_length = int(rng.integers(0, 6))
        max_new_tokens = int(rng.integers(1, 9))
        forced_bos = 4 if case % 3 == 0 else None
        forced_eos = EOS if case % 2 == 0 else None
        rules = DecodingRules(
            start=START,
            eos=EOS,
            bad_words=tuple(tuple(w) for w in bad_words if w != [EOS]),
            no_repeat_ngram_size=n,
            min_length=min_length,
            forced_bos=forced_bos,
            forced_eos=forced_eos,
        )
        reference = processors.LogitsProcessorList()
        if n:
            reference.append(processors.NoRepeatNGramLogitsProcessor(n))
        reference.append(processors.NoBadWordsLogitsProcessor(bad_words, eos_token_id=EOS))
        if min_length:
            reference.append(processors.MinLengthLogitsProcessor(min_length, eos_token_id=EOS))
        if forced_bos is not None:
            reference.append(processors.ForcedBOSTokenLogitsProcessor(forced_bos))
        if forced_eos is not None:
            reference.append(processors.ForcedEOSTokenLogitsProcessor(max_new_tokens + 1, forced_eos))
        generated = rng.integers(2, 10, size=int(rng.integers(0, max_new_tokens))).tolist()
        scores = rng.normal(size=VOCAB).astype(np.float32)
        want = reference(torch.tensor([[START, *generated]]), torch.tensor(scores[None])).numpy()[0]
        got = rules.apply(scores, generated, max_new_tokens=max_new_tokens)
        np.testing.assert_array_equal(got, want, err_msg=f"case {case}: {generated}")


@pytest.mark.parametrize(
    "rules",
    [
        DecodingRules(start=5, eos=2, bad_words=((5,), (9,)), forced_eos=2),
        DecodingRules(start=5, eos=2, bad_words=((7,),), min_length=4, forced_bos=8),
        DecodingRules(start=5, eos=2, bad_words=((3, 4),)),
        DecodingRules(start=5, eos=2, no_repeat_ngram_size=2),
        DecodingRules(start=5, eos=2),
    ],
)
def test_keeps_argmax_only_when_the_rules_would_not_change_it(rules: DecodingRules) -> None:
    """keeps_argmax lets greedy skip a row's rules: whenever it says so, applying them gives the same arg-max."""
    rng = np.random.default_rng(0)
    skipped = 0
    for _ in range(400):
        scores = rng.integers(-3, 3, size=12).astype(np.float32)  # small integers: many ties
        generated = rng.integers(0, 12, size=int(rng.integers(0, 6))).tolist()
        max_new_tokens = int(rng.integers(1, 8))
        token = int(np.argmax(scores))
        if rules.keeps_argmax(token, len(generated), max_new_tokens=max_new_tokens):
            skipped += 1
            assert int(np.argmax(rules.apply(scores, generated, max_new_tokens=max_new_tokens))) == token
    if rules.no_repeat_ngram_size or any(len(word) > 1 for word in rules.bad_words):
        assert skipped == 0
    else:
        assert skipped > 100
