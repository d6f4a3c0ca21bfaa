"""Choosing the OpenVINO backend: the settings that select it, and the startup errors when it cannot run.

None of these needs the openvino package; tests/integration/test_openvino_runner.py runs the runner itself.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from service.__main__ import parse_settings
from service.engine import Engine
from service.engine.errors import ModelLoadError
from service.engine.model_dir import load_model_directory
from service.engine.openvino_runner import OpenVinoRunner, check_precision, compile_config, import_openvino
from service.engine.settings import RuntimeSettings
from service.http.settings import ServiceSettings

ROOT = Path(__file__).resolve().parents[4]
BUNDLED = ROOT / "models" / "normalize" / "1"
OPENVINO = RuntimeSettings(backend="openvino", intra_op_threads=1)


def test_the_default_backend_is_onnxruntime_at_f32(monkeypatch):
    for key in [k for k in __import__("os").environ if k.startswith("ATENTO_")]:
        monkeypatch.delenv(key)
    runtime = ServiceSettings().runtime
    assert (runtime.backend, runtime.inference_precision) == ("onnxruntime", "f32")


def test_environment_and_flags_select_openvino_and_bf16(monkeypatch):
    monkeypatch.setenv("ATENTO_RUNTIME__BACKEND", "openvino")
    monkeypatch.setenv("ATENTO_RUNTIME__INFERENCE_PRECISION", "bf16")
    runtime = ServiceSettings().runtime
    assert (runtime.backend, runtime.inference_precision) == ("openvino", "bf16")
    monkeypatch.delenv("ATENTO_RUNTIME__INFERENCE_PRECISION")
    flags = parse_settings(["--runtime.backend", "openvino", "--runtime.inference-precision", "bf16"]).runtime
    assert (flags.backend, flags.inference_precision) == ("openvino", "bf16")


def test_an_unknown_backend_or_precision_names_the_choices():
    with pytest.raises(ValidationError, match="'onnxruntime' or 'openvino'"):
        RuntimeSettings(backend="tensorrt")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="'f32' or 'bf16'"):
        RuntimeSettings(backend="openvino", inference_precision="fp16")  # type: ignore[arg-type]


def test_bf16_on_onnxruntime_is_refused_with_the_reason(monkeypatch):
    with pytest.raises(ValidationError, match="bf16 needs backend openvino: onnxruntime's CPU provider has no bf16"):
        RuntimeSettings(inference_precision="bf16")
    monkeypatch.setenv("ATENTO_RUNTIME__INFERENCE_PRECISION", "bf16")
    with pytest.raises(ValidationError, match="ATENTO_RUNTIME__BACKEND=openvino"):
        ServiceSettings()


def test_bf16_is_refused_on_a_cpu_openvino_lists_without_it():
    with pytest.raises(ModelLoadError, match=r"this CPU \(AMD EPYC\) has no bf16 .*FP32, INT8, BIN, without BF16"):
        check_precision("bf16", capabilities=["FP32", "INT8", "BIN"], cpu="AMD EPYC")
    check_precision("bf16", capabilities=["FP32", "BF16", "INT8"], cpu="Intel Xeon")  # AVX512-BF16 or AMX
    check_precision("f32", capabilities=["FP32"], cpu="any")


def test_compile_config_carries_the_precision_and_threads():
    assert compile_config(OPENVINO)["INFERENCE_PRECISION_HINT"] == "f32"
    assert compile_config(OPENVINO)["INFERENCE_NUM_THREADS"] == 1
    assert "INFERENCE_NUM_THREADS" not in compile_config(RuntimeSettings(backend="openvino"))  # 0: its default


def test_a_missing_openvino_package_is_a_startup_error_saying_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "openvino", None)  # what `import openvino` sees without the package
    with pytest.raises(ModelLoadError, match=r"openvino package is not installed.*pip install 'atento\[openvino\]'"):
        import_openvino()
    engine = Engine(BUNDLED, runtime=OPENVINO)
    with pytest.raises(ModelLoadError, match="ATENTO_RUNTIME__BACKEND=openvino but the openvino package"):
        asyncio.run(engine.start())
    assert not engine.ready


def test_openvino_on_cuda_is_refused():
    with pytest.raises(ModelLoadError, match="ATENTO_DEVICE=cuda but ATENTO_RUNTIME__BACKEND=openvino runs on the CPU"):
        OpenVinoRunner(load_model_directory(BUNDLED), runtime=OPENVINO, device="cuda")
