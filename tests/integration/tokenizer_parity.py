"""The service's tokenizer of an imported model directory, built as the engine builds it, and a property check
that it gives transformers' ids on random Unicode with the model's special tokens' text spliced in
("eng_Latn", "__en__", "</s>", "<extra_id_0>": read as the token wherever transformers' tokenizer reads it so).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine.tokenizer import Tokenizer, UnknownIds


def served_tokenizer(model_dir: Path) -> Tokenizer:
    """The tokenizer as service/engine/engine.py loads it from the manifest."""
    manifest = json.loads((model_dir / "manifest.json").read_text())
    template, languages = manifest["source_template"], manifest["languages"]
    return Tokenizer.from_file(
        model_dir / "tokenizer.json",
        eos_id=manifest["special_tokens"]["eos"],
        prefix=template["prefix"],
        suffix=template["suffix"],
        unknown=UnknownIds(manifest["config"]["vocab_size"], manifest["special_tokens"]["unk"]),
        leading_codes=languages["codes"] if languages and languages.get("in_source") else None,
        match_special_tokens=template.get("match_special_tokens", False),
    )


def special_texts(reference: Any, manifest: dict[str, Any]) -> list[str]:
    """Every special token's text the reference tokenizer knows, and the model's language codes."""
    codes = manifest["languages"]["codes"] if manifest["languages"] else {}
    return sorted({str(t) for t in reference.all_special_tokens} | set(codes))


def assert_spliced_ids_equal(ours: Tokenizer, reference: Any, specials: Sequence[str], *, examples: int) -> None:
    """Hypothesis: random Unicode pieces, special tokens' text and spaces, joined; ours == reference's ids."""
    # Any assigned code point but surrogates, private use and controls (whitespace controls come as pieces):
    # scripts, combining marks, symbols, emoji, format characters and the many kinds of space.
    characters = st.characters(exclude_categories=("Cs", "Co", "Cn", "Cc"))
    piece = st.one_of(
        st.text(characters, max_size=8),
        st.sampled_from(list(specials)),
        st.sampled_from([" ", "  ", "\t", "\n", "x"]),
    )

    # Wall-clock health checks off: the suites share a loaded machine (generation time is not the property).
    @settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(parts=st.lists(piece, min_size=1, max_size=10))
    def check(parts: list[str]) -> None:
        text = "".join(parts)
        assert ours.encode(text)[0] == list(reference(text).input_ids), text

    check()
