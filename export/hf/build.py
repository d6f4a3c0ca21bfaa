"""`build_from_transformers`: a local Hugging Face checkpoint -> atento's model directory
(docs/model-directory.md): the family's graphs, checked against transformers, the converted
tokenizer, checked against transformers' tokenizer, and the manifest, written atomically.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tokenizers
import torch
import transformers

from export.build import MIN_OPSET, ParityError
from export.config import ExportConfig
from export.graphs import (
    DECODER_OUTPUTS,
    DECODER_SHAPES,
    ENCODER_INPUTS,
    ENCODER_OUTPUTS,
    ENCODER_SHAPES,
    GraphPaths,
    _export,
    check_graph,
    decoder_input_names,
)
from export.hf.checkpoint import HfCheckpoint, HfCheckpointError, load_model, read_config
from export.hf.families import Family, family_of
from export.hf.generation import generation_fields, language_fields, marian_language_fields, special_tokens
from export.hf.int8 import int8_variant
from export.hf.parity import ImportParity, check_import
from export.hf.tokenizer import check_ids, probe_texts, source_template, unmatched_specials
from export.model_dir import FORMAT, graph_signature, staged_directory, tool_versions, write_manifest

logger = logging.getLogger(__name__)

TOKENIZER = "tokenizer.json"
TARGET_TOKENIZER = "target_tokenizer.json"  # the output side's, for a decoder with a vocabulary of its own
# What the service accepts as `segmentation.language` (service/engine/segmentation.py).
LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}([-_][A-Za-z0-9]+)*")


@dataclass(frozen=True)
class ImportResult:
    directory: Path
    manifest: dict[str, Any]
    parity: ImportParity


def example_inputs(model: Any, encoder: torch.nn.Module) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """Encoder and decoder inputs whose dynamic sizes all differ and are >= 2 (see export/graphs.py)."""
    batch, src_len, tgt_len, past_len = 3, 7, 2, 4
    vocab = int(model.get_output_embeddings().weight.shape[0])
    src = torch.randint(0, vocab, (batch, src_len))
    src_mask = torch.ones(batch, src_len, dtype=torch.bool)
    src_mask[0, -2:] = False
    with torch.no_grad():
        _, cross_keys, cross_values, _ = encoder(src, src_mask)
    layers, _, heads, _, head_dim = cross_keys.shape
    caches = [torch.randn(batch, heads, past_len, head_dim) for _ in range(2 * layers)]
    decoder = (
        torch.randint(0, vocab, (batch, tgt_len)),
        torch.arange(past_len, past_len + tgt_len).expand(batch, tgt_len).contiguous(),
        torch.ones(batch, past_len + tgt_len, dtype=torch.bool),
        src_mask,
        *caches,
        *[cross_keys[layer].contiguous() for layer in range(layers)],
        *[cross_values[layer].contiguous() for layer in range(layers)],
    )
    return (src, src_mask), decoder


def export_family_graphs(family: Family, model: Any, directory: Path, *, opset: int) -> GraphPaths:
    encoder, decoder = family.encoder_graph(model).eval(), family.decoder_graph(model).eval()
    encoder_args, decoder_args = example_inputs(model, encoder)
    layers = (len(decoder_args) - 4) // 4  # four per-layer cache inputs after tgt, tgt_positions and the masks
    paths = GraphPaths(directory / "encoder.onnx", directory / "decoder.onnx")
    _export(
        encoder,
        encoder_args,
        paths.encoder,
        inputs=ENCODER_INPUTS,
        outputs=ENCODER_OUTPUTS,
        shapes=ENCODER_SHAPES,
        opset=opset,
    )
    _export(
        decoder,
        decoder_args,
        paths.decoder,
        inputs=decoder_input_names(layers),
        outputs=DECODER_OUTPUTS,
        shapes=DECODER_SHAPES,
        opset=opset,
        varargs="caches",
    )
    check_graph(paths.encoder)
    check_graph(paths.decoder)
    return paths


def model_config(checkpoint: HfCheckpoint, encoder: torch.nn.Module) -> dict[str, Any]:
    """The manifest's `config`: the service's fields, read off the wrapped encoder's outputs (so they hold for
    every family's naming), then the Hugging Face config as written.

    Raises:
        HfCheckpointError: the encoder and decoder have different head counts or sizes (the contract has one).
    """
    src = torch.zeros(1, 2, dtype=torch.long)
    with torch.no_grad():
        memory, cross_keys, _, encoder_attention = encoder(src, torch.ones(1, 2, dtype=torch.bool))
    decoder_layers, _, heads, _, head_dim = cross_keys.shape
    if encoder_attention.shape[2] != heads:
        raise HfCheckpointError(f"encoder ({encoder_attention.shape[2]}) and decoder ({heads}) head counts differ")
    return {
        "vocab_size": int(checkpoint.model.get_output_embeddings().weight.shape[0]),
        "d_model": int(memory.shape[2]),
        "n_heads": int(heads),
        "n_encoder_layers": int(encoder_attention.shape[0]),
        "n_decoder_layers": int(decoder_layers),
        "head_dim": int(head_dim),  # T5's d_kv: heads * head_dim may differ from d_model (mT5, Flan-T5)
        "model_type": checkpoint.model_type,
        "transformers": checkpoint.config,
    }


def reference_tokenizer(directory: Path) -> Any:
    """transformers' own tokenizer of the checkpoint, which the service's must equal."""
    try:
        return transformers.AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
    except (OSError, ValueError, KeyError) as error:
        raise HfCheckpointError(f"{directory}: transformers cannot load the tokenizer: {error}") from error


def numbered_alike(reference: Any, target: tokenizers.Tokenizer) -> list[str]:
    """The target tokenizer's special tokens that transformers' tokenizer numbers as target_vocab.json does.

    MarianTokenizer reads special-token text typed in a target ("</s>", "<pad>") at its source vocabulary's id
    (its added tokens are numbered once, by vocab.json), which for a token at another target id is no id of the
    decoder's: only the tokens both vocabularies number alike can be compared.
    """
    added = [t.content for t in target.get_added_tokens_decoder().values()]
    return sorted(t for t in added if reference.convert_tokens_to_ids(t) == target.token_to_id(t))


def check_output_specials(specials: dict[str, int], target: tokenizers.Tokenizer, *, where: Path) -> None:
    """The decoder's special ids (config.json / generation_config.json) must be the target vocabulary's
    </s> and <pad>, which the service skips when it decodes outputs.

    Raises:
        HfCheckpointError: naming the id and the target vocabulary's entry.
    """
    for name, token in (("eos", "</s>"), ("pad", "<pad>")):
        entry = target.token_to_id(token)
        if entry is not None and specials[name] != entry:
            raise HfCheckpointError(
                f"{where}: the decoder's {name} id {specials[name]} is not target_vocab.json's {token} ({entry})"
            )


def build_from_transformers(source: Path, config: ExportConfig, *, replace: bool = False) -> ImportResult:
    """Import a local Hugging Face checkpoint into a model directory at `config.out`.

    Raises:
        HfCheckpointError: a file is missing or unreadable, or the family is not supported (nothing is written).
        FileExistsError: the target exists and `replace` is False.
        ValueError: an opset below 17, or a --segment-language that is no language code.
        ParityError: the graphs or the tokenizer disagree with transformers (nothing is written).
    """
    if config.opset < MIN_OPSET:
        raise ValueError(f"opset {config.opset} is below the minimum {MIN_OPSET}")
    if not LANGUAGE_CODE.fullmatch(config.segment_language):
        raise ValueError(f"--segment-language {config.segment_language!r} is not a language code such as 'en' or 'de'")
    source = Path(source)
    hf_config = read_config(source)
    family = family_of(hf_config, where=source / "config.json")
    tokenizer = family.tokenizer(source, hf_config)
    # Marian with separate vocabularies: outputs are the target vocabulary's ids (decoder embeddings, logits).
    target_tokenizer = None if family.target_tokenizer is None else family.target_tokenizer(source, hf_config)
    output_tokenizer = tokenizer if target_tokenizer is None else target_tokenizer
    checkpoint = load_model(source, hf_config)
    reference = reference_tokenizer(source)
    # Literal special-token text in an input is read as the token, as transformers' tokenizer reads it.
    around = source_template(reference)
    template: dict[str, Any] = {**around, "match_special_tokens": True}
    if checkpoint.model_type == "marian":  # MarianTokenizer reads ">>...<<" first in any text as one token
        template["leading_code"] = True
    manifest_config = model_config(checkpoint, family.encoder_graph(checkpoint.model).eval())
    unk = tokenizer.token_to_id("<unk>")
    source_vocab_size = int(checkpoint.model.get_input_embeddings().weight.shape[0])  # the encoder's rows
    try:  # as the service reads ids: at or above the encoder's vocab_size, <unk> (service/engine/tokenizer.py)
        limit = None if unk is None else (source_vocab_size, unk)
        ties = check_ids(reference, tokenizer, probe_texts(tokenizer), unknown=limit)
        if target_tokenizer is not None:
            texts = probe_texts(target_tokenizer, specials=numbered_alike(reference, target_tokenizer))
            ties += check_ids(reference, target_tokenizer, texts, target=True)
    except HfCheckpointError as error:
        raise ParityError(str(error)) from error
    if ties:
        logger.info(
            "tokenizer ids equal to transformers' but for %d tie(s) of equal-score segmentations, such as %r",
            len(ties),
            ties[0],
        )
    specials = special_tokens(checkpoint.generation, hf_config, unk=output_tokenizer.token_to_id("<unk>"))
    if target_tokenizer is not None:
        check_output_specials(specials, target_tokenizer, where=source)
    generation = generation_fields(checkpoint.generation, hf_config, vocab_size=manifest_config["vocab_size"])
    unmatched = unmatched_specials(tokenizer)  # M2M100's codes when its tokenizer does not read them in text
    special = {t.content for t in tokenizer.get_added_tokens_decoder().values()} | set(unmatched)
    languages = language_fields(
        {**tokenizer.get_vocab(), **unmatched},
        special=special,
        template=around,
        forced_bos=generation["forced_bos_token_id"],
    )
    if checkpoint.model_type == "marian":
        languages = marian_language_fields(dict(reference.get_vocab()))
    positions = int(hf_config.get("max_position_embeddings", 512))
    target = Path(config.out)
    with staged_directory(target, replace=replace) as staging:
        started = time.perf_counter()
        paths = export_family_graphs(family, checkpoint.model, staging, opset=config.opset)
        logger.info("exported and checked the graphs in %.1f s", time.perf_counter() - started)
        report = check_import(
            checkpoint.model,
            paths.encoder,
            paths.decoder,
            pad=specials["pad"],
            start=specials["bos"],
            atol_logits=config.atol_logits,
            atol_attention=config.atol_attention,
        )
        logger.info("parity against transformers: %s", report.to_manifest())
        if not report.passed:
            raise ParityError(f"the graphs differ from transformers: {report.to_manifest()}")
        tokenizer.save(str(staging / TOKENIZER))
        if target_tokenizer is not None:
            target_tokenizer.save(str(staging / TARGET_TOKENIZER))
        variants: dict[str, Any] = {
            "fp32": {"encoder": "encoder.onnx", "decoder": "decoder.onnx", "device": "cpu", "checked": True}
        }
        if config.int8:
            started = time.perf_counter()
            texts = probe_texts(tokenizer, count=config.parity_inputs, seed=config.seed)
            sources = [list(reference(text).input_ids)[:positions] for text in texts]
            variants.update(
                int8_variant(
                    staging,
                    sources,
                    start=specials["bos"],
                    eos=specials["eos"],
                    max_new_tokens=min(config.max_new_tokens or 32, positions - 1),
                    max_drop=config.int8_max_exact_match_drop,
                )
            )
            logger.info("int8 variant checked in %.1f s", time.perf_counter() - started)
        name, version = target.resolve().parent.name, target.resolve().name
        # A decoder with a vocabulary of its own: tokenizer.json, `source_vocabulary` and the template are the
        # source side's; target_tokenizer.json, `special_tokens` and config's vocab_size the outputs'.
        two_sides: dict[str, Any] = {}
        if target_tokenizer is not None:
            source_vocabulary = {"size": source_vocab_size, "unk": unk}
            two_sides = {"target_tokenizer": TARGET_TOKENIZER, "source_vocabulary": source_vocabulary}
        manifest = {
            "format": FORMAT,
            "name": name,
            "version": version,
            "config": manifest_config,
            "config_fingerprint": None,
            "special_tokens": specials,
            "source_template": template,
            **two_sides,
            "max_source_tokens": positions,
            "max_target_tokens": positions,
            "opset": config.opset,
            "graphs": {"encoder": graph_signature(paths.encoder), "decoder": graph_signature(paths.decoder)},
            "variants": variants,
            "default_variant": "fp32",
            "tools": {**tool_versions(), "transformers": transformers.__version__},
            "parity": report.to_manifest(),
            "generation": generation,
            "languages": languages,
            # A translator is no more accurate on short inputs than near its limit: split only what is over it.
            "segmentation": {"segmenter": "sentencex", "language": config.segment_language},
            "evaluation": None,
            "checkpoint": {"source": "transformers", "model_type": checkpoint.model_type, "directory": source.name},
        }
        write_manifest(staging, manifest)
    written = json.loads((target / "manifest.json").read_text())
    return ImportResult(directory=target, manifest=written, parity=report)
