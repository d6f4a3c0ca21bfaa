"""The figures every benchmark returns, the machine they ran on, and the Markdown/JSON report."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path


@dataclass(frozen=True)
class Figure:
    benchmark: str  # "batching", "peers", ...
    label: str  # what was compared, e.g. "continuous / one at a time, 32 concurrent"
    value: float
    unit: str  # "x" for ratios, "tok/s", "MiB", "GFLOP/s", "%"
    detail: str = ""  # the raw rates or spread behind a ratio
    target: str = ""  # the bar, e.g. ">= 4x"
    passed: bool | None = None
    rates: dict[str, float] = field(default_factory=dict)  # median tokens/s of each contender
    flops_per_token: float | None = None  # of the workload behind `rates` (bench/hardware.py)


# The CPU features that decide which kernels onnxruntime, CTranslate2 (oneDNN) and torch can use:
# AVX-512, VNNI int8 dot products, bf16, and AMX tiles (BENCHMARKS.md reads them off every report).
CPU_FLAGS = ("avx2", "avx_vnni", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16")


def cpu_info(cpuinfo: Path = Path("/proc/cpuinfo")) -> tuple[str, list[str]]:
    """The CPU's model name and which of CPU_FLAGS it has, from /proc/cpuinfo (platform's guess elsewhere)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return platform.processor() or platform.machine(), []
    fields: dict[str, str] = {}
    for line in text.splitlines():  # one block per logical CPU; they agree on these fields
        key, colon, value = line.partition(":")
        if colon:
            fields[key.strip()] = value.strip()
    flags = set(fields.get("flags", "").split())
    model = fields.get("model name") or platform.processor() or platform.machine()
    return model, [flag for flag in CPU_FLAGS if flag in flags]


def machine() -> dict[str, str]:
    """What the figures ran on: CPU model and flags, cores, Python and the libraries under test."""
    model, flags = cpu_info()
    versions = {}
    for name in ("onnxruntime", "openvino", "ctranslate2", "torch", "numpy"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return {
        "cpu": model,
        "cpu_flags": " ".join(flags) or "none of " + " ".join(CPU_FLAGS),
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        **versions,
    }


# The command that measures each benchmark's figures on its own (`make bench` runs them all).
COMMANDS = {
    "batching": "python -m bench --batching",
    "peers": "python -m bench --peers",
    "http": "python -m bench --http",
    "memory": "python -m bench --http",
    "attention": "python -m bench --attention",
    "int8": "python -m bench --int8",
    "hardware": "python -m bench --hardware",
    "gpu": "python -m bench.gpu",
    "openvino": "python -m bench --openvino",
    "marian": "python -m bench --marian",
    "fastest": "python -m bench --fastest",
}


def markdown(figures: list[Figure]) -> str:
    lines = ["| benchmark | figure | value | bar | detail | command |", "|---|---|---|---|---|---|"]
    for f in figures:
        value = f"{f.value:.2f}x" if f.unit == "x" else f"{f.value:,.1f} {f.unit}"
        bar = f.target + (" ✔" if f.passed else " ✘" if f.passed is False else "")
        command = COMMANDS[f.benchmark]
        lines.append(f"| {f.benchmark} | {f.label} | {value} | {bar} | {f.detail} | `{command}` |")
    return "\n".join(lines)


def write_json(path: Path, figures: list[Figure], *, command: str, skipped: list[str] | None = None) -> None:
    """The report: the machine, the command, every figure, and a line for each figure not measured."""
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "machine": machine(),
        "command": command,
        "figures": [asdict(f) for f in figures],
        "skipped": skipped or [],
    }
    path.write_text(json.dumps(report, indent=2) + "\n")
