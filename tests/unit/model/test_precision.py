"""Training precision (model/precision.py): which CPUs get bf16, and that a bf16 step is fp32's step."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from model.checkpoint import load_checkpoint
from model.parallel import WorkerGroup
from model.precision import cpu_flags, resolve_precision, step_precision
from model.tokenizer import train_tokenizer
from model.train import parse_args, train
from tests.unit.model.test_parallel import _step_gradient
from tests.unit.model.test_training import PAIRS, TINY, small_run

CPU = torch.device("cpu")


def test_cpu_flags_are_read_from_the_first_processor(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512_bf16\n\nprocessor\t: 1\nflags\t\t: fpu\n")
    assert cpu_flags(cpuinfo) == {"fpu", "avx2", "avx512_bf16"}
    assert cpu_flags(tmp_path / "absent") == frozenset()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"avx2", "avx512f", "avx512_bf16"}, "bf16"),  # AMD Zen 4, Intel Cooper Lake
        ({"avx512f", "amx_tile", "amx_bf16"}, "bf16"),  # Intel Sapphire Rapids
        ({"avx2", "fma"}, "fp32"),  # bf16 would be emulated: slower than fp32
        (set(), "fp32"),
    ],
)
def test_auto_takes_bf16_only_where_the_cpu_multiplies_it(flags: set[str], expected: str) -> None:
    assert resolve_precision("auto", CPU, frozenset(flags)) == expected


def test_an_explicit_precision_is_kept_and_an_unknown_one_refused() -> None:
    assert resolve_precision("bf16", CPU, frozenset()) == "bf16"
    assert resolve_precision("fp32", CPU, frozenset({"avx512_bf16"})) == "fp32"
    with pytest.raises(ValueError, match="fp16"):
        resolve_precision("fp16", CPU)
    with pytest.raises(SystemExit):
        parse_args(["--precision", "fp16"])
    assert parse_args(["--precision", "bf16"])[0].precision == "bf16"


def test_bf16_multiplies_in_bf16_and_fp32_does_not() -> None:
    layer = torch.nn.Linear(8, 8)
    with step_precision("bf16", CPU):
        assert layer(torch.ones(2, 8)).dtype == torch.bfloat16
    with step_precision("fp32", CPU):
        assert layer(torch.ones(2, 8)).dtype == torch.float32
    assert layer.weight.dtype == torch.float32  # the weights themselves stay fp32


def _step(precision: str, tmp_path: Path) -> list[torch.Tensor]:
    texts = [text for pair in PAIRS for text in pair]
    train_tokenizer(texts, vocab_size=300).save(str(tmp_path / "tokenizer.json"))
    return _step_gradient(WorkerGroup(), str(tmp_path), precision)


def test_a_bf16_step_is_the_fp32_step_to_bf16_rounding(tmp_path: Path) -> None:
    """Every weight's gradient pointing the same way (cosine > 0.99) and of the same size (within 5%): bf16
    keeps 8 bits of mantissa, so equality is not expected, a different step would be a defect."""
    grads32 = _step("fp32", tmp_path)
    grads16 = _step("bf16", tmp_path)
    assert any(not torch.equal(a, b) for a, b in zip(grads32, grads16, strict=True))  # bf16 did run
    for a, b in zip(grads32, grads16, strict=True):
        assert b.dtype == torch.float32
        if a.norm() > 1e-6:
            assert torch.nn.functional.cosine_similarity(a.flatten(), b.flatten(), dim=0) > 0.99
            assert float(b.norm() / a.norm()) == pytest.approx(1.0, abs=0.05)


def test_the_checkpoint_records_the_precision_auto_chose(tmp_path: Path) -> None:
    config = dataclasses.replace(small_run(tmp_path), steps=4, checkpoint_every=4, precision="auto")
    train(config, TINY, progress=False)
    recorded = load_checkpoint(config.out).metadata["train"]["precision"]
    assert recorded == resolve_precision("auto", CPU)
    assert recorded in ("fp32", "bf16")
