"""Data-parallel training (model/parallel.py): the workers' shares, their summed gradients, their failures."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

import model.train
from model.checkpoint import load_checkpoint
from model.data import DataError
from model.parallel import WorkerGroup, run_workers
from model.tasks import make_pairs
from model.tokenizer import Tokenizer, train_tokenizer
from model.train import TrainConfig, build_tokenizer, main, step_loss, train
from model.transformer import Transformer
from tests.unit.model.test_training import PAIRS, TINY, small_run


@pytest.mark.parametrize("size", [1, 2, 3])
def test_the_workers_share_every_micro_batch_once_in_a_snake(size: int) -> None:
    shares = [WorkerGroup(rank, size).own_share(range(11)) for rank in range(size)]
    assert sorted(item for share in shares for item in share) == list(range(11))
    assert max(len(s) for s in shares) - min(len(s) for s in shares) <= 1
    if size == 2:  # the longest micro-batch of each round of two goes to a different worker
        assert shares == [[0, 3, 4, 7, 8], [1, 2, 5, 6, 9, 10]]


def _step_gradient(group: WorkerGroup, folder: str, precision: str = "fp32") -> list[torch.Tensor]:
    """One step's loss back-propagated by `group` over PAIRS (the same model in every worker): the gradient."""
    tokenizer = Tokenizer.from_file(Path(folder) / "tokenizer.json")
    encoded = [(tokenizer.encode(s), tokenizer.encode(t)) for s, t in PAIRS * 2]
    pairs = make_pairs("seq2seq", encoded, seed=0, mask_id=tokenizer.mask_id)
    config = dataclasses.replace(
        TINY, vocab_size=tokenizer.vocab_size, pad_id=tokenizer.pad_id, bos_id=tokenizer.bos_id, eos_id=tokenizer.eos_id
    )
    torch.manual_seed(0)
    model = Transformer(config).train()
    step_loss(model, pairs, tokenizer, TrainConfig(micro_batch_size=3, precision=precision), torch.device("cpu"), group)
    return [p.grad.clone() for p in model.parameters()]


@pytest.mark.slow
def test_two_workers_sum_to_the_steps_gradient(tmp_path: Path) -> None:
    """Each worker back-propagates its micro-batches; summed, they are the gradient of the whole step."""
    texts = [text for pair in PAIRS for text in pair]
    train_tokenizer(texts, vocab_size=300).save(str(tmp_path / "tokenizer.json"))
    alone = _step_gradient(WorkerGroup(), str(tmp_path))
    shared = run_workers(_step_gradient, 2, str(tmp_path))
    for a, b in zip(alone, shared, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_two_workers_train_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same losses as one process, step after step, and the same validation loss at the end.

    The tokenizer is built once, by the parent: workers that each rebuilt it wrote its file while the other read it.

    (Weights are not compared: summed in another order, a near-zero gradient differs in its last bits,
    and Adam, dividing it by its own size, moves such a weight by up to a learning rate either way.)"""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    common = {"steps": 12, "micro_batch_size": 2, "checkpoint_every": 12, "label_smoothing": 0.1}
    one = small_run(tmp_path / "one", **common)
    two = dataclasses.replace(small_run(tmp_path / "two", **common), workers=2)
    expected = train(one, TINY, progress=False)
    built: list[int] = []

    def build_and_stat(*args: object) -> Tokenizer:
        tokenizer = build_tokenizer(*args)  # type: ignore[arg-type]
        built.append((Path(two.out) / "tokenizer.json").stat().st_mtime_ns)
        return tokenizer

    monkeypatch.setattr(model.train, "build_tokenizer", build_and_stat)  # the parent's only: workers are spawned
    losses = train(two, TINY, progress=False)
    assert built == [(Path(two.out) / "tokenizer.json").stat().st_mtime_ns]
    assert losses == pytest.approx(expected, rel=1e-5)
    assert len(set(losses)) > 1
    one_valid = load_checkpoint(one.out).metadata["history"][-1]["valid_loss"]
    assert load_checkpoint(two.out).metadata["history"][-1]["valid_loss"] == pytest.approx(one_valid, rel=1e-5)


def _sum_or_fail(group: WorkerGroup) -> float:
    if group.rank == 1:
        raise DataError("worker 1 cannot read its data")
    total = torch.ones(1)
    dist.all_reduce(total)  # worker 0 waits here for a worker that will never come
    return float(total)


def _sum_of_ranks(group: WorkerGroup) -> float:
    total = torch.tensor([float(group.rank)])
    dist.all_reduce(total)
    return float(total)


def test_run_workers_returns_the_leaders_result() -> None:
    assert run_workers(_sum_of_ranks, 3) == 0 + 1 + 2


def test_a_failing_worker_fails_the_run_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(DataError, match="worker 1 cannot read"):
        run_workers(_sum_or_fail, 2)
    assert time.monotonic() - started < 60  # not the group's 15-minute timeout


def test_workers_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "pairs.tsv"
    data.write_text("uno\t1\n")
    assert main(["--data", str(data), "--out", str(tmp_path / "run"), "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


@pytest.mark.slow
def test_two_workers_keep_to_the_leaders_time_budget(tmp_path: Path) -> None:
    """Only the leader's clock plans the steps: both workers take the same number and end together."""
    config = dataclasses.replace(
        small_run(tmp_path, steps=1_000_000, micro_batch_size=2, cooldown_steps=3, time_budget=5 / 60), workers=2
    )
    losses = train(config, TINY, progress=False)
    metadata = load_checkpoint(config.out).metadata
    assert 3 < len(losses) == metadata["step"] == metadata["planned_steps"] < 1_000_000
