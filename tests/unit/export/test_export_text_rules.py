"""export/text_rules.py: the manifest gets edit_guard and segmentation only for the bundled generator's task, and
case_folding only for a model of it trained on folded text."""

from __future__ import annotations

from typing import Any

import pytest

from export.text_rules import text_rules, trained_on_bundled_generator
from model.case_folding import case_folding_spec
from model.words import edit_guard_spec
from service.engine.case_folding import CaseFolding
from service.engine.edit_guard import EditGuard
from service.engine.segmentation import SegmentationSpec


def test_the_bundled_task_gets_the_three_rules_and_the_service_accepts_them() -> None:
    rules = text_rules({"train": {"data": None, "task": "seq2seq", "steps": 10, "case_folding": True}})
    assert rules["edit_guard"] == edit_guard_spec()
    assert rules["segmentation"] == {
        "segmenter": "sentencex",
        "language": "es",
        "split_lines": True,
        "piece_tokens": 64,
    }
    EditGuard.from_manifest(rules["edit_guard"], where="manifest.json")
    SegmentationSpec.from_manifest(rules["segmentation"], where="manifest.json")
    assert rules["case_folding"] == case_folding_spec()
    folding = CaseFolding.from_manifest(rules["case_folding"], where="manifest.json")
    assert {"may", "september", "thursday", "sept"} <= folding.keep_words and "mayo" not in folding.keep_words


def test_a_model_trained_on_text_as_written_reads_it_as_written() -> None:
    for train in ({"data": None, "task": "seq2seq"}, {"data": None, "task": "seq2seq", "case_folding": False}):
        assert set(text_rules({"train": train})) == {"edit_guard", "segmentation"}


@pytest.mark.parametrize(
    "metadata",
    [
        {"train": {"data": "pairs.tsv", "task": "seq2seq"}},  # the user's own pairs: another contract
        {"train": {"data": None, "task": "denoise"}},
        {"train": {"task": "seq2seq"}},  # no record of the data
        {},
    ],
)
def test_other_checkpoints_get_none(metadata: dict[str, Any]) -> None:
    assert not trained_on_bundled_generator(metadata)
    assert text_rules(metadata) == {}
