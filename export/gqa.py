"""Decoder graph format 3: the step graph with each layer's self- and cross-attention as GroupQueryAttention.

Format 2's decoder reads the whole cache buffer of every row and a mask over it: at 16 rows a step of the
bundled model reads about 41 columns a row where the rows hold 10 on average (BENCHMARKS.md, issue 23).
onnxruntime's `com.microsoft.GroupQueryAttention` reads each row's own length (`seqlens_k`) and, given the
same buffer as past and present, writes the new keys and values into it: the service keeps each row's real
columns first (service/engine/kv_cache.py), so it can run this graph for steps that need no attention weights
(the node gives none) and format 2 for the others, on the same cache.

The graph is made from format 2's by surgery, fp32 and int8 alike: each layer's self-attention, from the
split of its query/key/value projection to the reshape before its output projection, becomes one node, and so
does its cross-attention (given the row's last source key and value as its "new" ones, written back where they
are, so that it reads each row's own source length too). The feed-forward blocks and every weight are format
2's own. `python -m export.gqa DIR` adds
the graphs to an existing model directory after checking them against format 2 (`check_gqa_parity`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from export.model_dir import graph_signature, sha256_file
from export.quantize import sort_topologically

logger = logging.getLogger(__name__)

# At least this share of live rows must pick the same next token as format 2 on random states, and the
# logits of batches without dead rows stay within this of format 2's (float rounding: measured 3e-6 in fp32).
MIN_SAME_ARGMAX = 0.99
MAX_LOGIT_DIFF = 1e-3
# An int8 graph quantizes its activations per tensor on the fly: inputs that differ by float rounding (the
# attention summed in another order) may round to another int8 step. On the bench's base model (random weights)
# 0.0056 with the self-attention alone and 0.04999 with the cross-attention too (2026-12-07): close to this bound,
# while the bundled model's int8 graph differs by 5e-7.
MAX_LOGIT_DIFF_QUANTIZED = 0.05
QUANTIZING_OPS = {"DynamicQuantizeLinear", "MatMulInteger", "DynamicQuantizeMatMul", "QuantizeLinear"}


class GqaSurgeryError(ValueError):
    """The decoder graph is not one of atento's own (format 2): there is no self-attention to replace."""


def gqa_decoder(model: onnx.ModelProto, *, n_layers: int, n_heads: int) -> onnx.ModelProto:
    """Format 2's decoder `model` with each layer's self- and cross-attention as GroupQueryAttention nodes.

    Inputs: format 2's without the masks, plus `seqlens_k` (B,) int32, each row's length before the step,
    `total_sequence_length` (1,) int32, the longest row's after it, `src_seqlens_k` (B,) int32, each row's
    source length - 1, and `src_total_sequence_length` (1,) int32, the longest source's. Outputs: `logits` and,
    per layer, `present_keys.{l}` / `present_values.{l}` (B, H, capacity, Dh) and `present_cross_keys.{l}` /
    `present_cross_values.{l}` (B, H, S, Dh): bound to the same buffers as the inputs, written in place.
    """
    graph = model.graph
    by_output = {output: node for node in graph.node for output in node.output}
    replaced: dict[str, onnx.NodeProto] = {}
    for layer in range(n_layers):
        split = _split_of_projection(graph, f"model.decoder_layers.{layer}.self_attention.query_key_value.bias")
        attended = _input_of_projection(graph, by_output, f"model.decoder_layers.{layer}.self_attention.output.bias")
        query, key, value = split.output
        replaced[attended] = helper.make_node(
            "GroupQueryAttention",
            [query, key, value, f"past_keys.{layer}", f"past_values.{layer}", "seqlens_k", "total_sequence_length"],
            [attended, f"present_keys.{layer}", f"present_values.{layer}"],
            domain="com.microsoft",
            name=f"self_attention_{layer}",
            num_heads=n_heads,
            kv_num_heads=n_heads,
        )
    replaced.update(_cross_attention(graph, by_output, n_layers=n_layers, n_heads=n_heads))
    logits = [output for output in graph.output if output.name == "logits"]
    if not logits:
        raise GqaSurgeryError("the decoder graph has no 'logits' output")
    pasts = {value.name: value for value in graph.input}
    outputs = list(logits)
    for layer in range(n_layers):
        pairs = [
            ("past_keys", "present_keys"),
            ("past_values", "present_values"),
            ("cross_keys", "present_cross_keys"),
            ("cross_values", "present_cross_values"),
        ]
        for past, present in pairs:
            value = onnx.ValueInfoProto()
            value.CopyFrom(pasts[f"{past}.{layer}"])  # the same buffer: (B, H, capacity, Dh)
            value.name = f"{present}.{layer}"
            outputs.append(value)
    nodes = [node for node in graph.node if not set(node.output) & set(replaced)] + list(replaced.values())
    nodes = _needed(nodes, {output.name for output in outputs})
    used = {name for node in nodes for name in node.input}
    inputs = [value for value in graph.input if value.name in used and value.name != "self_mask"] + [
        helper.make_tensor_value_info(name, TensorProto.INT32, shape)
        for name, shape in (
            ("seqlens_k", ["batch"]),
            ("total_sequence_length", [1]),
            ("src_seqlens_k", ["batch"]),
            ("src_total_sequence_length", [1]),
        )
    ]
    initializers = [initializer for initializer in graph.initializer if initializer.name in used]
    initializers += _cross_constants(graph, n_heads=n_heads)
    result = helper.make_graph(nodes, f"{graph.name}_gqa", inputs, outputs, initializers)
    sort_topologically(result)
    opsets = [opset for opset in model.opset_import if opset.domain != "com.microsoft"]
    converted = helper.make_model(
        result, opset_imports=[*opsets, helper.make_opsetid("com.microsoft", 1)], ir_version=model.ir_version
    )
    onnx.checker.check_model(converted)
    return converted


def _head_dim(graph: onnx.GraphProto) -> int:
    past = next(value for value in graph.input if value.name == "past_keys.0")
    return int(past.type.tensor_type.shape.dim[3].dim_value)


def _cross_constants(graph: onnx.GraphProto, *, n_heads: int) -> list[onnx.TensorProto]:
    head_dim = _head_dim(graph)
    return [
        numpy_helper.from_array(np.array([-1, 1, 1], dtype=np.int64), "gqa_cross.row_shape"),
        numpy_helper.from_array(np.array([1, n_heads, 1], dtype=np.int64), "gqa_cross.index_shape"),
        numpy_helper.from_array(np.array([0, 1, n_heads * head_dim], dtype=np.int64), "gqa_cross.token_shape"),
    ]


def _cross_attention(
    graph: onnx.GraphProto, by_output: dict[str, onnx.NodeProto], *, n_layers: int, n_heads: int
) -> dict[str, onnx.NodeProto]:
    """Each layer's cross-attention as one GroupQueryAttention over the source keys and values of each row's own
    length: its "new" key and value are the row's last source ones (gathered at `src_seqlens_k`), which it
    writes back where they are and attends with the others, so it reads columns 0 .. length - 1 of each row.
    Returns the attention results' producers by name, the gathering nodes under names of their own."""
    replaced: dict[str, onnx.NodeProto] = {}
    row_index = [
        helper.make_node("Cast", ["src_seqlens_k"], ["gqa_cross.last64"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["gqa_cross.last64", "gqa_cross.row_shape"], ["gqa_cross.last_row"]),
        helper.make_node("Expand", ["gqa_cross.last_row", "gqa_cross.index_shape"], ["gqa_cross.index"]),
    ]
    for node in row_index:
        replaced[node.output[0]] = node
    for layer in range(n_layers):
        query = _output_of_bias_add(graph, f"model.decoder_layers.{layer}.cross_attention.query.bias")
        attended = _input_of_projection(graph, by_output, f"model.decoder_layers.{layer}.cross_attention.output.bias")
        last: dict[str, str] = {}
        for kind in ("keys", "values"):
            prefix = f"gqa_cross.{kind}.{layer}"
            # (B, H, S, D) at [b, h, last[b]] -> (B, H, D): one head's key a slice, and (B, H, D) is already
            # (B, 1, H * D)'s order. GatherElements read an index per element: 6% of a base-size step.
            for node in (
                helper.make_node("GatherND", [f"cross_{kind}.{layer}", "gqa_cross.index"], [prefix], batch_dims=2),
                helper.make_node("Reshape", [prefix, "gqa_cross.token_shape"], [f"{prefix}.token"]),
            ):
                replaced[node.output[0]] = node
            last[kind] = f"{prefix}.token"
        replaced[attended] = helper.make_node(
            "GroupQueryAttention",
            [
                query,
                last["keys"],
                last["values"],
                f"cross_keys.{layer}",
                f"cross_values.{layer}",
                "src_seqlens_k",
                "src_total_sequence_length",
            ],
            [attended, f"present_cross_keys.{layer}", f"present_cross_values.{layer}"],
            domain="com.microsoft",
            name=f"cross_attention_{layer}",
            num_heads=n_heads,
            kv_num_heads=n_heads,
        )
    return replaced


def _bias_add(graph: onnx.GraphProto, bias: str) -> onnx.NodeProto:
    """The one Add of the bias initializer `bias` (a projection's last node in atento's graphs)."""
    adds = [node for node in graph.node if node.op_type == "Add" and bias in node.input]
    if len(adds) != 1:
        raise GqaSurgeryError(f"no single Add of {bias}: not an atento decoder graph")
    add: onnx.NodeProto = adds[0]
    return add


def _output_of_bias_add(graph: onnx.GraphProto, bias: str) -> str:
    return str(_bias_add(graph, bias).output[0])


def _split_of_projection(graph: onnx.GraphProto, bias: str) -> onnx.NodeProto:
    """The Split of the query/key/value projection whose bias is `bias` into its three parts."""
    added = _bias_add(graph, bias).output[0]
    splits = [node for node in graph.node if node.op_type == "Split" and added in node.input]
    if len(splits) != 1 or len(splits[0].output) != 3:
        raise GqaSurgeryError(f"the projection with {bias} is not split into query, key and value")
    split: onnx.NodeProto = splits[0]
    return split


def _input_of_projection(graph: onnx.GraphProto, by_output: dict[str, onnx.NodeProto], bias: str) -> str:
    """The tensor the output projection with bias `bias` reads: the attention's result, (B, T, H), made by a
    Reshape (fp32: MatMul of it; int8: DynamicQuantizeLinear, MatMulInteger, Cast, Mul of it)."""
    name = next(value for value in _bias_add(graph, bias).input if value != bias)
    for _ in range(6):  # the projection's few nodes, then the attention's Reshape
        node = by_output.get(name)
        if node is None:
            break
        if node.op_type == "Reshape":
            return str(name)
        if node.op_type not in {"MatMul", "MatMulInteger", "Cast", "Mul", "DynamicQuantizeLinear"}:
            break
        name = node.input[0]
    raise GqaSurgeryError(f"the projection with {bias} does not read a Reshape of the attention")


def _needed(nodes: list[onnx.NodeProto], outputs: set[str]) -> list[onnx.NodeProto]:
    """The nodes the outputs depend on, in their order."""
    by_output = {output: node for node in nodes for output in node.output}
    needed: set[int] = set()
    pending = list(outputs)
    while pending:
        node = by_output.get(pending.pop())
        if node is None or id(node) in needed:
            continue
        needed.add(id(node))
        pending.extend(name for name in node.input if name)
    return [node for node in nodes if id(node) in needed]


def check_gqa_parity(
    format2: Path, gqa: Path, *, n_layers: int, n_heads: int, head_dim: int, vocab_size: int, seed: int = 0
) -> dict[str, Any]:
    """Run both graphs on random states whose rows have different lengths (0 included) and compare the rows'
    next tokens and logits. `same_argmax` and `max_abs_logit_diff` are over batches of live rows; over batches
    with dead rows too, `same_argmax_with_dead_rows` is reported, not checked: a dead row's new column is masked
    in format 2 and attended in format 3, which changes nothing of the live rows' attention but, in an int8
    graph, the per-tensor scale their activations are quantized with (a logit moves by up to about 0.1, and a
    random state's near tie may flip): a property of dynamic quantization, which batch composition has in
    format 2 too."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    reference = ort.InferenceSession(str(format2), options, providers=["CPUExecutionProvider"])
    candidate = ort.InferenceSession(str(gqa), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    same = {True: 0, False: 0}
    rows = {True: 0, False: 0}
    largest = 0.0
    shapes = ((1, 4, 3), (5, 12, 9), (16, 41, 48), (8, 30, 20))
    for (batch, capacity, source), all_live in [(shape, all_live) for all_live in (True, False) for shape in shapes]:
        lengths = rng.integers(0, capacity, batch)
        live = np.ones(batch, dtype=bool) if all_live else rng.random(batch) < 0.85
        keys = rng.standard_normal((n_layers, batch, n_heads, capacity, head_dim)).astype(np.float32)
        values = rng.standard_normal(keys.shape).astype(np.float32)
        src_lengths = rng.integers(1, source + 1, batch)
        feeds: dict[str, np.ndarray] = {
            "tgt": rng.integers(3, vocab_size, (batch, 1)).astype(np.int64),
            "tgt_positions": lengths[:, None].astype(np.int64),
            "src_mask": np.arange(source)[None, :] < src_lengths[:, None],
        }
        mask = np.arange(capacity)[None, :] < lengths[:, None]
        for layer in range(n_layers):
            feeds[f"cross_keys.{layer}"] = rng.standard_normal((batch, n_heads, source, head_dim)).astype(np.float32)
            feeds[f"cross_values.{layer}"] = rng.standard_normal((batch, n_heads, source, head_dim)).astype(np.float32)
        expected = reference.run(
            ["logits"],
            {
                **feeds,
                "self_mask": np.concatenate([mask, live[:, None]], axis=1),
                **{f"past_keys.{layer}": keys[layer] for layer in range(n_layers)},
                **{f"past_values.{layer}": values[layer] for layer in range(n_layers)},
            },
        )[0]
        binding = candidate.io_binding()
        binding.bind_output("logits", "cpu")
        wanted = {value.name for value in candidate.get_inputs()}
        extra = {
            "seqlens_k": lengths.astype(np.int32),
            "total_sequence_length": np.array([int(lengths.max()) + 1], dtype=np.int32),
            "src_seqlens_k": (src_lengths - 1).astype(np.int32),
            "src_total_sequence_length": np.array([int(src_lengths.max())], dtype=np.int32),
        }
        for name, array in {**feeds, **extra}.items():
            if name in wanted and not name.startswith("cross_"):
                binding.bind_cpu_input(name, array)
        buffers = {
            f"past_{kind}.{layer}": stack[layer]
            for kind, stack in (("keys", keys), ("values", values))
            for layer in range(n_layers)
        }
        buffers.update({name: array for name, array in feeds.items() if name.startswith("cross_")})
        presents = {value.name for value in candidate.get_outputs()}
        for name, array in buffers.items():
            shared = ort.OrtValue.ortvalue_from_numpy(np.array(array))  # a copy: format 3 writes into it
            binding.bind_ortvalue_input(name, shared)
            present = "present_" + name.removeprefix("past_")
            if present in presents:
                binding.bind_ortvalue_output(present, shared)
        candidate.run_with_iobinding(binding)
        got = binding.get_outputs()[0].numpy()
        same[all_live] += int((expected[live, -1].argmax(-1) == got[live, -1].argmax(-1)).sum())
        rows[all_live] += int(live.sum())
        if all_live:
            largest = max(largest, float(np.abs(expected - got).max(initial=0.0)))
    return {
        "same_argmax": same[True] / rows[True],
        "max_abs_logit_diff": largest,
        "rows": rows[True],
        "same_argmax_with_dead_rows": (same[True] + same[False]) / (rows[True] + rows[False]),
    }


def made_by_this_surgery(path: Path) -> bool:
    """Whether the format 3 decoder at `path` gathers the rows' last source keys as this module does now (one
    slice a head; until 2026-12-07 an index an element): a cached export older than that is made again."""
    graph = onnx.load(str(path), load_external_data=False).graph
    return any(node.op_type == "GatherND" and node.output[0] == "gqa_cross.keys.0" for node in graph.node)


def add_gqa_decoders(directory: Path) -> dict[str, dict[str, Any]]:
    """Add a format 3 decoder beside each variant's decoder in the model directory `directory` (its manifest
    updated: the variant's `decoder_gqa`, the graph's signature and parity, the files' hashes).

    Raises:
        GqaSurgeryError: a decoder is not atento's format 2, or a graph fails parity (nothing is written).
    """
    manifest_path = directory / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    config = manifest["config"]
    n_layers, n_heads = int(config["n_decoder_layers"]), int(config["n_heads"])
    written: dict[str, dict[str, Any]] = {}
    staged: list[tuple[Path, Path]] = []
    try:
        for variant, files in manifest["variants"].items():
            if files.get("device", "cpu") != "cpu":
                continue  # a GPU variant (fp16) runs format 2
            source = directory / files["decoder"]
            target = directory / source.name.replace("decoder", "decoder.gqa", 1)
            staging = target.with_name(f".{target.name}.tmp")
            staged.append((staging, target))  # removed again if anything below fails
            original = onnx.load(str(source))
            quantized = any(node.op_type in QUANTIZING_OPS for node in original.graph.node)
            onnx.save(gqa_decoder(original, n_layers=n_layers, n_heads=n_heads), str(staging))
            parity = check_gqa_parity(
                source,
                staging,
                n_layers=n_layers,
                n_heads=n_heads,
                head_dim=int(config["d_model"]) // n_heads,
                vocab_size=int(config["vocab_size"]),
            )
            tolerance = MAX_LOGIT_DIFF_QUANTIZED if quantized else MAX_LOGIT_DIFF
            if parity["same_argmax"] < MIN_SAME_ARGMAX or parity["max_abs_logit_diff"] > tolerance:
                raise GqaSurgeryError(f"{target.name} differs from {source.name}: {parity}")
            written[variant] = {"decoder_gqa": target.name, "parity": parity}
            logger.info("%s: %s from %s, parity %s", variant, target.name, source.name, parity)
    except BaseException:
        for staging, _ in staged:
            staging.unlink(missing_ok=True)
        raise
    for staging, target in staged:
        staging.replace(target)
    for variant, entry in written.items():
        manifest["variants"][variant]["decoder_gqa"] = entry["decoder_gqa"]
        manifest["variants"][variant]["decoder_gqa_parity"] = entry["parity"]
        manifest["files"][entry["decoder_gqa"]] = sha256_file(directory / entry["decoder_gqa"])
    if written:
        first = directory / next(iter(written.values()))["decoder_gqa"]
        manifest["graphs"]["decoder_gqa"] = graph_signature(first)
    manifest["files"] = dict(sorted(manifest["files"].items()))
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export.gqa", description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="a model directory written by `python -m export`")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        written = add_gqa_decoders(args.directory)
    except (GqaSurgeryError, OSError, KeyError) as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    for variant, entry in written.items():
        sys.stdout.write(f"{variant}: {entry['decoder_gqa']} (parity {entry['parity']})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
