"""Training: overfitting a small set, exact resume, and bad data stopping the run up front."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from model.checkpoint import load_checkpoint
from model.config import ModelConfig
from model.data import DataError, Example
from model.decoding import greedy_decode
from model.tasks import make_pairs
from model.tokenizer import Tokenizer, train_tokenizer
from model.train import (
    TrainConfig,
    batch_loss,
    collate,
    encode_pairs,
    learning_rate_factor,
    main,
    stable_bucket,
    step_loss,
    train,
)
from model.transformer import Transformer

TINY = ModelConfig(d_model=32, n_heads=2, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0)
PAIRS = [
    ("dos mil", "2000"),
    ("tres", "3"),
    ("forty-two", "42"),
    ("nine hundred", "900"),
    ("el 3 de mayo de 2001", "2001-05-03"),
    ("hola", "hola"),
    ("one hundred and one", "101"),
    ("veinte", "20"),
]


@pytest.fixture(autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)


def write_pairs(path: Path, pairs: list[tuple[str, str]]) -> Path:
    path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs))
    return path


def small_run(tmp_path: Path, **changes: object) -> TrainConfig:
    data = write_pairs(tmp_path / "pairs.tsv", PAIRS * 4)
    base = TrainConfig(
        out=str(tmp_path / "run"),
        data=str(data),
        steps=300,
        batch_size=8,
        learning_rate=3e-3,
        warmup_steps=30,
        label_smoothing=0.0,
        vocab_size=300,
        valid_every=10_000,
        checkpoint_every=100,
        valid_size=4,
        max_length=32,
    )
    return dataclasses.replace(base, **changes)


@pytest.mark.slow
def test_tiny_model_overfits_small_set(tmp_path: Path) -> None:
    config = small_run(tmp_path)
    losses = train(config, TINY, progress=False)
    assert losses[-1] < 0.2 < losses[0]
    checkpoint = load_checkpoint(config.out)
    tokenizer = Tokenizer.from_file(checkpoint.tokenizer_path)
    trained = [(s, t) for s, t in PAIRS if stable_bucket(s) >= 5]  # the rest is held out for validation
    assert len(trained) >= 6
    sources = [tokenizer.encode(s) + [tokenizer.eos_id] for s, _ in trained]
    outputs = greedy_decode(checkpoint.model, sources, max_new_tokens=16)
    assert [tokenizer.decode(h.tokens) for h in outputs] == [t for _, t in trained]


@pytest.mark.parametrize(("task", "noise"), [("seq2seq", 0.0), ("denoise", 0.0), ("prefix_lm", 0.0), ("seq2seq", 0.2)])
def test_resume_gives_the_same_losses(tmp_path: Path, task: str, noise: float) -> None:
    (tmp_path / "straight").mkdir()
    (tmp_path / "stopped").mkdir()
    common = {"steps": 40, "checkpoint_every": 20, "task": task, "segmentation_noise": noise, "copy_drill_share": noise}
    straight = small_run(tmp_path / "straight", **common)
    expected = train(straight, TINY, progress=False)
    stopped = small_run(tmp_path / "stopped", **common, stop_after=20)
    first = train(stopped, TINY, progress=False)
    rest = train(dataclasses.replace(stopped, stop_after=None, resume=True), TINY, progress=False)
    assert len(first) == 20 and len(rest) == 20
    assert first + rest == pytest.approx(expected, abs=1e-6)


def test_segmentation_noise_changes_training_tokens_only(tmp_path: Path) -> None:
    examples = [Example(source=s, target=t, category="file") for s, t in PAIRS] * 8
    tokenizer = Tokenizer(train_tokenizer([text for pair in PAIRS for text in pair], vocab_size=300))
    config = small_run(tmp_path, segmentation_noise=0.3)
    clean = encode_pairs(tokenizer, examples, dataclasses.replace(config, segmentation_noise=0.0), step=5)
    noisy = encode_pairs(tokenizer, examples, config, step=5)
    assert noisy != clean
    assert noisy == encode_pairs(tokenizer, examples, config, step=5)  # a function of (seed, step)
    assert [tokenizer.decode(p.target) for p in noisy] == [e.target for e in examples]
    assert encode_pairs(tokenizer, examples, config, step=-1) == encode_pairs(
        tokenizer, examples, dataclasses.replace(config, segmentation_noise=0.0), step=-1
    )  # validation is never noised


def test_case_folding_trains_on_the_text_the_service_reads(tmp_path: Path) -> None:
    examples = [Example(source="Tres Gatos el May 3", target="3 Gatos el May 3", category="file")]
    tokenizer = Tokenizer(train_tokenizer([text for pair in PAIRS for text in pair], vocab_size=300))
    config = small_run(tmp_path, case_folding=True)
    (folded,) = encode_pairs(tokenizer, examples, config, step=5)
    assert tokenizer.decode(folded.source) == "tres gatos el May 3"  # English month names keep their capital
    assert tokenizer.decode(folded.target) == "3 gatos el May 3"
    (validation,) = encode_pairs(tokenizer, examples, config, step=-1)
    assert validation == folded


def test_generator_training_runs_and_checkpoints(tmp_path: Path) -> None:
    config = TrainConfig(
        out=str(tmp_path / "gen"),
        steps=3,
        batch_size=4,
        vocab_size=300,
        tokenizer_corpus=500,
        valid_every=3,
        valid_size=4,
        checkpoint_every=3,
        max_length=96,
    )
    train(config, TINY, progress=False)
    checkpoint = load_checkpoint(config.out)
    assert checkpoint.metadata["step"] == 3
    assert checkpoint.metadata["history"][0]["step"] == 3


def test_malformed_line_stops_before_training(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "malformed.tsv"
    data.write_text("uno\t1\ndos 2\ntres\t3\n")
    out = tmp_path / "run"
    code = main(["--data", str(data), "--out", str(out), "--steps", "5"])
    assert code == 2
    assert ":2:" in capsys.readouterr().err
    assert not out.exists()
    config = dataclasses.replace(small_run(tmp_path), data=str(data), out=str(out))
    with pytest.raises(DataError, match=":2:"):
        train(config, TINY, progress=False)
    assert not out.exists()


def test_micro_batches_give_the_full_batch_gradient(tmp_path: Path) -> None:
    """Length-sorted micro-batches are only a speed-up: loss and gradient equal one padded batch."""
    texts = [text for pair in PAIRS for text in pair]
    train_tokenizer(texts, vocab_size=300).save(str(tmp_path / "tokenizer.json"))
    tokenizer = Tokenizer.from_file(tmp_path / "tokenizer.json")
    encoded = [(tokenizer.encode(s), tokenizer.encode(t)) for s, t in PAIRS]
    pairs = make_pairs("seq2seq", encoded, seed=0, mask_id=tokenizer.mask_id)
    config = dataclasses.replace(
        TINY, vocab_size=tokenizer.vocab_size, pad_id=tokenizer.pad_id, bos_id=tokenizer.bos_id, eos_id=tokenizer.eos_id
    )
    torch.manual_seed(0)
    model = Transformer(config).train()

    def gradient() -> list[torch.Tensor]:
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad(set_to_none=True)
        return grads

    full = batch_loss(model, collate(pairs, tokenizer), 0.1, tokenizer.pad_id)
    full.backward()
    full_gradient = gradient()
    run = TrainConfig(micro_batch_size=3, label_smoothing=0.1)
    micro, real_tokens, _ = step_loss(model, pairs, tokenizer, run, torch.device("cpu"))
    micro_gradient = gradient()

    assert micro == pytest.approx(full.item(), rel=1e-5)
    assert real_tokens == sum(len(p.source) + 1 + len(p.target) + 1 for p in pairs)
    for a, b in zip(full_gradient, micro_gradient, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_learning_rate_warms_up_decays_then_cools_down_to_zero() -> None:
    warmup, total, cooldown = 100, 1000, 200
    factors = [learning_rate_factor(step, warmup, total, cooldown) for step in range(1, total + 1)]
    assert factors[warmup - 1] == pytest.approx(1.0)  # the peak, at the end of warm-up
    assert all(a < b for a, b in zip(factors[: warmup - 1], factors[1:warmup], strict=True))
    assert all(a > b for a, b in zip(factors[warmup - 1 : -1], factors[warmup:], strict=True))
    before = learning_rate_factor(total - cooldown, warmup)  # the inverse square root where cooling starts
    assert factors[total - cooldown - 1] == pytest.approx(before)
    assert factors[total - cooldown] == pytest.approx(learning_rate_factor(total - cooldown + 1, warmup))
    assert factors[total - cooldown // 2 - 1] == pytest.approx(
        learning_rate_factor(total - cooldown // 2, warmup) * (cooldown // 2 + 1) / cooldown
    )
    assert 0 < factors[-1] < factors[-2] and factors[-1] * cooldown == pytest.approx(
        learning_rate_factor(total, warmup)
    )  # the last step still learns, at 1/cooldown of the decayed rate
    no_cooldown = [learning_rate_factor(step, warmup, total) for step in range(1, total + 1)]
    assert no_cooldown == [learning_rate_factor(step, warmup) for step in range(1, total + 1)]


def test_init_from_starts_a_new_run_from_the_weights(tmp_path: Path) -> None:
    """--init-from: step 0 with a fresh optimizer, the checkpoint's weights and tokenizer; its first loss
    is that model's loss on the first batch, far below a fresh model's."""
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = small_run(tmp_path / "first", steps=200)
    trained = train(first, TINY, progress=False)
    continued = small_run(tmp_path / "second", steps=5, init_from=first.out, warmup_steps=5)
    losses = train(continued, TINY, progress=False)
    assert len(losses) == 5
    assert losses[0] < 0.5 * trained[0]
    assert (Path(continued.out) / "tokenizer.json").read_bytes() == (Path(first.out) / "tokenizer.json").read_bytes()
    assert load_checkpoint(continued.out).metadata["step"] == 5
    missing = small_run(tmp_path / "second", out=str(tmp_path / "third"), init_from=str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="nowhere"):
        train(missing, TINY, progress=False)


def test_category_weights_reshape_the_generator_mix() -> None:
    from model.data import CATEGORIES, generate_examples
    from model.train import parse_category_weights

    weights = parse_category_weights("sentence_multiple_en=50, paragraph_mixed=0")
    assert weights == {"sentence_multiple_en": 50.0, "paragraph_mixed": 0.0}
    drawn = [e.category for e in generate_examples(400, seed=5, split="train", weights=weights)]
    assert drawn.count("sentence_multiple_en") > 0.4 * len(drawn)
    assert "paragraph_mixed" not in drawn
    default = [e.category for e in generate_examples(400, seed=5, split="train")]
    assert default.count("sentence_multiple_en") < 0.1 * len(default)
    assert set(CATEGORIES) >= set(drawn)
    for text, message in (("bogus=1", "unknown category"), ("plain_es", "category=weight"), ("plain_es=x", "number")):
        with pytest.raises(DataError, match=message):
            parse_category_weights(text)
    with pytest.raises(DataError, match="negative"):
        parse_category_weights("plain_es=-1")


def test_leap_day_drills_join_generator_runs_only(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="leap-day-drill-share"):
        train(small_run(tmp_path, leap_day_drill_share=0.1), TINY, progress=False)
    generated = small_run(tmp_path, data=None, steps=3, tokenizer_corpus=300, max_length=128, leap_day_drill_share=0.25)
    assert len(train(generated, TINY, progress=False)) == 3
    with pytest.raises(DataError, match="give --leap-day-drill-share"):
        train(dataclasses.replace(generated, leap_day_drill_share=0.0, leap_day_minimal_pairs=True), TINY)
    paired = dataclasses.replace(generated, out=str(tmp_path / "paired"), leap_day_minimal_pairs=True)
    assert len(train(paired, TINY, progress=False)) == 3


def test_cooldown_category_weights_draw_the_cool_downs_batches(tmp_path: Path) -> None:
    from model.parallel import ONE_PROCESS
    from model.train import PairSource, train_in_group

    class Recorded(PairSource):
        def __init__(self, config: TrainConfig) -> None:
            super().__init__(config)
            self.cooling: list[bool] = []

        def train_batch(self, step: int, *, cooling: bool = False) -> list[Example]:
            self.cooling.append(cooling)
            return super().train_batch(step, cooling=cooling)

    config = small_run(
        tmp_path,
        data=None,
        steps=6,
        warmup_steps=2,
        cooldown_steps=2,
        batch_size=16,
        tokenizer_corpus=300,
        max_length=128,
        schedule="constant",
        category_weights="date_spoken_en=1",
        cooldown_category_weights="date_spoken_en=1000",
    )
    source = Recorded(config)
    assert len(train_in_group(ONE_PROCESS, config, TINY, False, source)) == 6
    assert source.cooling == [False, False, False, False, True, True]
    plain, cooled = source.train_batch(4), source.train_batch(4, cooling=True)
    assert sum(e.category == "date_spoken_en" for e in cooled) > 14 > sum(e.category == "date_spoken_en" for e in plain)
    assert source.cooldown_weights == {"date_spoken_en": 1000.0}
    with pytest.raises(DataError, match="--cooldown-category-weights applies to the bundled generator"):
        PairSource(small_run(tmp_path, cooldown_steps=2, cooldown_category_weights="plain_es=2"))
    with pytest.raises(DataError, match="needs a cool-down"):
        PairSource(dataclasses.replace(config, cooldown_steps=0))
    with pytest.raises(DataError, match="unknown category"):
        PairSource(dataclasses.replace(config, cooldown_category_weights="bogus=1"))
    with pytest.raises(DataError, match="shapes the frequent-word drills"):
        PairSource(dataclasses.replace(config, frequent_word_punctuated_share=0.25))
    with pytest.raises(DataError, match="--frequent-word-opening-share shapes the frequent-word drills"):
        PairSource(dataclasses.replace(config, frequent_word_opening_share=0.25))


def _make_recipe(target: str) -> tuple[str, list[TrainConfig]]:
    """`make -n TARGET`'s commands, and the TrainConfig of each model.train line in it."""
    import shlex
    import shutil
    import subprocess

    from model.train import parse_args, parse_category_weights

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parents[3]
    recipe = subprocess.run(["make", "-n", "-s", target], cwd=root, capture_output=True, text=True, check=True)
    configs = []
    for line in recipe.stdout.splitlines():
        if "-m model.train" in line:
            words = shlex.split(line)
            config, _ = parse_args(words[words.index("model.train") + 1 :])
            parse_category_weights(config.category_weights)  # names the generator knows
            configs.append(config)
    return recipe.stdout, configs


def test_the_make_train_recipe_parses() -> None:
    """`make train` (the bundled model's recipe): a run from scratch within a time budget, then a continuation
    from it, also within one, writing runs/normalize, then its evaluation."""
    commands, stages = _make_recipe("train")
    assert len(stages) == 2
    base, continuation = stages
    assert base.init_from is None and not base.resume and base.out == "runs/normalize-base"
    assert base.schedule == "constant" and base.leap_day_minimal_pairs and base.time_budget is not None
    assert continuation.init_from == base.out and continuation.out == "runs/normalize"
    assert continuation.time_budget is not None and continuation.steps == 3000
    assert continuation.frequent_word_drill_share > 0 and continuation.character_drill_share > 0
    # Real words around expressions from the first run on; rare scripts' characters only in the continuation.
    assert 0 < base.frequent_word_drill_share < continuation.frequent_word_drill_share
    assert base.character_drill_share == base.frequent_word_punctuated_share == 0
    assert continuation.frequent_word_punctuated_share > 0
    assert "-m model.evaluate --checkpoint runs/normalize" in commands


def test_the_six_stage_recipe_parses() -> None:
    """Every stage of `make train-six-stages` (the bundled model's recipe until 2026-12-03) is a valid
    model.train command line."""
    _, outs = _make_recipe("train-six-stages")
    assert len(outs) == 6
    assert outs[1].out == outs[0].out  # stage 2 resumes stage 1; each later stage starts from the one before
    assert [stage.init_from for stage in outs[2:]] == [stage.out for stage in outs[1:-1]]
    assert outs[-1].out == "runs/normalize"


def test_the_single_run_recipe_parses() -> None:
    """`make train-single` is one valid model.train command line from scratch, then its evaluation."""
    from model.train import parse_category_weights

    commands, configs = _make_recipe("train-single")
    assert len(configs) == 1
    config = configs[0]
    weights = parse_category_weights(config.category_weights)
    assert weights["short_es"] == 4 and weights["date_spoken_es"] == 1.5  # a name given twice: the later wins
    assert config.init_from is None and not config.resume
    assert config.out == "runs/normalize-single"
    assert f"-m model.evaluate --checkpoint {config.out}" in commands


def test_a_time_budget_ends_the_run_on_its_planned_step(tmp_path: Path) -> None:
    """Far more --steps than fit in 4 seconds: the run stops when its budget is spent, its cool-down ending
    on the last step, and the checkpoint records how many steps it planned and took."""
    config = small_run(tmp_path, steps=1_000_000, warmup_steps=10, cooldown_steps=20, time_budget=4 / 60)
    losses = train(config, TINY, progress=False)
    metadata = load_checkpoint(config.out).metadata
    assert 20 < len(losses) < 1_000_000
    assert metadata["step"] == metadata["planned_steps"] == len(losses)
    assert metadata["train"]["time_budget"] == pytest.approx(4 / 60)


def test_time_budget_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_pairs(tmp_path / "pairs.tsv", PAIRS)
    base = ["--data", str(data), "--out", str(tmp_path / "run")]
    assert main([*base, "--time-budget", "0"]) == 2
    assert "--time-budget must be a positive number of minutes" in capsys.readouterr().err
    assert main([*base, "--time-budget", "5", "--resume"]) == 2
    assert "--time-budget cannot resume" in capsys.readouterr().err
