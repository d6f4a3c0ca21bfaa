"""The figures every benchmark returns, the machine they ran on, and the Markdown/JSON report."""

from __future__ import annotations

import json
import os
import platform
import subprocess
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


def machine() -> dict[str, str]:
    model = platform.processor()
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        pass
    versions = {}
    for name in ("onnxruntime", "ctranslate2", "torch", "numpy"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return {"cpu": model, "cores": str(os.cpu_count()), "python": platform.python_version(), **versions}


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
}


def markdown(figures: list[Figure]) -> str:
    lines = ["| benchmark | figure | value | bar | detail | command |", "|---|---|---|---|---|---|"]
    for f in figures:
        value = f"{f.value:.2f}x" if f.unit == "x" else f"{f.value:,.1f} {f.unit}"
        bar = f.target + (" ✔" if f.passed else " ✘" if f.passed is False else "")
        command = COMMANDS.get(f.benchmark, "python -m bench")
        lines.append(f"| {f.benchmark} | {f.label} | {value} | {bar} | {f.detail} | `{command}` |")
    return "\n".join(lines)


def write_json(path: Path, figures: list[Figure], *, command: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"machine": machine(), "command": command,
                                "figures": [asdict(f) for f in figures]}, indent=2) + "\n")
