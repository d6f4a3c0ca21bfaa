"""Turn an engine `GenerationResult` into the BertViz-shaped attention body of POST /attention.

Pure numpy and plain dicts (no HTTP, no engine calls); used by the attention and generate routes.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from service.engine import GenerationResult, TokenEvent
from service.engine.errors import InputTooLong

FINISH_REASONS = {"eos": "eos_token", "length": "length", "stop_sequence": "stop_sequence"}
_KIND_KEYS = (
    ("encoder", "encoder_attention"),
    ("decoder", "decoder_attention"),
    ("cross", "cross_attention"),
)
_JSON_DECIMALS = 6  # float32 probabilities: 6 decimals keep the payload small and rows summing to 1 +- 1e-5


def attention_cells(result: GenerationResult, *, mean_heads: bool) -> int:
    """How many probabilities a result's attention lays out (every kind, layer and head kept)."""
    if result.attention is None:
        return 0
    cells = 0
    for kind, _ in _KIND_KEYS:
        for array in getattr(result.attention, kind).values():
            heads, queries, keys = np.shape(array)
            cells += (1 if mean_heads else heads) * queries * keys
    return cells


def attention_floor(
    source_lengths: Sequence[int], *, layers: Mapping[str, int], heads: int, target_length: int = 1
) -> int:
    """The fewest values the attention of these inputs can hold, known before any decoding: each input's
    encoder self-attention exactly (S x S), its decoder and cross attention with `target_length` positions.

    Args:
        source_lengths: each input's tokens (EOS included).
        layers: per kind asked for ("encoder", "decoder", "cross"), how many layers are selected.
        heads: heads per layer in the response (1 with mean_heads).
        target_length: decoder positions at least (1 when generating; the forced target's otherwise).
    """
    total = 0
    for s in source_lengths:
        sizes = {"encoder": s * s, "decoder": target_length * target_length, "cross": target_length * s}
        total += heads * sum(count * sizes[kind] for kind, count in layers.items())
    return total


_LAYER_COUNT_KEYS = {"encoder": "n_encoder_layers", "decoder": "n_decoder_layers", "cross": "n_decoder_layers"}


def selected_counts(
    config: Mapping[str, Any],
    *,
    kinds: Sequence[str],
    layers: Sequence[int] | None,
    heads: Sequence[int] | None,
    mean_heads: bool,
) -> tuple[dict[str, int], int] | None:
    """(layers per kind, heads) that a selection keeps of a model's config; None when the config does not say."""
    n_heads = config.get("n_heads")
    counts: dict[str, int] = {}
    for kind in dict.fromkeys(kinds):
        n_layers = config.get(_LAYER_COUNT_KEYS[kind])
        if not isinstance(n_layers, int):
            return None
        counts[kind] = len(layers) if layers is not None else n_layers
    if heads is None and not isinstance(n_heads, int):
        return None
    return counts, 1 if mean_heads else len(heads) if heads is not None else int(n_heads or 0)


def check_attention_budget(results: Sequence[GenerationResult], *, mean_heads: bool, budget: int) -> None:
    """Refuse a response whose attention is over `budget` cells across all its inputs.

    Raises:
        InputTooLong: naming the budget (413): a 32-input request with all attention would otherwise
            be a response of hundreds of megabytes.
    """
    check_attention_cells(sum(attention_cells(result, mean_heads=mean_heads) for result in results), budget=budget)


def check_attention_cells(cells: int, *, budget: int) -> None:
    """Raise InputTooLong (413, naming the budget) when `cells` values are over `budget`."""
    if cells > budget:
        raise InputTooLong(
            f"the attention asked for has {cells} values (across inputs, kinds, layers and heads), over the "
            f"budget of max_attention_cells={budget} (ATENTO_MAX_ATTENTION_CELLS) per request: ask for fewer "
            "inputs, kinds, layers or heads, or mean_heads"
        )


def source_tokens(
    text: str, ids: Sequence[int], offsets: Sequence[tuple[int, int]], *, labels: Mapping[int, str]
) -> list[dict[str, Any]]:
    """Return the source tokens as {id, text, start, end, special}; specials (EOS, a language code the
    template puts first) have empty spans and their vocabulary entry as text (`labels`: ModelInfo.special_labels)."""
    out = []
    for i, token_id in enumerate(ids):
        start, end = offsets[i] if i < len(offsets) else (len(text), len(text))
        special = end <= start
        out.append(
            {
                "id": int(token_id),
                "text": text[start:end] if not special else labels.get(int(token_id), f"<{int(token_id)}>"),
                "start": start,
                "end": end,
                "special": special,
            }
        )
    return out


def target_tokens(tokens: Sequence[TokenEvent]) -> list[dict[str, Any]]:
    """Return output tokens with offsets into the concatenation of their texts (the generated text)."""
    out, position = [], 0
    for token in tokens:
        text = "" if token.special else token.text
        out.append(
            {
                "id": token.id,
                "text": token.text,
                "start": position,
                "end": position + len(text),
                "special": token.special,
            }
        )
        position += len(text)
    return out


def _layer_entry(array: np.ndarray, *, mean_heads: bool, encoding: str) -> Any:
    """(H, Q, K) float32 -> (1, H, Q, K) (or (1, 1, Q, K)) as nested lists or an EncodedArray dict."""
    array = np.asarray(array, dtype=np.float32)
    if mean_heads:
        array = array.mean(axis=0, keepdims=True)  # (1, Q, K)
    array = array[np.newaxis]  # (1, H, Q, K): BertViz's batch axis
    if encoding == "base64":
        half = np.ascontiguousarray(array, dtype="<f2")
        return {
            "dtype": "float16",
            "shape": list(half.shape),
            "data": base64.b64encode(half.tobytes()).decode(),
        }
    return np.round(array, _JSON_DECIMALS).tolist()


def attention_body(
    result: GenerationResult,
    *,
    source_text: str,
    source_offsets: Sequence[tuple[int, int]],
    forced: bool,
    mean_heads: bool,
    encoding: str,
    labels: Mapping[int, str],
    output_labels: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    """Build the AttentionResponse dict (docs in service/http/schemas.py) from an engine result.

    Args:
        result: a finished generation that kept attention.
        source_text: the request's input.
        source_offsets: character offsets of `result.input_token_ids` (from `Engine.tokenize`).
        forced: whether the target was given (teacher forcing) rather than generated.
        mean_heads: average the heads axis down to one.
        encoding: "json" (nested lists) or "base64" (float16 EncodedArray per layer).
        labels: the text of special ids that have none in the input or output (ModelInfo.special_labels).
        output_labels: the output side's, when the decoder has a vocabulary of its own (ModelInfo.output_labels);
            None: `labels` serve both sides.

    Returns:
        The response body; `encoder_tokens` labels the S axis and `decoder_tokens` the T axis of every entry.
    """
    attention = result.attention
    src = source_tokens(source_text, result.input_token_ids, source_offsets, labels=labels)
    tgt = target_tokens(result.tokens)
    body: dict[str, Any] = {
        "source_text": source_text,
        "target_text": result.text,
        "forced": forced,
        "finish_reason": None if forced else FINISH_REASONS.get(result.finish_reason, result.finish_reason),
        "source_tokens": src,
        "target_tokens": tgt,
        "encoder_tokens": [t["text"] for t in src],
        "decoder_tokens": [],
        "layers": {},
        "heads": list(attention.heads) if attention is not None else [],
        "mean_heads": mean_heads,
        "format": encoding,
        "encoder_attention": None,
        "decoder_attention": None,
        "cross_attention": None,
    }
    if attention is None:
        return body
    query_len = 0
    for kind, key in _KIND_KEYS:
        per_layer: dict[int, np.ndarray] = getattr(attention, kind)
        if not per_layer:
            continue
        layers = sorted(per_layer)
        body["layers"][kind] = layers
        body[key] = [_layer_entry(per_layer[layer], mean_heads=mean_heads, encoding=encoding) for layer in layers]
        if kind != "encoder":
            query_len = int(np.shape(per_layer[layers[0]])[-2])
    # Decoder position 0 reads BOS, position i reads the token predicted at i - 1.
    # A token without text that is a known special (a forced target language code) reads as its entry.
    read_labels = labels if output_labels is None else output_labels
    read = ["<s>"] + [read_labels.get(t.id, t.text) if t.text == "" else t.text for t in result.tokens]
    body["decoder_tokens"] = (read + [""] * query_len)[:query_len] if query_len else read[:-1] or ["<s>"]
    return body
