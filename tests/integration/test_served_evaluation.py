"""`python -m service.engine.evaluate` scores the bundled model as served, with its edit guard off and on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.engine.evaluate import main

BUNDLED = Path(__file__).resolve().parents[2] / "models" / "normalize" / "1"


def test_scores_per_category_with_the_guard_off_and_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        {
            "source": "Привет, мир. 日本語のテキスト 🎉",
            "target": "Привет, мир. 日本語のテキスト 🎉",
            "category": "copy_script",
        },
        {"source": "doscientos", "target": "200", "category": "cardinal_es"},
    ]
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    assert main(["--model-dir", str(BUNDLED), "--data", str(data)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["exact_match_guard_off"]) == set(report["exact_match_guard_on"]) == {"copy_script", "cardinal_es"}
    assert report["exact_match_guard_on"]["copy_script"] == 1.0  # whatever the model wrote, the guard copies it back
    assert report["examples"] == 2
