"""OpenVinoRunner: the Runner protocol on Intel's OpenVINO runtime, the only module that imports openvino.

It runs the model directory's own ONNX graphs (OpenVINO reads them unchanged) on the CPU, at an inference
precision of f32 or bf16 (OpenVINO's INFERENCE_PRECISION_HINT). bf16 is why it exists: on CPUs with
AVX512-BF16 or AMX OpenVINO's kernels run the MatMuls in bf16, which onnxruntime's CPU provider cannot do
on x86 (BENCHMARKS.md#issue-23-an-openvino-runtime-bf16-where-the-cpu-has-it). `openvino` is an optional
extra, imported only when an engine is built with `RuntimeSettings(backend="openvino")`.

The KV cache is OnnxRunner's (the same buffers with spare columns, written in place), so both runners feed
the graphs identical tensors and their outputs differ only by the two runtimes' float rounding.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from service.engine.errors import ModelLoadError
from service.engine.kv_cache import DecoderOutput, DecoderStep, EncoderBatch, EncoderOutput, KvCache
from service.engine.model_dir import CACHE_INPUTS, ModelFiles, TensorSpec, check_graph_signature
from service.engine.settings import RuntimeSettings

# OpenVINO's element type names -> the model directory's dtype names (docs/model-directory.md).
_OV_DTYPES = {"i64": "int64", "f32": "float32", "boolean": "bool"}
_INSTALL = "pip install 'atento[openvino]'"


def import_openvino() -> ModuleType:
    """The openvino package, or a ModelLoadError saying how to install it."""
    try:
        return importlib.import_module("openvino")
    except ImportError as error:
        raise ModelLoadError(
            f"ATENTO_RUNTIME__BACKEND=openvino but the openvino package is not installed ({error}); "
            f"install it with `{_INSTALL}`, or use the onnxruntime backend"
        ) from error


def check_precision(precision: str, *, capabilities: Sequence[str], cpu: str) -> None:
    """Refuse bf16 on a CPU whose OpenVINO plugin does not list BF16 among its OPTIMIZATION_CAPABILITIES.

    Raises:
        ModelLoadError: naming the CPU and what it has instead.
    """
    if precision == "bf16" and "BF16" not in capabilities:
        raise ModelLoadError(
            f"ATENTO_RUNTIME__INFERENCE_PRECISION=bf16 but this CPU ({cpu}) has no bf16 arithmetic: OpenVINO "
            f"lists its capabilities as {', '.join(capabilities) or 'none'}, without BF16 (that needs "
            "AVX512-BF16 or AMX-BF16); use inference_precision f32"
        )


def compile_config(runtime: RuntimeSettings) -> dict[str, Any]:
    """OpenVINO CPU properties from the runtime settings: the precision asked for, one inference at a time."""
    config: dict[str, Any] = {
        "INFERENCE_PRECISION_HINT": runtime.inference_precision,
        # One stream: the engine runs one call at a time and a step's batch is its parallelism.
        "PERFORMANCE_HINT": "LATENCY",
        "NUM_STREAMS": 1,
    }
    if runtime.intra_op_threads > 0:
        config["INFERENCE_NUM_THREADS"] = runtime.intra_op_threads
    return config


class OpenVinoRunner:
    """The encoder and decoder compiled by OpenVINO for the CPU, one infer request each."""

    def __init__(self, model: ModelFiles, *, runtime: RuntimeSettings, device: str = "cpu") -> None:
        if device not in ("auto", "cpu"):  # "auto" is the CPU here: OpenVINO's GPU plugin is Intel's, not CUDA
            raise ModelLoadError(
                f"ATENTO_DEVICE={device} but ATENTO_RUNTIME__BACKEND=openvino runs on the CPU only; use device cpu "
                "or auto, or the onnxruntime backend for CUDA"
            )
        ov = import_openvino()
        core = ov.Core()
        check_precision(
            runtime.inference_precision,
            capabilities=list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")),
            cpu=str(core.get_property("CPU", "FULL_DEVICE_NAME")),
        )
        self.model = model
        config = compile_config(runtime)
        self._encoder = self._compile(core, model.encoder, config)
        self._decoder = self._compile(core, model.decoder, config)
        for role, compiled, path in (
            ("encoder", self._encoder, model.encoder),
            ("decoder", self._decoder, model.decoder),
        ):
            got = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
            if got != runtime.inference_precision:  # what the compiled graphs really run at, not what was asked
                raise ModelLoadError(
                    f"{path}: OpenVINO compiled the {role} at {got}, not the {runtime.inference_precision} asked for"
                )
            for kind, ports in (("inputs", compiled.inputs), ("outputs", compiled.outputs)):
                check_graph_signature(model, role, kind, [_tensor_spec(port) for port in ports], file=path)
        self.precision = runtime.inference_precision
        # What /info and atento_model_info report as the execution provider.
        self.provider = f"OpenVINO CPU {self.precision}"
        self.decoder_graphs: dict[str, str | None] = {"format_3": None, "format_2": model.decoder.name}
        self._encoder_request = self._encoder.create_infer_request()
        self._decoder_request = self._decoder.create_infer_request()
        self._layer_inputs = [tuple(f"{name}.{layer}" for name in CACHE_INPUTS) for layer in range(model.n_layers)]

    @staticmethod
    def _compile(core: Any, path: Path, config: Mapping[str, Any]) -> Any:
        try:
            return core.compile_model(str(path), "CPU", dict(config))
        except Exception as error:  # OpenVINO raises RuntimeError and its own untyped errors
            raise ModelLoadError(f"{path} is not a graph OpenVINO can compile: {error}") from error

    @staticmethod
    def _run(request: Any, feeds: Mapping[str, np.ndarray], names: Sequence[str]) -> list[np.ndarray]:
        """One synchronous inference; copies of the outputs in `names` (OpenVINO reuses its output tensors)."""
        request.infer(dict(feeds), share_inputs=True, share_outputs=True)  # the feeds outlive the call
        return [np.array(request.get_tensor(name).data) for name in names]

    def encode(self, batch: EncoderBatch, *, attention: bool) -> EncoderOutput:
        names = ["cross_keys", "cross_values"] + (["encoder_attention"] if attention else [])
        outputs = self._run(self._encoder_request, {"src": batch.src, "src_mask": batch.src_mask}, names)
        cache = KvCache.start(outputs[0], outputs[1], batch.src_mask)
        return EncoderOutput(cache=cache, attention=outputs[2] if attention else None)

    def decode(
        self, tgt: np.ndarray, cache: KvCache, *, attention: bool, tgt_mask: np.ndarray | None = None
    ) -> DecoderOutput:
        """One decoder call, the new keys and values written into the cache's buffers as OnnxRunner does."""
        step = DecoderStep.prepare(tgt, cache, tgt_mask, self._layer_inputs)
        outputs = self._run(self._decoder_request, step.feeds, step.output_names(attention=attention))
        return step.finish(cache, outputs, attention=attention)


def _tensor_spec(port: Any) -> TensorSpec:
    """A compiled model's input or output as the model directory describes tensors (dynamic axes: None)."""
    element = port.get_element_type().get_type_name()
    shape = tuple(dim.get_length() if dim.is_static else None for dim in port.get_partial_shape())
    return TensorSpec(port.get_any_name(), _OV_DTYPES.get(element, element), shape)
