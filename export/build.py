"""`build_model_directory`: checkpoint -> graphs -> parity -> variants -> manifest, written
atomically. The steps live in graphs.py, parity.py, quantize.py and repository.py. Imports model/.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tokenizers

from export.config import ExportConfig
from export.gqa import add_gqa_decoders
from export.graphs import check_graph, export_graphs
from export.heldout import HeldOut, held_out_pairs
from export.model_dir import FORMAT, graph_signature, staged_directory, tool_versions, write_manifest
from export.parity import OnnxSeq2Seq, ParityReport, check_parity, exact_match
from export.quantize import convert_fp16, quantize_int8
from export.text_rules import text_rules
from model.checkpoint import TOKENIZER, Checkpoint, CheckpointError, load_checkpoint
from model.tokenizer import SPECIAL_TOKENS

logger = logging.getLogger(__name__)

MIN_OPSET = 17
EVALUATION = "evaluation.json"
SPECIAL_NAMES = ("pad", "bos", "eos", "unk", "mask")  # in the order of SPECIAL_TOKENS


class ParityError(Exception):
    """The exported fp32 graphs do not reproduce the PyTorch model."""


@dataclass(frozen=True)
class BuildResult:
    directory: Path
    manifest: dict[str, Any]
    parity: ParityReport


def special_token_ids(checkpoint: Checkpoint) -> dict[str, int]:
    """The tokenizer's special ids, checked against the model config.

    Raises:
        CheckpointError: a special token is missing or disagrees with the config.
    """
    tokenizer = tokenizers.Tokenizer.from_file(str(checkpoint.tokenizer_path))
    ids: dict[str, int] = {}
    for name, token in zip(SPECIAL_NAMES, SPECIAL_TOKENS, strict=True):
        token_id = tokenizer.token_to_id(token)
        if token_id is None:
            raise CheckpointError(f"{checkpoint.tokenizer_path} has no {token} token")
        ids[name] = token_id
    c = checkpoint.config
    for name, configured in (("pad", c.pad_id), ("bos", c.bos_id), ("eos", c.eos_id)):
        if ids[name] != configured:
            raise CheckpointError(
                f"{checkpoint.tokenizer_path}: {name} id is {ids[name]} but config.json says {configured}"
            )
    return ids


def max_lengths(checkpoint: Checkpoint) -> tuple[int, int]:
    """(max_source_tokens, max_target_tokens), EOS included: training's limit, within the positions."""
    trained = int(checkpoint.metadata.get("train", {}).get("max_length", checkpoint.config.max_positions))
    # A target of n tokens feeds BOS + the first n-1 to the decoder: positions 0..n-1.
    limit = min(trained, checkpoint.config.max_positions)
    return limit, limit


def read_evaluation(directory: Path) -> dict[str, Any] | None:
    path = directory / EVALUATION
    if not path.exists():
        return None
    try:
        scores = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise CheckpointError(f"{path} is not valid JSON: {error}") from error
    if not isinstance(scores, dict):
        raise CheckpointError(f"{path} must hold a JSON object")
    return scores


def build_model_directory(config: ExportConfig, *, replace: bool = False) -> BuildResult:
    """Export a checkpoint into a model directory (docs/model-directory.md).

    Args:
        config: what to export where, and the parity tolerances.
        replace: overwrite an existing model directory.

    Returns:
        The directory, its manifest and the parity report.

    Raises:
        CheckpointError: the checkpoint is missing or inconsistent (nothing is written).
        FileExistsError: the target exists and `replace` is False (nothing is written).
        ValueError: the config asks for something impossible, e.g. an opset below 17.
        ParityError: the graphs failed parity (nothing is written).
    """
    if config.opset < MIN_OPSET:
        raise ValueError(f"opset {config.opset} is below the minimum {MIN_OPSET}")
    target = Path(config.out)
    checkpoint = load_checkpoint(config.checkpoint)
    specials = special_token_ids(checkpoint)
    evaluation = read_evaluation(checkpoint.directory)
    max_source, max_target = max_lengths(checkpoint)
    held_out = held_out_pairs(
        checkpoint.tokenizer_path,
        checkpoint.metadata,
        count=config.parity_inputs,
        split=config.split,
        seed=config.seed,
        max_source_tokens=max_source,
        max_target_tokens=max_target,
    )
    max_new_tokens = config.max_new_tokens or max_target
    with staged_directory(target, replace=replace) as staging:
        started = time.perf_counter()
        paths = export_graphs(checkpoint.model, staging, opset=config.opset)
        logger.info("exported and checked the fp32 graphs in %.1f s", time.perf_counter() - started)
        runner = OnnxSeq2Seq(paths.encoder, paths.decoder, checkpoint.config)
        started = time.perf_counter()
        report = check_parity(
            checkpoint.model, runner, held_out.sources, held_out.references, config, max_new_tokens=max_new_tokens
        )
        logger.info("parity in %.1f s: %s", time.perf_counter() - started, report.to_manifest())
        if not report.passed:
            raise ParityError("parity failed: " + "; ".join(report.failures))
        shutil.copyfile(checkpoint.tokenizer_path, staging / TOKENIZER)
        variants = {
            "fp32": {"encoder": paths.encoder.name, "decoder": paths.decoder.name, "device": "cpu", "checked": True}
        }
        if config.int8:
            variants.update(_int8_variant(staging, runner, checkpoint, held_out, config, max_new_tokens))
        if config.fp16:
            variants["fp16"] = _fp16_variant(staging)
        name, version = target.resolve().parent.name, target.resolve().name
        manifest = {
            "format": FORMAT,
            "name": name,
            "version": version,
            "config": checkpoint.config.to_dict(),
            "config_fingerprint": checkpoint.config.fingerprint(),
            "special_tokens": specials,
            "max_source_tokens": max_source,
            "max_target_tokens": max_target,
            **(text_rules(checkpoint.metadata) if config.text_rules else {}),
            "opset": config.opset,
            "graphs": {"encoder": graph_signature(paths.encoder), "decoder": graph_signature(paths.decoder)},
            "variants": variants,
            "default_variant": "fp32",
            "tools": tool_versions(),
            "parity": report.to_manifest(),
            "evaluation": evaluation,
            "checkpoint": {
                "step": checkpoint.metadata.get("step"),
                "task": checkpoint.metadata.get("train", {}).get("task", "seq2seq"),
                # a checkpoint written by `python -m model.average` names the runs it is the mean of
                **({"averaged_from": averaged} if (averaged := checkpoint.metadata.get("averaged_from")) else {}),
            },
        }
        write_manifest(staging, manifest)
        # Format 3's decoders beside each CPU variant's, checked against them (export/gqa.py).
        add_gqa_decoders(staging)
    return BuildResult(directory=target, manifest=json.loads((target / "manifest.json").read_text()), parity=report)


def _int8_variant(
    staging: Path,
    fp32: OnnxSeq2Seq,
    checkpoint: Checkpoint,
    held_out: HeldOut,
    config: ExportConfig,
    max_new_tokens: int,
) -> dict[str, dict[str, Any]]:
    """Quantize both graphs; keep them only if greedy exact match drops by at most the allowance."""
    encoder, decoder = staging / "encoder.int8.onnx", staging / "decoder.int8.onnx"
    quantize_int8(staging / "encoder.onnx", encoder)
    quantize_int8(staging / "decoder.onnx", decoder)
    check_graph(encoder)
    check_graph(decoder)
    int8 = OnnxSeq2Seq(encoder, decoder, checkpoint.config)
    baseline = exact_match(fp32, held_out.sources, held_out.references, max_new_tokens=max_new_tokens)
    quantized = exact_match(int8, held_out.sources, held_out.references, max_new_tokens=max_new_tokens)
    kept = baseline - quantized <= config.int8_max_exact_match_drop
    logger.info("int8 exact match %.4f vs fp32 %.4f: %s", quantized, baseline, "kept" if kept else "dropped")
    if not kept:
        encoder.unlink()
        decoder.unlink()
        return {}
    return {
        "int8": {
            "encoder": encoder.name,
            "decoder": decoder.name,
            "device": "cpu",
            "checked": True,
            "exact_match": quantized,
            "fp32_exact_match": baseline,
            "inputs": len(held_out.sources),
        }
    }


def _fp16_variant(staging: Path) -> dict[str, Any]:
    encoder, decoder = staging / "encoder.fp16.onnx", staging / "decoder.fp16.onnx"
    convert_fp16(staging / "encoder.onnx", encoder)
    convert_fp16(staging / "decoder.onnx", decoder)
    check_graph(encoder)
    check_graph(decoder)
    # No GPU here: the graphs pass the checker, but nothing has run them.
    return {"encoder": encoder.name, "decoder": decoder.name, "device": "cuda", "checked": False}
