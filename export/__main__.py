"""`python -m export --checkpoint runs/normalize --out models/normalize/1`: write a model directory
(docs/model-directory.md). Exit 2 with one line on a bad checkpoint or target, 1 on failed parity.

Parity (ONNX Runtime against PyTorch on held-out inputs, greedy at every batch size and beam search)
takes minutes on a CPU and shows its progress; `--quick-parity` checks a few inputs for a trial run.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from collections.abc import Sequence
from typing import Any

import torch

from export.build import ParityError, build_model_directory
from export.config import ExportConfig
from model.checkpoint import CheckpointError

QUICK_PARITY_INPUTS, QUICK_BEAM_INPUTS = 20, 10


def parse_args(argv: Sequence[str] | None = None) -> tuple[ExportConfig, bool]:
    parser = argparse.ArgumentParser(
        prog="python -m export", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    for f in dataclasses.fields(ExportConfig):
        flag = "--" + f.name.replace("_", "-")
        text = f"{f.metadata['help']} (default: %(default)s)"  # every field has one: tests/unit/test_cli_help.py
        if isinstance(f.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=text)
        elif isinstance(f.default, tuple):
            parser.add_argument(flag, type=int, nargs="+", default=list(f.default), metavar="N", help=text)
        else:
            parser.add_argument(flag, type=type(f.default), default=f.default, help=text)
    parser.add_argument("--force", action="store_true", help="Replace an existing model directory.")
    parser.add_argument(
        "--quick-parity",
        action="store_true",
        help=f"a trial run: parity on {QUICK_PARITY_INPUTS} held-out inputs and {QUICK_BEAM_INPUTS} beam searches "
        "instead of --parity-inputs and --beam-inputs (seconds instead of minutes); the int8 check uses the "
        "same few inputs, so one miss drops int8. Ship exports with the full check.",
    )
    parser.add_argument(
        "--threads", type=int, default=0, help="torch threads; 0 = torch's default. (default: %(default)s)"
    )
    args = vars(parser.parse_args(argv))
    names = {f.name for f in dataclasses.fields(ExportConfig)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in args.items() if k in names}
    if args["quick_parity"]:
        values["parity_inputs"] = min(values["parity_inputs"], QUICK_PARITY_INPUTS)
        values["beam_inputs"] = min(values["beam_inputs"], QUICK_BEAM_INPUTS)
    if args["threads"]:
        torch.set_num_threads(args["threads"])
    return ExportConfig(**values), bool(args["force"])


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def main(argv: Sequence[str] | None = None) -> int:
    config, force = parse_args(argv)
    # WARNING for the libraries (the quantizer logs every node at INFO), INFO for our own progress.
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    logging.getLogger("export").setLevel(logging.INFO)
    try:
        if config.from_transformers:
            from export.hf import import_checkpoint  # the optional `hf` extra (transformers)

            result = import_checkpoint(config, replace=force)
        else:
            result = build_model_directory(config, replace=force)
    except (CheckpointError, FileExistsError, ValueError) as error:
        sys.stderr.write(f"error: {one_line(error)}\n")
        return 2
    except ParityError as error:
        sys.stderr.write(f"error: {one_line(error)}\n")
        return 1
    logging.getLogger(__name__).info(
        "wrote %s (variants: %s)", result.directory, ", ".join(result.manifest["variants"])
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
