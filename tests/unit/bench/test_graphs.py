"""bench.graphs: the graphs alone through the runner, several models alternating, time inside and outside
onnxruntime's run apart."""

from __future__ import annotations

from pathlib import Path

import onnxruntime
import pytest

from bench import graphs

pytestmark = pytest.mark.slow  # uses the session's tiny model


def test_two_variants_alternate_and_each_step_splits_into_run_and_the_rest(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = onnxruntime.InferenceSession.run_with_iobinding
    assert graphs.main(["--model", f"{tiny_model_dir}:fp32", "--model", f"{tiny_model_dir}:int8", "--reps", "2"]) == 0
    assert onnxruntime.InferenceSession.run_with_iobinding is original  # the clock is taken off again
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Machine: ") and "16 rows of 20 source tokens, 20 steps, 2 repetitions" in lines[1]
    assert lines[2].startswith(f"{tiny_model_dir}:fp32: encoder ") and "(1.00x the first)" in lines[2]
    assert lines[3].startswith(f"{tiny_model_dir}:int8: encoder ") and "same greedy tokens as the first" in lines[3]


def test_the_run_clock_counts_only_onnxruntime(tiny_model_dir: Path) -> None:
    runner = graphs.OnnxRunner(
        graphs.load_model_directory(tiny_model_dir), runtime=graphs.RuntimeSettings(intra_op_threads=1)
    )
    [timing] = graphs.measure([runner], rows=3, source_tokens=5, steps=4, reps=2)
    assert len(timing.steps) == len(timing.runs) == len(timing.encoder) == 2
    assert all(0 < run < step for run, step in zip(timing.runs, timing.steps, strict=True))
    assert len(timing.tokens[0]) == 3 * 4


def test_a_model_spec_names_a_directory_and_maybe_a_variant() -> None:
    assert graphs.parse_model("models/normalize/1:int8") == (Path("models/normalize/1"), "int8")
    assert graphs.parse_model("models/normalize/1") == (Path("models/normalize/1"), None)
