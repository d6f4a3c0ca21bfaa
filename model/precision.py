"""The arithmetic a training step runs in: fp32, or bf16 autocast where the hardware multiplies bf16.

Under bf16 autocast the matrix multiplies of the forward and backward passes take bf16 inputs and
accumulate in fp32, while the weights, their gradients and Adam's moments stay fp32. On a CPU with
AVX512-BF16 (AMD Zen 4, Intel Cooper Lake and later) or AMX (Sapphire Rapids and later) oneDNN runs
those multiplies natively, 1.5 to 1.9 times as fast as fp32 for this model's micro-batches (Zen 4,
one thread); without them torch emulates bf16 and it is slower than fp32, which is why `auto` asks
the CPU first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import torch

PRECISIONS = ("fp32", "bf16", "auto")
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first processor's feature flags (empty where /proc/cpuinfo is absent, e.g. macOS)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def resolve_precision(name: str, device: torch.device, flags: frozenset[str] | None = None) -> str:
    """ "fp32" or "bf16" for a --precision flag on this device."""
    if name not in PRECISIONS:
        raise ValueError(f"unknown precision {name!r}; choose one of {PRECISIONS}")
    if name != "auto":
        return name
    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    native = cpu_flags() if flags is None else flags
    return "bf16" if any(flag in native for flag in NATIVE_BF16_FLAGS) else "fp32"


@contextlib.contextmanager
def step_precision(precision: str, device: torch.device) -> Iterator[None]:
    """Run a forward pass (and so its backward) in `precision`, as resolve_precision returned it."""
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
        yield
