"""`python -m model.evaluate`: exact match per category, chrF and BLEU (sacrebleu) of a checkpoint
on the held-out test split (or a TSV of pairs), with greedy or beam-search decoding.
Writes the scores to CHECKPOINT/evaluation.json, which the export copies into the manifest.
"""

from __future__ import annotations

import argparse
import calendar
import datetime as dt
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import sacrebleu
import torch

from model.case_folding import fold_title_case
from model.checkpoint import Checkpoint, load_checkpoint
from model.data import CATEGORIES, Example, generate_examples, read_pairs_tsv
from model.decoding import beam_search, greedy_decode
from model.expressions import date_source, impossible_date
from model.pairs import read_pairs_jsonl, write_pairs_jsonl
from model.sentences_rewritten import in_carrier
from model.tokenizer import Tokenizer

EVALUATION_FILE = "evaluation.json"


@dataclass(frozen=True)
class Prediction:
    example: Example
    output: str


def test_examples(per_category: int, seed: int, categories: Sequence[str] = CATEGORIES) -> list[Example]:
    """A held-out set with `per_category` examples of every category (or of `categories`), disjoint from training.

    Raises:
        ValueError: a category the generator does not have."""
    unknown = sorted(set(categories) - set(CATEGORIES))
    if unknown:
        raise ValueError(f"unknown categories {unknown}; the generator's are {list(CATEGORIES)}")
    wanted: dict[str, list[Example]] = defaultdict(list)
    attempt = 0
    while any(len(wanted[c]) < per_category for c in categories):
        for example in generate_examples(len(CATEGORIES) * per_category, seed=seed + attempt, split="test"):
            if example.category in categories and len(wanted[example.category]) < per_category:
                wanted[example.category].append(example)
        attempt += 1
        if attempt > 50 * len(CATEGORIES) // len(categories):
            raise RuntimeError(f"the generator does not produce every category: {dict(wanted)}")
    return [e for c in categories for e in wanted[c]]


def leap_day_probe(seed: int = 1) -> list[Example]:
    """29 February of every year from 1900 to 2099 spoken in words, bare, in Spanish and English: a date in a
    leap year ("2020-02-29"), no date in a common one ("29 de febrero de 2023"). Categories leap_es, leap_en,
    common_es, common_en. Not held out (training draws every leap day): it asks whether a model reads the
    year or only where the day stands (a bare 29 February was always a date in training before 783825c)."""
    rng = random.Random(seed)
    probe = []
    for year in range(1900, 2100):
        for lang in ("es", "en"):
            source, target = _spoken_29_february(year, lang, rng)
            probe.append(Example(source, target, f"{'leap' if calendar.isleap(year) else 'common'}_{lang}"))
    return probe


def _spoken_29_february(year: int, lang: str, rng: random.Random) -> tuple[str, str]:
    """29 February of `year` in words and as the normalizer writes it: a date in a leap year, none in a common one."""
    if calendar.isleap(year):
        day = dt.date(year, 2, 29)
        return date_source(day, lang, rng, spoken=True), day.isoformat()
    return impossible_date(year, 2, 29, lang, rng, with_year=True)


def leap_day_carrier_probe(seed: int = 1, per_year: int = 2) -> list[Example]:
    """29 February of every year spoken in words inside held-out carrier sentences (the test split's, as test set
    v8's date categories), `per_year` times a year: Spanish 1900-2099, English 2000-2099 (where training and the
    test split put English impossible dates). Common years are split by parity (common_en_even, common_en_odd, ...):
    odd years are common whatever the model reads, so an even common year is the case that asks for the year mod 4.
    Test set v8's English 29 Februaries of common years fall in one even year (2026): a model that decides by
    parity can score 95% there and write half of all even years' 29 Februaries as dates (the run of 2026-12-07)."""
    rng = random.Random(seed)
    probe = []
    for lang, first in (("es", 1900), ("en", 2000)):
        for year in range(first, 2100):
            parity = "even" if year % 2 == 0 else "odd"
            category = f"leap_{lang}" if calendar.isleap(year) else f"common_{lang}_{parity}"
            for _ in range(per_year):
                pair = _spoken_29_february(year, lang, rng)
                probe.append(Example(*in_carrier(rng, "test", f"date_{lang}", pair, "d"), category))
    return probe


def predict(
    checkpoint: Checkpoint,
    tokenizer: Tokenizer,
    examples: Sequence[Example],
    *,
    num_beams: int,
    batch_size: int = 64,
) -> list[Prediction]:
    model = checkpoint.model.eval()
    max_new_tokens = checkpoint.config.max_positions - 1
    sources = [tokenizer.encode(e.source) + [tokenizer.eos_id] for e in examples]
    outputs: list[list[int]] = []
    if num_beams > 1:
        outputs = [
            list(beam_search(model, s, num_beams=num_beams, max_new_tokens=max_new_tokens).tokens) for s in sources
        ]
    else:
        # Sorting by length keeps padding small; the order is restored below.
        order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
        decoded: dict[int, list[int]] = {}
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            for index, hypothesis in zip(
                chunk, greedy_decode(model, [sources[i] for i in chunk], max_new_tokens=max_new_tokens), strict=True
            ):
                decoded[index] = list(hypothesis.tokens)
        outputs = [decoded[i] for i in range(len(sources))]
    return [Prediction(e, tokenizer.decode(o)) for e, o in zip(examples, outputs, strict=True)]


def score(predictions: Sequence[Prediction]) -> dict[str, object]:
    by_category: dict[str, list[bool]] = defaultdict(list)
    for p in predictions:
        by_category[p.example.category].append(p.output == p.example.target)
    hypotheses = [p.output for p in predictions]
    references = [[p.example.target for p in predictions]]
    return {
        "exact_match": {c: sum(v) / len(v) for c, v in sorted(by_category.items())},
        "exact_match_overall": sum(p.output == p.example.target for p in predictions) / len(predictions),
        "examples_per_category": {c: len(v) for c, v in sorted(by_category.items())},
        "chrf": sacrebleu.corpus_chrf(hypotheses, references).score,
        "bleu": sacrebleu.corpus_bleu(hypotheses, references).score,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.evaluate", description=__doc__)
    parser.add_argument(
        "--checkpoint", default="runs/normalize", help="Checkpoint directory to evaluate. (default: %(default)s)"
    )
    parser.add_argument(
        "--data",
        metavar="FILE",
        help="A pairs.tsv (or .jsonl) to evaluate on instead of the generated test split. (default: generated)",
    )
    parser.add_argument(
        "--per-category", type=int, default=300, help="Generated test examples per category. (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=int, default=12345, help="Seed of the generated test split. (default: %(default)s)"
    )
    parser.add_argument(
        "--num-beams", type=int, default=1, help="Beam width; 1 = greedy decoding. (default: %(default)s)"
    )
    parser.add_argument(
        "--threads", type=int, default=0, help="torch threads; 0 = torch's default. (default: %(default)s)"
    )
    parser.add_argument(
        "--errors", type=int, default=5, help="Wrong outputs to show per category. (default: %(default)s)"
    )
    parser.add_argument("--no-write", action="store_true", help=f"Don't write {EVALUATION_FILE} into the checkpoint.")
    parser.add_argument(
        "--write-test-set",
        metavar="FILE.jsonl",
        help="Also write the test examples as JSON lines, for the service's evaluator. (default: not written)",
    )
    parser.add_argument(
        "--categories",
        metavar="A,B",
        help="Generate only these categories (e.g. 1,000 paragraph_mixed: a figure near 98%% needs more than 300 "
        "examples to tell models apart). (default: every category)",
    )
    parser.add_argument(
        "--no-evaluate",
        action="store_true",
        help="With --write-test-set: write the test examples and exit, evaluating nothing. (default: evaluate)",
    )
    parser.add_argument(
        "--write-leap-probe",
        metavar="FILE.jsonl",
        help="Write the leap-day probe (every year's spoken 29 February, bare; leap_day_probe) as JSON lines "
        "and exit; evaluate it with --data. (default: not written)",
    )
    parser.add_argument(
        "--write-leap-carrier-probe",
        metavar="FILE.jsonl",
        help="Write every year's spoken 29 February inside held-out carrier sentences, common years split by "
        "parity (leap_day_carrier_probe), as JSON lines and exit; evaluate it with --data. (default: not written)",
    )
    args = parser.parse_args(argv)
    if args.write_leap_probe or args.write_leap_carrier_probe:
        if args.write_leap_probe:
            write_pairs_jsonl(args.write_leap_probe, leap_day_probe())
        if args.write_leap_carrier_probe:
            write_pairs_jsonl(args.write_leap_carrier_probe, leap_day_carrier_probe())
        return 0
    if args.no_evaluate and not args.write_test_set:
        parser.error("--no-evaluate writes the test set: give --write-test-set FILE.jsonl")
    if args.categories and args.data:
        parser.error("--categories chooses what the generated test split holds; --data brings its own examples")
    if args.data:
        examples = read_pairs_jsonl(args.data) if args.data.endswith(".jsonl") else read_pairs_tsv(Path(args.data))
    else:
        try:
            named = [name.strip() for name in args.categories.split(",")] if args.categories else CATEGORIES
            categories = list(dict.fromkeys(named))  # each once, in the order given
            examples = test_examples(args.per_category, args.seed, categories)
        except ValueError as error:
            parser.error(str(error))
    if args.write_test_set:
        write_pairs_jsonl(args.write_test_set, examples)
    if args.no_evaluate:
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    checkpoint = load_checkpoint(args.checkpoint)
    tokenizer = Tokenizer.from_file(checkpoint.tokenizer_path)
    train = checkpoint.metadata.get("train")
    # A model trained on folded text is measured on folded text; the capitals are the service's to put back.
    case_folding = isinstance(train, dict) and bool(train.get("case_folding"))
    if case_folding:
        examples = [replace(e, source=fold_title_case(e.source), target=fold_title_case(e.target)) for e in examples]
    started = time.perf_counter()
    predictions = predict(checkpoint, tokenizer, examples, num_beams=args.num_beams)
    scores = score(predictions)
    scores.update(
        decoding="beam" if args.num_beams > 1 else "greedy",
        num_beams=args.num_beams,
        seconds=round(time.perf_counter() - started, 1),
        test_set=args.data
        or f"generated split=test seed={args.seed} per_category={args.per_category}"
        + (f" categories={args.categories}" if args.categories else ""),
        step=checkpoint.metadata.get("step"),
        case_folding=case_folding,
    )
    shown: dict[str, int] = defaultdict(int)
    for p in predictions:
        if p.output != p.example.target and shown[p.example.category] < args.errors:
            shown[p.example.category] += 1
            sys.stderr.write(
                f"[{p.example.category}] {p.example.source!r}\n  want {p.example.target!r}\n  got  {p.output!r}\n"
            )
    sys.stdout.write(json.dumps(scores, indent=2) + "\n")
    if not args.no_write and not args.data and not args.categories:  # evaluation.json is the whole test split's
        (checkpoint.directory / EVALUATION_FILE).write_text(json.dumps(scores, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
