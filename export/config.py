"""`ExportConfig`: everything `python -m export` can be told, and the tolerances parity must meet.

Imports nothing from this repository.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ExportConfig:
    checkpoint: str = field(
        default="runs/normalize",
        metadata={"help": "Checkpoint directory (model.safetensors, config.json, tokenizer.json)."},
    )
    out: str = field(
        default="models/normalize/1",
        metadata={"help": "Model directory to write; its last two parts are the manifest's name/version."},
    )
    opset: int = field(
        default=18, metadata={"help": "ONNX opset (the dynamo exporter's native one; 17 is the contract's minimum)."}
    )
    atol_logits: float = field(
        default=1e-4, metadata={"help": "Parity tolerance of fp32 logits and hidden states, ONNX Runtime vs PyTorch."}
    )
    atol_attention: float = field(
        default=1e-5, metadata={"help": "Parity tolerance of attention probabilities, ONNX Runtime vs PyTorch."}
    )
    parity_inputs: int = field(
        default=200, metadata={"help": "Held-out sources decoded greedily by both, at each batch size."}
    )
    parity_batch_sizes: tuple[int, ...] = field(
        default=(1, 16),
        metadata={"help": "Batch sizes of the greedy parity check (mixed lengths and padding within each)."},
    )
    beam_inputs: int = field(default=200, metadata={"help": "Sources beam-searched by both, one at a time."})
    num_beams: int = field(default=4, metadata={"help": "Beam width of the beam-search parity check."})
    length_penalty: float = field(default=1.0, metadata={"help": "Length penalty of the beam-search parity check."})
    max_new_tokens: int = field(
        default=0, metadata={"help": "Cap on generated tokens during parity; 0 = the manifest's maximum."}
    )
    split: str = field(default="test", metadata={"help": "Held-out split of the bundled generator used for parity."})
    seed: int = field(default=1234, metadata={"help": "Seed of the held-out examples."})
    int8: bool = field(
        default=True,
        metadata={"help": "Try int8 dynamic quantization for CPU (kept only if it passes the exact-match check)."},
    )
    int8_max_exact_match_drop: float = field(
        default=0.01, metadata={"help": "Keep int8 only if exact match drops by at most this."}
    )
    fp16: bool = field(default=True, metadata={"help": "Write an fp16 variant for GPU."})
    from_transformers: str = field(
        default="",
        metadata={"help": "A local Hugging Face checkpoint directory to import instead of --checkpoint (export/hf/)."},
    )
    segment_language: str = field(
        default="en",
        metadata={
            "help": "An imported model's `segmentation.language` (--from-transformers): the language code whose "
            "sentence rules split an input over the model's source limit (sentencex; an unknown code gets its "
            "generic rules). Set it to the source language."
        },
    )
    text_rules: bool = field(
        default=True,
        metadata={
            "help": "Write edit_guard and segmentation (export/text_rules.py) into the manifest when the checkpoint "
            "was trained on the bundled generator."
        },
    )
