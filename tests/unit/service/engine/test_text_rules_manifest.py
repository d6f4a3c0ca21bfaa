"""The manifest's edit_guard and segmentation as the service loads them: the bundled model declares
both, and a bad entry is a startup error naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service.engine.errors import ModelLoadError
from service.engine.model_dir import load_model_directory

BUNDLED = Path(__file__).parents[4] / "models" / "normalize" / "1"


def _copy(tmp_path: Path, **changes: Any) -> Path:
    """The bundled directory (its files linked) with manifest fields replaced; None removes one."""
    manifest = json.loads((BUNDLED / "manifest.json").read_text())
    for name in manifest["files"]:
        (tmp_path / name).symlink_to(BUNDLED / name)
    for key, value in changes.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_the_bundled_model_declares_both() -> None:
    model = load_model_directory(BUNDLED)
    assert model.edit_guard is not None and {"tres", "mayo", "of"} <= model.edit_guard.consumable_words
    assert model.segmentation is not None and model.segmentation.segmenter == "sentencex"


def test_without_the_entries_there_are_no_rules(tmp_path: Path) -> None:
    model = load_model_directory(_copy(tmp_path, edit_guard=None, segmentation=None))
    assert model.edit_guard is None and model.segmentation is None


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"edit_guard": {"consumable_words": ["tres"], "consumable_characters": "0"}}, "edit_guard.producible"),
        ({"edit_guard": "on"}, "'edit_guard'"),
        ({"segmentation": {"segmenter": "nltk", "language": "es"}}, "segmentation.segmenter"),
        ({"segmentation": {"segmenter": "sentencex", "language": 3}}, "segmentation.language"),
    ],
)
def test_a_bad_entry_is_a_startup_error_naming_the_field(tmp_path: Path, changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ModelLoadError, match=field):
        load_model_directory(_copy(tmp_path, **changes))
