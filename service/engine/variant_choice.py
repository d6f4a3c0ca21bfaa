"""Which of a model directory's variants the service loads.

A variant asked for by name (`ATENTO_VARIANT=fp32`) is loaded; none asked for, the manifest's
`default_variant`. `ATENTO_VARIANT=auto` lets the CPU decide: on one with int8 dot-product instructions
(AVX512-VNNI, AVX-VNNI, AMX-INT8), where onnxruntime's int8 kernels multiply four int8 pairs per lane in one
instruction and its int8 variant is the faster one, an `int8` variant the export checked against fp32 and
kept (greedy exact match within one point of fp32's on its held-out inputs, export/build.py; or the same
outputs as fp32 on 99% of them, export/hf/int8.py); the manifest's default elsewhere. Not the default:
int8 still decides a few borderline outputs differently (BENCHMARKS.md, "Which runtime and variant").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INT8_DOT_PRODUCT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
INT8 = "int8"
AUTO = "auto"
# The export keeps an int8 variant within this much of fp32's exact match (ExportConfig's default allowance).
INT8_MAX_EXACT_MATCH_DROP = 0.01


@dataclass(frozen=True)
class VariantChoice:
    name: str
    reason: str


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags as Linux lists them; empty where /proc/cpuinfo is not (then no int8 preference)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def int8_is_checked(entry: Any) -> bool:
    """An int8 variant the export ran against fp32 and kept: exact match within the allowance of fp32's
    (atento's own models), or the same greedy outputs as fp32 on all but that share of inputs (imports)."""
    if not isinstance(entry, Mapping) or entry.get("checked") is not True or entry.get("device", "cpu") != "cpu":
        return False
    agreement = entry.get("exact_match_vs_fp32")  # export/hf/int8.py
    if isinstance(agreement, int | float):
        return 1.0 - agreement <= INT8_MAX_EXACT_MATCH_DROP + 1e-9
    quantized, baseline = entry.get("exact_match"), entry.get("fp32_exact_match")
    if not isinstance(quantized, int | float) or not isinstance(baseline, int | float):
        return False
    return baseline - quantized <= INT8_MAX_EXACT_MATCH_DROP + 1e-9


def choose_variant(
    variants: Mapping[str, Any], default: str, *, asked: str | None, on_cpu: bool, flags: frozenset[str]
) -> VariantChoice:
    """The variant to load and why (the engine logs it and /info shows the name). `on_cpu`: onnxruntime runs
    the graphs on the CPU (OpenVINO's int8 was slower, a GPU runs fp32 or fp16); `flags`: the CPU's."""
    if asked is None:
        return VariantChoice(default, "the manifest's default_variant")
    if asked != AUTO:
        return VariantChoice(asked, "asked for")
    instructions = sorted(flags & INT8_DOT_PRODUCT_FLAGS)
    if on_cpu and instructions and int8_is_checked(variants.get(INT8)):
        return VariantChoice(INT8, f"auto: the CPU has {', '.join(instructions)} and the int8 variant matches fp32")
    if not on_cpu:
        return VariantChoice(default, "auto: not onnxruntime on the CPU, the manifest's default_variant")
    if not instructions:
        return VariantChoice(default, "auto: no int8 dot products on this CPU, the manifest's default_variant")
    return VariantChoice(default, "auto: no int8 variant checked against fp32, the manifest's default_variant")
