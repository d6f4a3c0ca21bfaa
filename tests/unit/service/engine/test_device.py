"""An explicit device that cannot be honoured is a startup error naming what is missing; `auto` may fall back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnxruntime as ort
import pytest

from service.engine.errors import ModelLoadError
from service.engine.model_dir import load_model_directory
from service.engine.runner import OnnxRunner, pick_providers
from service.engine.settings import RuntimeSettings

ROOT = Path(__file__).resolve().parents[4]
BUNDLED = ROOT / "models" / "normalize" / "1"
CPU_ONLY = ["CPUExecutionProvider"]
HAS_CUDA = "CUDAExecutionProvider" in ort.get_available_providers()


def test_cuda_without_the_cuda_provider_is_an_error(monkeypatch):
    monkeypatch.setattr(ort, "get_available_providers", lambda: CPU_ONLY)
    with pytest.raises(ModelLoadError, match="ATENTO_DEVICE=cuda but onnxruntime has no CUDAExecutionProvider") as err:
        pick_providers("cuda")
    assert "installed: onnxruntime" in str(err.value) and "use auto or cpu" in str(err.value)


def test_auto_and_cpu_fall_back_to_cpu(monkeypatch):
    monkeypatch.setattr(ort, "get_available_providers", lambda: CPU_ONLY)
    assert pick_providers("auto") == pick_providers("cpu") == CPU_ONLY


def test_unknown_device_is_an_error():
    with pytest.raises(ModelLoadError, match="'gpu' is not one of auto, cpu, cuda"):
        pick_providers("gpu")


@pytest.mark.skipif(HAS_CUDA, reason="onnxruntime here can start CUDA")
def test_cuda_provider_listed_but_not_started_is_an_error(monkeypatch):
    # onnxruntime-gpu on a machine without a GPU lists the provider, then its sessions silently get the CPU.
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", *CPU_ONLY])
    model = load_model_directory(BUNDLED)
    runtime = RuntimeSettings(intra_op_threads=1)
    assert OnnxRunner(model, runtime=runtime, device="auto").provider == "CPUExecutionProvider"
    with pytest.raises(ModelLoadError, match="could not start CUDAExecutionProvider.*use auto or cpu"):
        OnnxRunner(model, runtime=runtime, device="cuda")


@pytest.mark.skipif(HAS_CUDA, reason="onnxruntime here can start CUDA")
def test_service_with_device_cuda_exits_non_zero_naming_the_provider():
    result = subprocess.run(
        [sys.executable, "-m", "service", "--device", "cuda", "--port", "0", "--model-dir", str(BUNDLED)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "ATENTO_DEVICE=cuda but onnxruntime has no CUDAExecutionProvider" in result.stderr
