"""Per-request decoding rules and languages (service/engine/request_rules.py): resolution and refusals, and
requests with different rules decoded together in one batch (greedy, sampling, beam search), each as if
alone. The FakeRunner copies its source, so a rule's effect is visible token by token."""

from __future__ import annotations

import pytest
from fake_runner import EOS, FakeRunner, FakeTokenizer

from service.engine.decoding_rules import DecodingRules
from service.engine.errors import InvalidInput, ModelLoadError
from service.engine.executor import BatchExecutor, ModelShape, Request, SpecialIds
from service.engine.request_rules import ModelLanguages, bad_word_ids, request_rules, with_languages
from service.engine.types import GenerationParams

LANGUAGES = ModelLanguages(codes={"eng_Latn": 40, "spa_Latn": 41, "fra_Latn": 42}, source="spa_Latn", target="eng_Latn")
MODEL_RULES = DecodingRules(start=1, eos=EOS, bad_words=((0,),), no_repeat_ngram_size=3, forced_bos=40)


class Words:
    """encode_plain: one id per character (a byte-level BPE would spell " ab" differently from "ab")."""

    prefix = [41]
    suffix = [EOS]

    def encode_plain(self, text: str) -> list[int]:
        return [ord(c) % 50 for c in text]


def test_languages_from_manifest_and_refusals() -> None:
    manifest = {"codes": {"eng_Latn": 40, "spa_Latn": 41}, "source": "spa_Latn", "target": "eng_Latn"}
    assert ModelLanguages.from_manifest(manifest, where="m") == ModelLanguages(
        codes={"eng_Latn": 40, "spa_Latn": 41}, source="spa_Latn", target="eng_Latn"
    )
    assert ModelLanguages.from_manifest(None, where="m") is None
    with pytest.raises(ModelLoadError, match="languages.source 'xx'"):
        ModelLanguages.from_manifest({**manifest, "source": "xx"}, where="m")
    with pytest.raises(ModelLoadError, match="non-empty"):
        ModelLanguages.from_manifest({"codes": {}}, where="m")


def test_source_language_replaces_the_templates_code() -> None:
    source = [41, 7, 8, EOS]
    params = GenerationParams(source_language="fra_Latn")
    assert with_languages(source, params, languages=LANGUAGES, tokenizer=Words()) == [42, 7, 8, EOS]
    assert with_languages(source, GenerationParams(), languages=LANGUAGES, tokenizer=Words()) == source
    with pytest.raises(InvalidInput, match="'deu_Latn' is not a language of this model; known: eng_Latn, spa_Latn"):
        with_languages(source, GenerationParams(source_language="deu_Latn"), languages=LANGUAGES, tokenizer=Words())
    with pytest.raises(InvalidInput, match="this model has no languages"):
        with_languages(source, params, languages=None, tokenizer=Words())
    no_source_code = ModelLanguages(codes=LANGUAGES.codes, source=None, target="eng_Latn")
    with pytest.raises(InvalidInput, match="source carries no language code"):
        with_languages(source, params, languages=no_source_code, tokenizer=Words())


def test_target_language_is_forced_first_or_written_first_in_the_source() -> None:
    rules = request_rules(
        GenerationParams(target_language="fra_Latn"), MODEL_RULES, languages=LANGUAGES, tokenizer=Words(), vocab_size=50
    )
    assert rules is not None and rules.forced_bos == 42 and rules.bad_words == MODEL_RULES.bad_words
    marian = ModelLanguages(codes={">>fra<<": 30, ">>spa<<": 31}, source=None, target=None, in_source=True)
    params = GenerationParams(target_language=">>spa<<")

    class NoPrefix(Words):
        prefix: list[int] = []

    assert with_languages([7, EOS], params, languages=marian, tokenizer=NoPrefix()) == [31, 7, EOS]
    marian_rules = request_rules(params, MODEL_RULES, languages=marian, tokenizer=Words(), vocab_size=50)
    assert marian_rules is not None and marian_rules.forced_bos == MODEL_RULES.forced_bos
    with pytest.raises(InvalidInput, match="target_language: this model has no languages"):
        request_rules(params, MODEL_RULES, languages=None, tokenizer=Words(), vocab_size=50)


def test_bad_words_add_to_the_models_and_the_ngram_size_replaces_it() -> None:
    assert request_rules(GenerationParams(), MODEL_RULES, languages=None, tokenizer=Words(), vocab_size=50) is None
    params = GenerationParams(no_repeat_ngram_size=0, bad_words=("ab",), bad_words_ids=((9,), (EOS,)))
    rules = request_rules(params, MODEL_RULES, languages=None, tokenizer=Words(), vocab_size=50)
    assert rules is not None
    assert rules.no_repeat_ngram_size == 0
    # The model's <pad>, then the ids, then "ab" alone and after a space; EOS alone is dropped as transformers does.
    assert rules.bad_words == ((0,), (9,), (47, 48), (32, 47, 48))
    assert bad_word_ids(["ab"], Words()) == [(47, 48), (32, 47, 48)]
    with pytest.raises(InvalidInput, match=r"ids must be in \[0, 50\)"):
        request_rules(
            GenerationParams(bad_words_ids=((50,),)), MODEL_RULES, languages=None, tokenizer=Words(), vocab_size=50
        )


def _run(executor: BatchExecutor, requests: list[Request]) -> dict[str, list[int]]:
    results: dict[str, list[int]] = {}
    outcome = executor.step(requests)
    for _ in range(100):
        results.update({k: v.token_ids for k, v in outcome.results.items()})
        if len(results) == len(requests):
            break
        outcome = executor.step([])
    return results


def _has_repeated_ngram(ids: list[int], n: int) -> bool:
    grams = [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]
    return len(grams) != len(set(grams))


@pytest.mark.parametrize("strategy", ["greedy", "sampling", "beam"])
def test_requests_with_different_rules_share_a_batch(strategy: str) -> None:
    """The copy model repeats "5 6 5 6 ..."; a request with no_repeat_ngram_size 2 must not, one banning 6 must
    not write it, and one without rules copies exactly, all in the same steps."""
    source = [1 + 4, 6] * 4 + [EOS]
    extra = {"do_sample": True, "seed": 3, "top_k": 1} if strategy == "sampling" else {}
    extra = {"num_beams": 2} if strategy == "beam" else extra
    plain = GenerationParams(max_new_tokens=10, **extra)  # type: ignore[arg-type]
    start = DecodingRules(start=1, eos=EOS)
    no_repeat = DecodingRules(start=1, eos=EOS, no_repeat_ngram_size=2)
    no_six = DecodingRules(start=1, eos=EOS, bad_words=((6,),))
    executor = BatchExecutor(
        FakeRunner(), FakeTokenizer(), special=SpecialIds(pad=0, bos=1, eos=EOS), shape=ModelShape(1, 1, 1)
    )
    requests = [
        Request("plain", source, plain, seed=3),
        Request("no_repeat", source, plain, seed=3, rules=no_repeat),
        Request("no_six", source, plain, seed=3, rules=no_six),
        Request("default", source, plain, seed=3, rules=start),
    ]
    results = _run(executor, requests)
    assert results["plain"] == results["default"] == [5, 6] * 4
    assert not _has_repeated_ngram(results["no_repeat"], 2) and results["no_repeat"][:3] == [5, 6, 5]
    assert 6 not in results["no_six"] and results["no_six"][0] == 5
