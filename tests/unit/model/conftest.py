"""Fixtures shared by the model/ unit tests."""

from __future__ import annotations

import pytest

from model.data import generate_examples
from model.tokenizer import Tokenizer

VOCAB_SIZE = 600


@pytest.fixture(scope="session")
def tok() -> Tokenizer:
    """A small tokenizer trained on generated examples of the bundled task."""
    examples = generate_examples(3000, seed=0, split="train")
    return Tokenizer.train([t for ex in examples for t in (ex.source, ex.target)], vocab_size=VOCAB_SIZE)
