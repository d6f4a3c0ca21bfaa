"""Load and verify a model directory (docs/model-directory.md): manifest, sha256 of every file, graph I/O.

Pure Python: the runner passes the loaded graphs' signatures to `check_graph_signature`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.engine.case_folding import CaseFolding
from service.engine.edit_guard import EditGuard
from service.engine.errors import ModelLoadError
from service.engine.segmentation import SegmentationSpec
from service.engine.variant_choice import choose_variant

MANIFEST = "manifest.json"
FORMAT = "atento-model/2"
TOKENIZER = "tokenizer.json"

# The tensor vocabulary both graphs must expose (names equal the PyTorch argument names).
ENCODER_INPUTS = ("src", "src_mask")
ENCODER_OUTPUTS = ("memory", "cross_keys", "cross_values", "encoder_attention")
CACHE_INPUTS = ("past_keys", "past_values", "cross_keys", "cross_values")  # the decoder's, one per layer
DECODER_OUTPUTS = ("logits", "new_keys", "new_values", "decoder_attention", "cross_attention")
# format 3's outputs, one per layer: the past and cross buffers, written in place
GQA_PRESENTS = ("present_keys", "present_values", "present_cross_keys", "present_cross_values")


def gqa_decoder_names(layers: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Format 3's decoder inputs and outputs (export/gqa.py): format 2's inputs without the masks, with each
    row's length and the longest total, of the cache and of the source; logits and each layer's present
    buffers (the cache's and the source's keys and values)."""
    inputs = (
        "tgt",
        "tgt_positions",
        *(f"{name}.{layer}" for name in CACHE_INPUTS for layer in range(layers)),
        "seqlens_k",
        "total_sequence_length",
        "src_seqlens_k",
        "src_total_sequence_length",
    )
    outputs = ("logits", *(f"{name}.{layer}" for name in GQA_PRESENTS for layer in range(layers)))
    return inputs, outputs


def decoder_input_names(layers: int) -> tuple[str, ...]:
    """The decoder graph's inputs: "past_keys.0" .. "cross_values.{layers-1}" after the four others."""
    return (
        "tgt",
        "tgt_positions",
        "self_mask",
        "src_mask",
        *(f"{name}.{layer}" for name in CACHE_INPUTS for layer in range(layers)),
    )


Dim = int | str | None


@dataclass(frozen=True)
class SourceVocabulary:
    """manifest["source_vocabulary"]: the encoder's own vocabulary (its size and <unk>), declared beside a
    `target_tokenizer` when the decoder has another (Marian with separate vocabularies)."""

    size: int
    unk: int


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str  # "int64" | "float32" | "bool"
    shape: tuple[Dim, ...]  # int = fixed, str = symbolic


@dataclass(frozen=True)
class ModelFiles:
    """A verified model directory: where the files are and what the manifest says about them."""

    directory: Path
    name: str
    version: str
    variant: str
    variant_reason: str
    encoder: Path
    decoder: Path
    tokenizer: Path
    config: Mapping[str, Any]
    special_tokens: Mapping[str, int]
    max_source_tokens: int
    max_target_tokens: int
    graphs: Mapping[str, Mapping[str, tuple[TensorSpec, ...]]]  # "encoder"/"decoder"(/"decoder_gqa") -> inputs/outputs
    sha256: Mapping[str, str]
    manifest: Mapping[str, Any]
    edit_guard: EditGuard | None = None  # manifest["edit_guard"], when declared
    # manifest["target_tokenizer"]: the outputs' tokenizer when the decoder has a vocabulary of its own
    # (`tokenizer` is then the source side's); None: `tokenizer` serves both sides.
    target_tokenizer: Path | None = None
    source_vocabulary: SourceVocabulary | None = None  # declared with target_tokenizer
    segmentation: SegmentationSpec | None = None  # manifest["segmentation"], when declared
    case_folding: CaseFolding | None = None  # manifest["case_folding"], when declared
    # The variant's decoder graph format 3 (export/gqa.py): each layer's self- and cross-attention a
    # GroupQueryAttention reading each row's own length; None when the model directory has none.
    decoder_gqa: Path | None = None

    @property
    def n_layers(self) -> int:
        return int(self.config["n_decoder_layers"])

    @property
    def n_encoder_layers(self) -> int:
        return int(self.config["n_encoder_layers"])

    @property
    def n_heads(self) -> int:
        return int(self.config["n_heads"])

    @property
    def head_dim(self) -> int:
        # config["head_dim"] when heads * head_dim != d_model (imported T5s: mT5, Flan-T5); else d_model / heads.
        return int(self.config.get("head_dim", int(self.config["d_model"]) // self.n_heads))

    @property
    def vocab_size(self) -> int:
        return int(self.config["vocab_size"])


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _require(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in data:
        raise ModelLoadError(f"{where}: missing field {key!r}")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise ModelLoadError(f"{where}: field {key!r} has the wrong type ({type(value).__name__})")
    return value


def _tensor_specs(entries: Any, where: str) -> tuple[TensorSpec, ...]:
    if not isinstance(entries, list):
        raise ModelLoadError(f"{where} must be a list")
    specs = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise ModelLoadError(f"{where}: each entry must be an object")
        name = _require(entry, "name", str, where)
        dtype = _require(entry, "dtype", str, where)
        shape = _require(entry, "shape", list, where)
        specs.append(TensorSpec(name, dtype, tuple(shape)))
    return tuple(specs)


def load_model_directory(
    directory: Path | str,
    *,
    variant: str | None = None,
    on_cpu: bool = False,
    cpu_flags: frozenset[str] = frozenset(),
) -> ModelFiles:
    """Read the manifest, verify every listed file's sha256 and pick a variant's graphs.

    Args:
        directory: the model directory (models/NAME/VERSION).
        variant: a key of manifest["variants"]; None = manifest["default_variant"]; "auto" = its checked int8
            variant when the graphs run `on_cpu` and `cpu_flags` hold int8 dot-product instructions, else the
            default (variant_choice).

    Returns:
        The verified ModelFiles.

    Raises:
        ModelLoadError: naming the missing, corrupt or inconsistent file.
    """
    directory = Path(directory)
    manifest_path = directory / MANIFEST
    if not manifest_path.is_file():
        raise ModelLoadError(f"{manifest_path} is missing")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelLoadError(f"{manifest_path} is not valid JSON: {error}") from error
    where = str(manifest_path)
    if not isinstance(manifest, dict):
        raise ModelLoadError(f"{where}: must be a JSON object")
    if manifest.get("format") != FORMAT:
        raise ModelLoadError(
            f"{where}: format is {manifest.get('format')!r}, expected {FORMAT!r} "
            "(export the checkpoint again with `python -m export`)"
        )
    files = _require(manifest, "files", dict, where)
    for name, expected in files.items():
        path = directory / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ModelLoadError(f"{where}: file name {name!r} escapes the model directory")
        if not path.is_file():
            raise ModelLoadError(f"{path} is missing (listed in {MANIFEST})")
        actual = sha256_of(path)
        if actual != expected:
            raise ModelLoadError(f"{path} is corrupt: sha256 {actual} != {expected} in {MANIFEST}")
    variants = _require(manifest, "variants", dict, where)
    choice = choose_variant(
        variants,
        _require(manifest, "default_variant", str, where),
        asked=variant or None,
        on_cpu=on_cpu,
        flags=cpu_flags,
    )
    chosen = choice.name
    if chosen not in variants:
        raise ModelLoadError(f"{where}: no variant {chosen!r} (have {sorted(variants)})")
    graph_files = variants[chosen]
    paths: dict[str, Path] = {}
    for role in ("encoder", "decoder", "decoder_gqa"):
        if role == "decoder_gqa" and role not in graph_files:
            continue  # optional: format 3's decoder (export/gqa.py), for steps that need no attention weights
        name = _require(graph_files, role, str, f"{where} variants.{chosen}")
        if name not in files:
            raise ModelLoadError(f"{directory / name} has no sha256 in {MANIFEST}")
        paths[role] = directory / name
    if TOKENIZER not in files:
        raise ModelLoadError(f"{directory / TOKENIZER} has no sha256 in {MANIFEST}")
    target_tokenizer, source_vocabulary = _output_side(manifest, files, directory=directory, where=where)
    config = _require(manifest, "config", dict, where)
    for key in ("vocab_size", "d_model", "n_heads", "n_encoder_layers", "n_decoder_layers"):
        _require(config, key, int, f"{where} config")
    special = _require(manifest, "special_tokens", dict, where)
    for key in ("pad", "bos", "eos"):
        _require(special, key, int, f"{where} special_tokens")
    graphs_entry = _require(manifest, "graphs", dict, where)
    graphs: dict[str, dict[str, tuple[TensorSpec, ...]]] = {}
    for role in ("encoder", "decoder", "decoder_gqa"):
        if role == "decoder_gqa" and role not in paths:
            continue
        entry = _require(graphs_entry, role, dict, f"{where} graphs")
        graphs[role] = {
            kind: _tensor_specs(entry.get(kind), f"{where} graphs.{role}.{kind}") for kind in ("inputs", "outputs")
        }
    return ModelFiles(
        directory=directory,
        name=str(manifest.get("name", directory.parent.name)),
        version=str(manifest.get("version", directory.name)),
        variant=chosen,
        variant_reason=choice.reason,
        encoder=paths["encoder"],
        decoder=paths["decoder"],
        decoder_gqa=paths.get("decoder_gqa"),
        tokenizer=directory / TOKENIZER,
        target_tokenizer=target_tokenizer,
        source_vocabulary=source_vocabulary,
        config=config,
        special_tokens=special,
        max_source_tokens=_require(manifest, "max_source_tokens", int, where),
        max_target_tokens=_require(manifest, "max_target_tokens", int, where),
        graphs=graphs,
        sha256=dict(files),
        manifest=manifest,
        edit_guard=(
            None if manifest.get("edit_guard") is None else EditGuard.from_manifest(manifest["edit_guard"], where=where)
        ),
        segmentation=(
            None
            if manifest.get("segmentation") is None
            else SegmentationSpec.from_manifest(manifest["segmentation"], where=where)
        ),
        case_folding=(
            None
            if manifest.get("case_folding") is None
            else CaseFolding.from_manifest(manifest["case_folding"], where=where)
        ),
    )


def _output_side(
    manifest: Mapping[str, Any], files: Mapping[str, Any], *, directory: Path, where: str
) -> tuple[Path | None, SourceVocabulary | None]:
    """The optional `target_tokenizer` (a file listed in `files`) and the `source_vocabulary` that must come with it.

    Raises:
        ModelLoadError: naming the field that is malformed, or one without the other.
    """
    name, vocabulary = manifest.get("target_tokenizer"), manifest.get("source_vocabulary")
    if name is None and vocabulary is None:
        return None, None
    if not isinstance(name, str) or name not in files:
        raise ModelLoadError(f"{where}: target_tokenizer must name a file listed in 'files', got {name!r}")
    if not isinstance(vocabulary, dict):
        raise ModelLoadError(f"{where}: source_vocabulary ({{'size', 'unk'}}) must come with target_tokenizer")
    size = _require(vocabulary, "size", int, f"{where} source_vocabulary")
    unk = _require(vocabulary, "unk", int, f"{where} source_vocabulary")
    if not 0 <= unk < size:
        raise ModelLoadError(f"{where}: source_vocabulary.unk {unk} is outside its size {size}")
    return directory / name, SourceVocabulary(size=size, unk=unk)


def expected_fixed_dims(model: ModelFiles) -> dict[str, dict[int, int]]:
    """Dimensions the config fixes, per tensor name: axis -> size."""
    layers, heads, head_dim = model.n_layers, model.n_heads, model.head_dim
    stacked = {0: layers, 2: heads, 4: head_dim}
    per_layer = {1: heads, 3: head_dim}
    return {
        **{f"{name}.{layer}": per_layer for name in (*CACHE_INPUTS, *GQA_PRESENTS) for layer in range(layers)},
        "new_keys": stacked,
        "new_values": stacked,
        "cross_keys": stacked,  # the encoder's outputs
        "cross_values": stacked,
        "memory": {2: int(model.config["d_model"])},
        "logits": {2: model.vocab_size},
        "encoder_attention": {0: model.n_encoder_layers, 2: heads},
        "decoder_attention": {0: layers, 2: heads},
        "cross_attention": {0: layers, 2: heads},
    }


def check_graph_signature(model: ModelFiles, role: str, kind: str, actual: Sequence[TensorSpec], *, file: Path) -> None:
    """Compare a loaded graph's inputs or outputs with the manifest and the tensor vocabulary.

    Raises:
        ModelLoadError: naming `file` and the first mismatching tensor.
    """
    gqa_inputs, gqa_outputs = gqa_decoder_names(model.n_layers)
    required = {
        ("encoder", "inputs"): ENCODER_INPUTS,
        ("encoder", "outputs"): ENCODER_OUTPUTS,
        ("decoder", "inputs"): decoder_input_names(model.n_layers),
        ("decoder", "outputs"): DECODER_OUTPUTS,
        ("decoder_gqa", "inputs"): gqa_inputs,
        ("decoder_gqa", "outputs"): gqa_outputs,
    }[(role, kind)]
    by_name = {spec.name: spec for spec in actual}
    missing = [name for name in required if name not in by_name]
    if missing:
        raise ModelLoadError(f"{file}: graph {kind} lack {missing}")
    declared = {spec.name: spec for spec in model.graphs[role][kind]}
    if set(declared) != set(by_name):
        raise ModelLoadError(
            f"{file}: graph {kind} {sorted(by_name)} != {MANIFEST} graphs.{role}.{kind} {sorted(declared)}"
        )
    fixed = expected_fixed_dims(model)
    for name, spec in by_name.items():
        want = declared[name]
        if spec.dtype != want.dtype or len(spec.shape) != len(want.shape):
            raise ModelLoadError(
                f"{file}: {name} is {spec.dtype}{list(spec.shape)}; manifest: {want.dtype}{list(want.shape)}"
            )
        for axis, (got, expected) in enumerate(zip(spec.shape, want.shape, strict=True)):
            # Symbolic names may differ between exporters; fixed sizes must match exactly.
            if isinstance(expected, int) and got != expected:
                raise ModelLoadError(f"{file}: {name} axis {axis} is {got}, {MANIFEST} says {expected}")
        for axis, size in fixed.get(name, {}).items():
            if axis < len(spec.shape) and isinstance(spec.shape[axis], int) and spec.shape[axis] != size:
                raise ModelLoadError(f"{file}: {name} axis {axis} is {spec.shape[axis]}, the config implies {size}")
