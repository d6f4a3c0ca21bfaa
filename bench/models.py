"""The benchmarks' models: the bundled model directory, and a base-size random-weight model
(Vaswani et al.'s "base": d_model 512, 8 heads, 6 + 6 layers, ffn 2048, vocab 16000) exported into
a model directory of its own, with CTranslate2 conversions of both. Built once, cached under runs/bench/.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import tokenizers
import torch
from tokenizers import models, pre_tokenizers

from bench.ct2 import convert, vocabulary_of
from export.gqa import add_gqa_decoders, made_by_this_surgery
from export.graphs import check_graph, export_graphs
from export.model_dir import FORMAT, graph_signature, staged_directory, tool_versions, write_manifest
from export.quantize import convert_fp16, quantize_int8
from model.checkpoint import load_checkpoint
from model.config import ModelConfig
from model.tokenizer import SPECIAL_TOKENS
from model.transformer import Transformer

logger = logging.getLogger(__name__)

CACHE = Path("runs/bench")
BASE_CONFIG = ModelConfig(
    vocab_size=16000,
    d_model=512,
    n_heads=8,
    n_encoder_layers=6,
    n_decoder_layers=6,
    d_ff=2048,
    dropout=0.0,
    max_positions=256,
)
BASE_SOURCE_TOKENS = 24  # EOS included
BASE_NEW_TOKENS = 24  # exactly: the model cannot emit EOS (see base_model)


@dataclass(frozen=True)
class BenchModel:
    name: str
    model_dir: Path  # atento model directory (fp32 + int8 variants)
    ct2_dirs: dict[str, Path]  # compute type -> CTranslate2 model directory
    vocabulary: list[str]  # token string by id, for CTranslate2
    torch_model: Transformer


def base_model(seed: int = 0) -> Transformer:
    """The base-size model with random (Xavier) weights, and EOS's embedding row zeroed.

    Embeddings are shared with the output projection (no bias), so the EOS logit is exactly 0 while
    the best of the other 15999 logits is positive in practice (checked at run time by the benchmark):
    every engine generates exactly BASE_NEW_TOKENS tokens without a bench-only path.
    """
    torch.manual_seed(seed)
    model = Transformer(BASE_CONFIG).eval()
    with torch.no_grad():
        model.embedding.weight[BASE_CONFIG.eos_id] = 0.0
    return model


def word_tokenizer(vocab_size: int) -> tokenizers.Tokenizer:
    """A whitespace word-level tokenizer over "w5" ... "w{vocab_size-1}" after the special tokens."""
    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    vocab.update({f"w{i}": i for i in range(len(SPECIAL_TOKENS), vocab_size)})
    tok = tokenizers.Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tok


def base_sources(count: int, *, seed: int = 0) -> list[str]:
    """`count` texts of BASE_SOURCE_TOKENS - 1 random words (the engine appends EOS)."""
    rng = random.Random(seed)
    low = len(SPECIAL_TOKENS)
    return [
        " ".join(f"w{rng.randrange(low, BASE_CONFIG.vocab_size)}" for _ in range(BASE_SOURCE_TOKENS - 1))
        for _ in range(count)
    ]


def write_model_directory(model: Transformer, tokenizer_json: Path, target: Path, *, name: str) -> None:
    """An atento model directory (fp32 + int8, no parity run: the random model has no reference
    outputs to keep; the benchmark compares the engines' outputs instead)."""
    c = model.config
    with staged_directory(target, replace=True) as staging:
        paths = export_graphs(model, staging, opset=18)
        quantize_int8(paths.encoder, staging / "encoder.int8.onnx")
        quantize_int8(paths.decoder, staging / "decoder.int8.onnx")
        check_graph(staging / "encoder.int8.onnx")
        check_graph(staging / "decoder.int8.onnx")
        shutil.copyfile(tokenizer_json, staging / "tokenizer.json")
        manifest = {
            "format": FORMAT,
            "name": name,
            "version": target.name,
            "config": c.to_dict(),
            "config_fingerprint": c.fingerprint(),
            "special_tokens": {n: i for n, i in zip(("pad", "bos", "eos", "unk", "mask"), range(5), strict=True)},
            "max_source_tokens": c.max_positions,
            "max_target_tokens": c.max_positions,
            "opset": 18,
            "graphs": {"encoder": graph_signature(paths.encoder), "decoder": graph_signature(paths.decoder)},
            "variants": {
                "fp32": {"encoder": "encoder.onnx", "decoder": "decoder.onnx", "device": "cpu", "checked": False},
                "int8": {
                    "encoder": "encoder.int8.onnx",
                    "decoder": "decoder.int8.onnx",
                    "device": "cpu",
                    "checked": False,
                },
            },
            "default_variant": "fp32",
            "tools": tool_versions(),
            "parity": None,
            "evaluation": None,
            "checkpoint": None,
        }
        write_manifest(staging, manifest)
        add_gqa_decoders(staging)


def _ct2_dirs(model: Transformer, vocabulary: list[str], root: Path) -> dict[str, Path]:
    dirs = {}
    for compute_type in ("float32", "int8"):
        out = root / f"ct2-{compute_type}"
        if not (out / "model.bin").exists():
            logger.info("converting %s to CTranslate2 %s", root.name, compute_type)
            convert(model, vocabulary, out, quantization=compute_type)
        dirs[compute_type] = out
    return dirs


def load_base_model(cache: Path = CACHE) -> BenchModel:
    """The base-size random model, exported (minutes, once) and converted; cached by config fingerprint."""
    model = base_model()
    root = cache / f"base-{BASE_CONFIG.fingerprint()}"
    model_dir = root / "1"
    manifest = model_dir / "manifest.json"
    if not manifest.exists() or json.loads(manifest.read_text()).get("format") != FORMAT:
        logger.info("exporting the base-size model to %s (once per model directory format)", model_dir)
        root.mkdir(parents=True, exist_ok=True)
        word_tokenizer(BASE_CONFIG.vocab_size).save(str(root / "tokenizer.json"))
        write_model_directory(model, root / "tokenizer.json", model_dir, name="base")
    elif not _current_gqa_decoders(model_dir):
        logger.info("adding decoder format 3 to %s", model_dir)  # exported before it (or its latest surgery) existed
        add_gqa_decoders(model_dir)
    vocabulary = vocabulary_of(model_dir / "tokenizer.json", BASE_CONFIG.vocab_size)
    return BenchModel("base", model_dir, _ct2_dirs(model, vocabulary, root), vocabulary, model)


def load_bundled_model(model_dir: Path, checkpoint: Path, cache: Path = CACHE) -> BenchModel:
    """The bundled model directory, its checkpoint (the same weights) and its CTranslate2 conversions.

    Raises:
        ValueError: the checkpoint's config fingerprint differs from the model directory's.
    """
    manifest = json.loads((model_dir / "manifest.json").read_text())
    loaded = load_checkpoint(checkpoint)
    if loaded.config.fingerprint() != manifest["config_fingerprint"]:
        raise ValueError(f"{checkpoint} is not the checkpoint of {model_dir} (config fingerprints differ)")
    vocabulary = vocabulary_of(model_dir / "tokenizer.json", loaded.config.vocab_size)
    key = manifest["files"]["decoder.onnx"][:12]  # a new export gets new conversions
    root = cache / f"{manifest['name']}-{manifest['version']}-{key}"
    return BenchModel(manifest["name"], model_dir, _ct2_dirs(loaded.model, vocabulary, root), vocabulary, loaded.model)


def ensure_fp16(model_dir: Path) -> None:
    """Add the fp16 (GPU) variant to a model directory that lacks it, rewriting its manifest."""
    manifest = json.loads((model_dir / "manifest.json").read_text())
    if "fp16" in manifest["variants"]:
        return
    for role in ("encoder", "decoder"):
        convert_fp16(model_dir / f"{role}.onnx", model_dir / f"{role}.fp16.onnx")
    manifest["variants"]["fp16"] = {
        "encoder": "encoder.fp16.onnx",
        "decoder": "decoder.fp16.onnx",
        "device": "cuda",
        "checked": False,
    }
    manifest.pop("files", None)
    write_manifest(model_dir, manifest)


def _current_gqa_decoders(model_dir: Path) -> bool:
    variants = json.loads((model_dir / "manifest.json").read_text())["variants"].values()
    names = [files.get("decoder_gqa") for files in variants if files.get("device", "cpu") == "cpu"]
    return all(name is not None and made_by_this_surgery(model_dir / name) for name in names)
