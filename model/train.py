"""`python -m model.train`: train the transformer on the bundled normalization task or on your own
pairs (`--data pairs.tsv`), with any of the three tasks. Seeded and deterministic: batch k and its
dropout depend only on (seed, k), so a resumed run reproduces the same losses.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from model.case_folding import fold_title_case
from model.checkpoint import TOKENIZER, CheckpointError, load_checkpoint, restore_optimizer, save_checkpoint
from model.config import ModelConfig
from model.data import DataError, Example
from model.decoding import greedy_decode
from model.drills import CopyDrills
from model.parallel import ONE_PROCESS, WorkerGroup, run_workers
from model.precision import PRECISIONS, resolve_precision, step_precision
from model.step_plan import SCHEDULES, StepPlan
from model.step_plan import learning_rate_factor as learning_rate_factor
from model.tasks import TASKS, TokenPair, make_pairs
from model.tokenizer import Tokenizer, train_tokenizer
from model.train_config import TrainConfig as TrainConfig
from model.train_drills import mix_in_drills
from model.train_source import PairSource as PairSource
from model.train_source import parse_category_weights as parse_category_weights
from model.train_source import stable_bucket as stable_bucket
from model.transformer import Transformer
from model.words import forbidden_words

CHOICES = {"task": TASKS, "precision": PRECISIONS, "schedule": SCHEDULES}  # flags taking one of a list


def encode_pairs(
    tokenizer: Tokenizer, examples: Sequence[Example], config: TrainConfig, step: int, *, drop_too_long: bool = False
) -> list[TokenPair]:
    """Token pairs for training step `step`, or for validation when `step` is negative (never noised).

    An example longer than --max-length is an error in a user's file, but the generator's paragraphs
    are sized in characters, not tokens: with `drop_too_long` the few that do not fit are left out."""
    if config.case_folding:
        examples = [
            dataclasses.replace(e, source=fold_title_case(e.source), target=fold_title_case(e.target)) for e in examples
        ]
    encoded = [(tokenizer.encode(e.source), tokenizer.encode(e.target)) for e in examples]
    if step >= 0 and config.segmentation_noise > 0:
        rng = random.Random(f"segmentation:{config.seed}:{step}")
        noise = config.segmentation_noise
        encoded = [(tokenizer.split_tokens(s, rng, noise), tokenizer.split_tokens(t, rng, noise)) for s, t in encoded]
    pairs = make_pairs(config.task, encoded, seed=config.seed * 31 + step, mask_id=tokenizer.mask_id)
    fitting = []
    for pair, example in zip(pairs, examples, strict=True):
        longest = max(len(pair.source), len(pair.target)) + 1
        if longest <= config.max_length:
            fitting.append(pair)
        elif not drop_too_long:
            raise DataError(
                f"example {example.source[:60]!r} is {longest} tokens long, over --max-length {config.max_length}"
            )
    return fitting


def collate(pairs: Sequence[TokenPair], tokenizer: Tokenizer) -> dict[str, torch.Tensor]:
    """Right-padded tensors: src = source + EOS; tgt_in = BOS + target; tgt_out = target + EOS."""
    pad = tokenizer.pad_id
    sources = [p.source + [tokenizer.eos_id] for p in pairs]
    inputs = [[tokenizer.bos_id] + p.target for p in pairs]
    outputs = [p.target + [tokenizer.eos_id] for p in pairs]

    def pad_rows(rows: list[list[int]]) -> torch.Tensor:
        width = max(len(r) for r in rows)
        return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)

    src, tgt_in, tgt_out = pad_rows(sources), pad_rows(inputs), pad_rows(outputs)
    return {"src": src, "src_mask": src != pad, "tgt": tgt_in, "tgt_mask": tgt_in != pad, "labels": tgt_out}


def batch_loss(
    model: Transformer, batch: dict[str, torch.Tensor], label_smoothing: float, pad_id: int, reduction: str = "mean"
) -> torch.Tensor:
    """Cross-entropy over the batch's real target tokens: their mean, or with reduction="sum" their sum."""
    logits = model(batch["src"], batch["tgt"], batch["src_mask"], batch["tgt_mask"])
    return F.cross_entropy(
        logits.flatten(0, 1),
        batch["labels"].flatten(),
        ignore_index=pad_id,
        label_smoothing=label_smoothing,
        reduction=reduction,
    )


def step_loss(
    model: Transformer,
    pairs: Sequence[TokenPair],
    tokenizer: Tokenizer,
    config: TrainConfig,
    device: torch.device,
    group: WorkerGroup = ONE_PROCESS,
    planned_steps: int = 0,
) -> tuple[float, int, int]:
    """Back-propagate one step's loss, the mean over all target tokens of the batch, through
    length-sorted micro-batches: short sequences are no longer padded to the longest one, which
    on a CPU halves the work of a step while giving the same gradient as one full batch. With
    several workers each takes its share of the micro-batches and the gradients are summed.

    `planned_steps`: the leader's plan of the run's steps (the others give 0), summed with the gradients
    so that every worker gets it in the same collective.
    Returns the loss, the number of real (non-pad) tokens and the agreed plan."""
    ordered = sorted(pairs, key=lambda p: (len(p.source) + len(p.target), p.source, p.target))
    target_tokens = sum(len(p.target) + 1 for p in ordered)  # + EOS
    total_loss, real_tokens = 0.0, 0
    precision = resolve_precision(config.precision, device)
    for start in group.own_share(range(0, len(ordered), config.micro_batch_size)):
        batch = to_device(collate(ordered[start : start + config.micro_batch_size], tokenizer), device)
        with step_precision(precision, device):
            loss = batch_loss(model, batch, config.label_smoothing, tokenizer.pad_id, reduction="sum") / target_tokens
        loss.backward()
        total_loss += loss.item()
        real_tokens += int(batch["src_mask"].sum() + batch["tgt_mask"].sum())
    total_loss, summed_tokens, plan = group.sum_gradients(model, total_loss, real_tokens, planned_steps)
    return total_loss, int(summed_tokens), round(plan)


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device) for k, v in batch.items()}


@torch.no_grad()
def validate(
    model: Transformer,
    tokenizer: Tokenizer,
    examples: list[Example],
    config: TrainConfig,
    device: torch.device,
) -> dict[str, float]:
    model.eval()
    pairs = encode_pairs(tokenizer, examples, config, step=-1, drop_too_long=config.data is None)
    losses = []
    for start in range(0, len(pairs), 64):
        batch = to_device(collate(pairs[start : start + 64], tokenizer), device)
        losses.append(float(batch_loss(model, batch, 0.0, tokenizer.pad_id)))
    exact = 0
    cpu_model = model.to("cpu")
    for start in range(0, len(pairs), 64):
        chunk = pairs[start : start + 64]
        hypotheses = greedy_decode(
            cpu_model, [p.source + [tokenizer.eos_id] for p in chunk], max_new_tokens=config.max_length
        )
        exact += sum(list(h.tokens) == p.target for h, p in zip(hypotheses, chunk, strict=True))
    model.to(device).train()
    return {"valid_loss": sum(losses) / len(losses), "valid_exact_match": exact / len(pairs)}


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def build_tokenizer(config: TrainConfig, source: PairSource, out: Path) -> Tokenizer:
    path = out / TOKENIZER
    if config.resume and path.exists():
        return Tokenizer.from_file(path)
    if config.init_from is not None:
        initial = Path(config.init_from) / TOKENIZER
        if not initial.is_file():
            raise DataError(f"--init-from: {initial} is missing")
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(initial, path)
        return Tokenizer.from_file(path)
    raw = train_tokenizer(source.tokenizer_corpus(), vocab_size=config.vocab_size)
    out.mkdir(parents=True, exist_ok=True)
    raw.save(str(path))
    return Tokenizer.from_file(path)


def train(config: TrainConfig, model_config: ModelConfig, *, progress: bool = True) -> list[float]:
    """Train and checkpoint into config.out. Returns the loss of every step run."""
    if config.task not in TASKS:
        raise ValueError(f"unknown task {config.task!r}; choose one of {TASKS}")
    if config.workers < 1:
        raise DataError(f"--workers must be at least 1, got {config.workers}")
    if config.time_budget is not None and not config.time_budget > 0:
        raise DataError(f"--time-budget must be a positive number of minutes, got {config.time_budget}")
    if config.time_budget is not None and config.resume:
        raise DataError(
            "--time-budget cannot resume: its steps depend on the pace of the run that was stopped; resume with "
            "--steps set to the checkpoint's planned_steps instead"
        )
    if config.workers == 1:
        return train_in_group(ONE_PROCESS, config, model_config, progress)
    if pick_device(config.device).type != "cpu":
        raise DataError("--workers shares a step between CPU processes; on a GPU train with one (--workers 1)")
    source = PairSource(config)  # read and checked once: the workers get it, not the file
    build_tokenizer(config, source, Path(config.out))  # once: workers building their own would race on its file
    return run_workers(train_in_group, config.workers, config, model_config, progress, source, True)


def train_in_group(
    workers: WorkerGroup,
    config: TrainConfig,
    model_config: ModelConfig,
    progress: bool,
    source: PairSource | None = None,
    tokenizer_built: bool = False,
) -> list[float]:
    """The training loop of one worker (the only one without --workers); the leader validates and checkpoints.

    With several workers, train() has built the tokenizer and source already (tokenizer_built): each only reads."""
    torch.use_deterministic_algorithms(True)
    if config.threads:
        torch.set_num_threads(config.threads)
    out = Path(config.out)
    source = source or PairSource(config)  # reads and checks the whole TSV before anything trains
    tokenizer = Tokenizer.from_file(out / TOKENIZER) if tokenizer_built else build_tokenizer(config, source, out)
    device = pick_device(config.device)
    config = dataclasses.replace(config, precision=resolve_precision(config.precision, device))  # as checkpointed
    start_step = 0
    history: list[dict[str, float]] = []
    if config.resume and (out / "config.json").exists():
        checkpoint = load_checkpoint(out)
        model, model_config = checkpoint.model, checkpoint.config
        start_step = int(checkpoint.metadata["step"])
        history = list(checkpoint.metadata.get("history", []))
    elif config.init_from is not None:
        initial = load_checkpoint(config.init_from)
        model, model_config = initial.model, initial.config
        if model_config.max_positions < config.max_length + 1:
            raise DataError(f"--init-from: its model holds {model_config.max_positions} positions, under --max-length")
    else:
        model_config = dataclasses.replace(
            model_config,
            vocab_size=tokenizer.vocab_size,
            pad_id=tokenizer.pad_id,
            bos_id=tokenizer.bos_id,
            eos_id=tokenizer.eos_id,
            max_positions=max(model_config.max_positions, config.max_length + 1),
        )
        torch.manual_seed(config.seed)
        model = Transformer(model_config)
    model.to(device).train()
    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=config.learning_rate,
        betas=(0.9, 0.98),
        eps=1e-9,
        weight_decay=config.weight_decay,
    )
    if start_step:
        restore_optimizer(out, model, optimizer)
    validation_examples = source.validation()
    drills = CopyDrills(tokenizer, forbidden=forbidden_words()) if config.copy_drill_share > 0 else None
    losses: list[float] = []
    budget = None if config.time_budget is None else config.time_budget * 60
    plan = StepPlan(
        max_steps=config.steps, cooldown=config.cooldown_steps, budget_seconds=budget, schedule=config.schedule
    )
    stop_at = config.steps if config.stop_after is None else min(config.steps, config.stop_after)
    bar = tqdm(
        range(start_step, stop_at),
        initial=start_step,
        total=config.steps,
        disable=not (progress and workers.is_leader),
        file=sys.stderr,
        dynamic_ncols=True,
    )
    window_tokens, window_start = 0, time.perf_counter()
    run_start = window_start
    validation_seconds = 0.0  # the last validation's: the run ends with one, which its budget must hold
    for step in bar:
        torch.manual_seed(config.seed * 1_000_003 + step)  # dropout depends on (seed, step) alone
        examples = source.train_batch(step, cooling=plan.cools(step + 1))
        examples = mix_in_drills(examples, config, step, drills)
        pairs = encode_pairs(tokenizer, examples, config, step, drop_too_long=config.data is None)
        optimizer.zero_grad(set_to_none=True)
        run_seconds = time.perf_counter() - run_start
        proposal = plan.propose(step - start_step, run_seconds, reserve=validation_seconds) if workers.is_leader else 0
        loss, real_tokens, agreed = step_loss(model, pairs, tokenizer, config, device, workers, proposal)
        plan.agree(agreed, step + 1)
        if plan.total != bar.total:
            bar.total = plan.total
            bar.refresh()
        for group in optimizer.param_groups:
            group["lr"] = config.learning_rate * plan.factor(step + 1, config.warmup_steps)
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_norm)
        optimizer.step()
        losses.append(loss)
        window_tokens += real_tokens
        elapsed = time.perf_counter() - window_start
        bar.set_postfix(loss=f"{losses[-1]:.3f}", tok_s=f"{window_tokens / max(elapsed, 1e-9):.0f}")
        done = step + 1
        last_step = min(stop_at, plan.total)  # the plan may still grow until the cool-down starts
        if workers.is_leader and (done % config.valid_every == 0 or done == plan.total):
            validation_start = time.perf_counter()
            with workers.every_core():  # the other workers wait for the leader meanwhile
                scores = validate(model, tokenizer, validation_examples, config, device)
            validation_seconds = time.perf_counter() - validation_start
            history.append({"step": done, "train_loss": losses[-1], **scores})
            bar.write(json.dumps(history[-1]), file=sys.stderr)
            window_tokens, window_start = 0, time.perf_counter()
        if workers.is_leader and (done % config.checkpoint_every == 0 or done == last_step):
            save_checkpoint(
                out,
                model.to("cpu"),
                optimizer=optimizer,
                metadata={
                    "step": done,
                    "planned_steps": plan.total,
                    "train": dataclasses.asdict(config),
                    "history": history,
                },
            )
            model.to(device)
        if done >= last_step:
            break
    bar.close()
    return losses


def parse_args(argv: Sequence[str] | None = None) -> tuple[TrainConfig, ModelConfig]:
    parser = argparse.ArgumentParser(prog="python -m model.train", description=__doc__)
    for group, cls in (("training", TrainConfig), ("model", ModelConfig)):
        section = parser.add_argument_group(group)
        for f in dataclasses.fields(cls):
            if f.name in ("vocab_size", "pad_id", "bos_id", "eos_id") and cls is ModelConfig:
                continue  # taken from the tokenizer
            flag = "--" + f.name.replace("_", "-")
            text = f"{f.metadata['help']} (default: %(default)s)"  # every field has one: tests/unit/test_cli_help.py
            if f.type in ("bool", bool):
                section.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=text)
            elif f.name in CHOICES:
                choices = CHOICES[f.name]
                section.add_argument(flag, choices=choices, default=f.default, help=text)
            else:
                base_type = str(f.type).split("|")[0].strip()  # "int | None" parses as int
                kind = {"int": int, "float": float}.get(base_type, str)
                section.add_argument(flag, type=kind, default=f.default, help=text)
    args = vars(parser.parse_args(argv))
    train_names = {f.name for f in dataclasses.fields(TrainConfig)}
    model_names = {f.name for f in dataclasses.fields(ModelConfig)}
    return (
        TrainConfig(**{k: v for k, v in args.items() if k in train_names}),
        ModelConfig(**{k: v for k, v in args.items() if k in model_names}),
    )


def main(argv: Sequence[str] | None = None) -> int:
    train_config, model_config = parse_args(argv)
    try:
        train(train_config, model_config)
    except (DataError, CheckpointError) as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
