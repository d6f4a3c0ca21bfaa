"""atento's serving side: `engine/` runs the model (continuous batching on onnxruntime), `http/` serves
it (FastAPI), `__main__.py` starts both (`python -m service`).

Imports only onnxruntime, numpy, tokenizers, pydantic and fastapi; never torch, model/ or export/.
"""
