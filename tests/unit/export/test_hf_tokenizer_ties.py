"""The import's tokenizer check: the same probe texts in every process, and SentencePiece's score ties told
apart from real differences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from export.hf.build import reference_tokenizer  # noqa: E402
from export.hf.checkpoint import read_config  # noqa: E402
from export.hf.tokenizer import check_ids, marian_tokenizer, probe_texts, unigram_tie  # noqa: E402

# "000" is "▁" "00" "0" for SentencePiece and "▁" "0" "00" for tokenizers' Unigram: the two sums are equal.
TIE = "000parti2;os, el中"


@pytest.fixture(scope="module")
def marian(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.integration.hf_checkpoints import marian_separate_vocabs_checkpoint

    return marian_separate_vocabs_checkpoint(tmp_path_factory.mktemp("marian-ties") / "hf")


class ReversedVocab:
    """A tokenizer whose get_vocab() lists its entries the other way round, as another process's hash map may."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def get_vocab(self) -> dict[str, int]:
        return dict(reversed(list(self.tokenizer.get_vocab().items())))

    def get_added_tokens_decoder(self) -> Any:
        return self.tokenizer.get_added_tokens_decoder()


def test_probe_texts_do_not_depend_on_the_vocabularys_order(marian: Path) -> None:
    tokenizer = marian_tokenizer(marian, read_config(marian))
    assert probe_texts(ReversedVocab(tokenizer), specials=[]) == probe_texts(tokenizer, specials=[])


def test_a_tie_of_equal_scores_is_reported_not_refused(marian: Path) -> None:
    tokenizer, reference = marian_tokenizer(marian, read_config(marian)), reference_tokenizer(marian)
    want = list(reference(TIE, add_special_tokens=False).input_ids)
    got = tokenizer.encode(TIE, add_special_tokens=False).ids
    assert want != got and sorted(want) == sorted(got)  # the tie this test is about: the same pieces reordered
    assert check_ids(reference, tokenizer, [TIE, "hola"]) == [TIE]


def test_other_differences_are_not_ties() -> None:
    assert unigram_tie([5, 7, 9], [7, 5, 9], unk=1)
    assert not unigram_tie([5, 7, 9], [5, 7, 8], unk=1)  # another piece
    assert not unigram_tie([5, 7], [5, 7, 7], unk=1)  # another count
    assert not unigram_tie([1, 7], [7, 1], unk=1)  # <unk>'s score is a penalty, not the piece's
    assert unigram_tie([1, 5, 7, 1], [1, 7, 5, 1], unk=1)  # <unk> where both agree
