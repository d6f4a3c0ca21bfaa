"""The manifest's text rules (docs/model-directory.md): `edit_guard`, `segmentation` and `case_folding` for a
checkpoint trained on the bundled generator (model/data.py), whose contract they describe. Imports model/.
"""

from __future__ import annotations

from typing import Any

from model.case_folding import case_folding_spec
from model.words import edit_guard_spec

# The bundled normalizer reads Spanish and English; sentencex's Spanish rules split both at their
# sentence ends (its abbreviation lists are what differ between languages).
# Every line its own piece: the model is trained on paragraphs of sentences, not on many short lines
# (bare numbers, dates, list items) in one call (README, "The bundled model"). A line over 64 tokens is
# cut into sentences packed up to 64: the model is more accurate on them than on a whole line near its
# limit (test set v3, the 5000-step model: paragraph_mixed 86.7% -> 88.3%, paragraph_plain 96.0% ->
# 97.3% guard off; 40 tokens gave the same).
BUNDLED_SEGMENTATION = {"segmenter": "sentencex", "language": "es", "split_lines": True, "piece_tokens": 64}


def trained_on_bundled_generator(metadata: dict[str, Any]) -> bool:
    """True when the checkpoint's config.json says `"train": {"data": null, "task": "seq2seq", ...}`."""
    train = metadata.get("train")
    return isinstance(train, dict) and "data" in train and train["data"] is None and train.get("task") == "seq2seq"


def text_rules(metadata: dict[str, Any]) -> dict[str, Any]:
    """The manifest fields for a checkpoint's config.json: for the bundled task the edit guard and segmentation,
    and case folding when it was trained on folded text (`--case-folding`: a model that learnt title-case words
    as written reads them best as written); none otherwise."""
    if not trained_on_bundled_generator(metadata):
        return {}
    rules: dict[str, Any] = {"edit_guard": edit_guard_spec(), "segmentation": dict(BUNDLED_SEGMENTATION)}
    if metadata["train"].get("case_folding"):
        rules["case_folding"] = case_folding_spec()
    return rules
