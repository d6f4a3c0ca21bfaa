"""atento's serving side: model directory loading, ONNX runtime, continuous batching and (elsewhere) HTTP.

Imports only onnxruntime, numpy, tokenizers, pydantic and fastapi; never torch, model/ or export/.
"""
