"""How a training run is configured: every field is a `python -m model.train` flag (model/train.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TrainConfig:
    out: str = field(
        default="runs/normalize", metadata={"help": "Checkpoint directory to write (and to read with --resume)."}
    )
    task: str = field(
        default="seq2seq", metadata={"help": "What to learn: seq2seq (source to target pairs), denoise or prefix_lm."}
    )
    data: str | None = field(
        default=None,
        metadata={"help": "A TSV file of source<TAB>target lines; unset = the bundled normalization generator."},
    )
    steps: int = field(default=6000, metadata={"help": "Optimizer steps to train (with --time-budget: at most)."})
    time_budget: float | None = field(
        default=None,
        metadata={
            "help": "Minutes of training (validation and checkpoints included): the run takes as many steps as fit "
            "at its pace, its cool-down ending on the last one (model/step_plan.py); unset = exactly --steps."
        },
    )
    batch_size: int = field(default=64, metadata={"help": "Sequences per optimizer step."})
    micro_batch_size: int = field(
        default=16,
        metadata={"help": "Sequences per forward pass (gradient accumulation; the step's gradient is the same)."},
    )
    learning_rate: float = field(default=1e-3, metadata={"help": "Peak learning rate, reached at the end of warm-up."})
    warmup_steps: int = field(default=400, metadata={"help": "Steps of linear learning-rate warm-up."})
    cooldown_steps: int = field(
        default=0, metadata={"help": "The last steps, over which the learning rate falls linearly to zero."}
    )
    schedule: str = field(
        default="rsqrt",
        metadata={
            "help": "After warm-up: rsqrt (inverse square-root decay) or constant (the peak rate held until the "
            "cool-down: warm-up, stable, decay)."
        },
    )
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay."})
    label_smoothing: float = field(default=0.1, metadata={"help": "Label smoothing of the cross-entropy loss."})
    clip_norm: float = field(default=1.0, metadata={"help": "Gradient norm clipping threshold."})
    seed: int = field(default=0, metadata={"help": "Seed of the data order, initialization and dropout."})
    vocab_size: int = field(
        default=2000, metadata={"help": "Size of the byte-level BPE tokenizer trained for the run."}
    )
    tokenizer_corpus: int = field(default=60000, metadata={"help": "Examples the tokenizer is trained on."})
    segmentation_noise: float = field(
        default=0.0, metadata={"help": "Chance of undoing each BPE merge in training examples (BPE-dropout)."}
    )
    copy_drill_share: float = field(
        default=0.0, metadata={"help": "Share of each batch replaced by copy drills (model/drills.py)."}
    )
    copy_drill_run_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of the copy drills holding a word with one token two to four times in a row: a digit "
            "in a number, a letter doubled across pieces (model/drills.py)."
        },
    )
    leap_day_drill_share: float = field(
        default=0.0,
        metadata={"help": "Share of each batch replaced by 29 Februaries of leap and common years (model/drills.py)."},
    )
    frequent_word_drill_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of each batch replaced by sentences of frequent real words in date-like frames, most "
            "with an expression (model/frequent_text.py)."
        },
    )
    frequent_word_punctuated_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of the frequent-word sentences' expressions in brackets, quotes, a table's cell or "
            "before a comma, and a quarter of it of their other words (model/frequent_text.py)."
        },
    )
    frequent_word_markup_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of the marks around the frequent-word sentences' expressions and words that are HTML "
            "tags, and half of it of those texts inside an HTML block (model/frequent_text.py)."
        },
    )
    frequent_word_range_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of the frequent-word sentences' expressions that are two counts as a range or a choice "
            '("between fifteen and thirty people", "de tres a cuatro horas"; model/count_phrases.py).'
        },
    )
    frequent_word_unit_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of the frequent-word sentences' expressions that are a count before a unit of measure or "
            'money ("doscientos mililitros", "two hundred miles"; model/count_phrases.py).'
        },
    )
    frequent_word_opening_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of the frequent-word sentences with an expression that open with it, capitalized "
            "(model/frequent_text.py)."
        },
    )
    opening_count_drill_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of each batch replaced by texts whose second or third sentence opens with its count "
            "(model/opening_counts.py)."
        },
    )
    opening_count_line_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of the opening-count drills that are short lines of their own: a heading, a table's row, "
            "a line of dialogue (model/opening_counts.py)."
        },
    )
    character_drill_share: float = field(
        default=0.0,
        metadata={
            "help": "Share of each batch replaced by copies of characters drawn uniformly by UTF-8 lead byte "
            "(model/drills.py)."
        },
    )
    leap_day_minimal_pairs: bool = field(
        default=False,
        metadata={
            "help": "Draw the leap-day drills as minimal pairs: the same words and carrier with a leap year and "
            "with a common year one or two away."
        },
    )
    valid_every: int = field(default=500, metadata={"help": "Validate every this many steps."})
    valid_size: int = field(default=256, metadata={"help": "Validation examples."})
    checkpoint_every: int = field(default=500, metadata={"help": "Write a checkpoint every this many steps."})
    max_length: int = field(
        default=128, metadata={"help": "Tokens per side, EOS included; a longer example is an error."}
    )
    threads: int = field(default=0, metadata={"help": "torch threads; 0 = torch's default (1 with --workers)."})
    workers: int = field(
        default=1,
        metadata={
            "help": "CPU processes that share each step's micro-batches, their gradients summed (model/parallel.py); "
            "on a small model two one-thread workers beat one two-thread process."
        },
    )
    device: str = field(default="auto", metadata={"help": "auto (CUDA when present), cpu or cuda."})
    precision: str = field(
        default="fp32",
        metadata={
            "help": "fp32, bf16 (forward and backward under bf16 autocast, weights and optimizer in fp32) or auto: "
            "bf16 where the CPU multiplies bf16 natively (avx512_bf16, amx_bf16) or on CUDA, else fp32 "
            "(model/precision.py)."
        },
    )
    resume: bool = field(default=False, metadata={"help": "Continue from the checkpoint in --out."})
    init_from: str | None = field(
        default=None,
        metadata={
            "help": "Start a new run (fresh optimizer, step 0, its own schedule) from this checkpoint's weights "
            "and tokenizer, e.g. one python -m export.recover rebuilt; --resume in --out takes precedence."
        },
    )
    category_weights: str | None = field(
        default=None,
        metadata={
            "help": "Bundled generator only: category=weight pairs, comma-separated, replacing those categories' "
            "TRAIN_CATEGORY_WEIGHTS (model/data.py) for this run, e.g. sentence_multiple_en=5,paragraph_mixed=4."
        },
    )
    cooldown_category_weights: str | None = field(
        default=None,
        metadata={
            "help": "Bundled generator only: category=weight pairs that replace those categories' weights (after "
            "--category-weights) from the step the cool-down starts: the weak categories drawn more while the rate "
            "anneals, as a fine-tuning run would, without its warm-up or optimizer restart."
        },
    )
    case_folding: bool = field(
        default=False,
        metadata={
            "help": "Train on every example as the service reads it for a model directory that declares "
            "case_folding, as python -m export writes for the bundled task: title-case words lowered, English "
            'month and weekday names and "I" kept (model.case_folding.fold_title_case).'
        },
    )
    stop_after: int | None = field(
        default=None,
        metadata={"help": "Stop (with a checkpoint) after this step; unset = run all --steps (tests of resume)."},
    )
