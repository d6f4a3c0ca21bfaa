"""bench.int8_formats: every int8 format of a model's graphs built once beside it and measured side by side."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from bench import int8_formats

pytestmark = pytest.mark.slow  # quantizes the session's tiny model several ways


def op_types(path: Path) -> set[str]:
    return {node.op_type for node in onnx.load(str(path)).graph.node}


def test_every_format_is_built_once_as_a_variant_the_service_loads(tiny_model_dir: Path, tmp_path: Path) -> None:
    directory = int8_formats.trial_directory(tiny_model_dir, tmp_path, calibration_rows=4, steps=4)
    manifest = json.loads((directory / "manifest.json").read_text())
    variants = manifest["variants"]
    assert {"fp32", "int8", "int8_tensor", "qdq", *int8_formats.NBITS} <= set(variants)
    assert "DequantizeLinear" in op_types(directory / variants["qdq"]["decoder"])  # static: scales stored
    assert "DynamicQuantizeLinear" not in op_types(directory / variants["qdq"]["decoder"])
    assert "MatMulNBits" in op_types(directory / variants["nbits4_b32"]["decoder_gqa"])
    assert "GroupQueryAttention" in op_types(directory / variants["int8_tensor"]["decoder_gqa"])
    assert (directory / "decoder.onnx").resolve() == (tiny_model_dir / "decoder.onnx").resolve()  # linked
    for way in int8_formats.WAYS:
        if way.backend == "onnxruntime":
            int8_formats.runner_for(way, directory, threads=1)  # every file's sha256 checked on load
    (directory / variants["qdq"]["encoder"]).unlink()
    assert int8_formats.trial_directory(tiny_model_dir, tmp_path, calibration_rows=4, steps=4) == directory
    assert not (directory / variants["qdq"]["encoder"]).exists()  # built once: a second call leaves it as it is


def test_the_table_has_every_way_against_fp32_and_the_shipped_int8(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--model-dir", str(tiny_model_dir), "--cache", str(tmp_path), "--rows", "3", "--steps", "4"]
    assert int8_formats.main([*argv, "--reps", "2", "--calibration-rows", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Machine: ") and "3 rows of 24 source tokens, 4 greedy steps, 2 repetitions" in lines[1]
    rows = [line.split(" | ") for line in lines[4:]]
    assert len(rows) == len([w for w in int8_formats.WAYS if w.backend == "onnxruntime"]) + (
        1 if int8_formats.runtimes.openvino_installed() else 0
    )
    fp32, shipped = rows[0], rows[1]
    assert fp32[0] == "| fp32" and fp32[-1] == "0.0000 |" and fp32[-2] == "100.0%"  # fp32 against itself
    assert shipped[0] == "| int8 dynamic, per channel (shipped)" and shipped[3] == "1.00x"


def test_rows_count_as_fp32_only_when_every_token_is_the_same() -> None:
    reference = int8_formats.Timings(tokens=[np.array([[5, 6], [7, 8]])])
    other = int8_formats.Timings(tokens=[np.array([[5, 6], [7, 9]])])
    assert int8_formats.rows_as_reference(other, reference) == 0.5
    assert int8_formats.rows_as_reference(reference, reference) == 1.0
