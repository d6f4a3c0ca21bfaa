"""POST /v2/models/{name}[/versions/{version}]/infer: a BYTES batch of texts in, generated texts out.

The generation itself is the TGI routes': the same GenerateParameters validation and server limits
(generation_params), the same submit, deadline and disconnect handling, the same engine. Only the
envelope differs: tensors in and out (service/http/oip_tensors.py), optional token ids and cross attention.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import numpy as np
from fastapi import Request
from fastapi.responses import Response
from pydantic import ValidationError

from service.engine import AttentionSpec, EngineClient, GenerationParams, GenerationResult, ModelNotReady
from service.engine.errors import InvalidInput, ServingError
from service.engine.repository import ModelRepository, ModelVersion
from service.http.attention_body import check_attention_cells
from service.http.deadline import engine_timeout_s, within_deadline
from service.http.disconnect import results_or_disconnect
from service.http.error_handlers import validation_message
from service.http.oip_schemas import (
    CROSS_ATTENTION,
    TEXT_INPUT,
    TEXT_OUTPUT,
    TOKEN_IDS,
    TOKEN_PAD,
    TRANSPORT_PARAMETERS,
    InferRequest,
)
from service.http.oip_tensors import HEADER_LENGTH, OutputTensor, encode_outputs, split_body, text_input
from service.http.routes.generate import check_attention_floor, check_beam_attention, generation_params
from service.http.routes.generate import prepare_long_inputs as prepare_texts
from service.http.schemas import GenerateParameters
from service.http.settings import ServiceSettings

OUTPUTS = (TEXT_OUTPUT, TOKEN_IDS, CROSS_ATTENTION)
_DEFAULT_OUTPUTS = (TEXT_OUTPUT, TOKEN_IDS)


def _parse(body: bytes, header_length: str | None, settings: ServiceSettings) -> tuple[InferRequest, list[str], Any]:
    parsed, binary = split_body(body, header_length)
    try:
        infer = InferRequest.model_validate(parsed)
    except ValidationError as error:
        raise InvalidInput(validation_message(error.errors())) from None
    tensor = infer.inputs[0]
    if tensor.name != TEXT_INPUT:
        raise InvalidInput(f"the input tensor is {TEXT_INPUT!r} (BYTES, [N]), not {tensor.name[:64]!r}")
    texts, shape, _ = text_input(tensor.model_dump(), binary, 0, max_items=settings.max_batch_inputs)
    return infer, texts, shape


def _parameters(infer: InferRequest) -> GenerateParameters:
    given = dict(infer.parameters or {})
    if any(key.startswith("sequence_") for key in given):
        raise InvalidInput("sequence batching (sequence_id, sequence_start, sequence_end) is not supported")
    generation = {key: value for key, value in given.items() if key not in TRANSPORT_PARAMETERS}
    try:
        return GenerateParameters.model_validate(generation)
    except ValidationError as error:
        raise InvalidInput("parameters: " + validation_message(error.errors())) from None


def _requested(infer: InferRequest) -> tuple[list[str], set[str]]:
    """The outputs to return and those to return as binary data."""
    all_binary = bool((infer.parameters or {}).get("binary_data_output", False))
    if not infer.outputs:
        return list(_DEFAULT_OUTPUTS), set(_DEFAULT_OUTPUTS) if all_binary else set()
    names, binary = [], set()
    for output in infer.outputs:
        if output.name not in OUTPUTS:
            raise InvalidInput(f"no output {output.name[:64]!r}; this model's outputs are {list(OUTPUTS)}")
        names.append(output.name)
        if (output.parameters or {}).get("binary_data", all_binary):
            binary.add(output.name)
    return names, binary


def _token_ids(results: list[GenerationResult]) -> np.ndarray:
    longest = max((len(r.token_ids) for r in results), default=0)
    ids = np.full((len(results), longest), TOKEN_PAD, dtype=np.int64)
    for row, result in enumerate(results):
        ids[row, : len(result.token_ids)] = result.token_ids
    return ids


def _cross_attention(results: list[GenerationResult]) -> np.ndarray:
    """(N, layers, heads, T, S), zero-padded to the longest target T and source S of the batch."""
    stacks = []
    for result in results:
        if result.attention is None or not result.attention.cross:
            raise InvalidInput("no cross attention came back for an input (segmented long inputs have none)")
        cross = result.attention.cross
        stacks.append(np.stack([cross[layer] for layer in sorted(cross)]))  # (L, H, T, S)
    layers, heads = stacks[0].shape[:2]
    longest_t = max(s.shape[2] for s in stacks)
    longest_s = max(s.shape[3] for s in stacks)
    out = np.zeros((len(stacks), layers, heads, longest_t, longest_s), dtype=np.float32)
    for row, stack in enumerate(stacks):
        out[row, :, :, : stack.shape[2], : stack.shape[3]] = stack
    return out


async def _generate(
    request: Request, engine: EngineClient, texts: list[str], params: GenerationParams, *, cross: bool
) -> list[GenerationResult]:
    settings: ServiceSettings = request.app.state.settings
    spec = AttentionSpec(kinds=frozenset({"cross"})) if cross else None
    await prepare_texts(engine, texts)
    if cross:
        check_attention_floor(engine, texts, budget=settings.max_attention_cells, kinds=("cross",))
    handles = []
    try:
        for text in texts:  # every input before awaiting any, so that they share batches
            handles.append(engine.submit(text, params, attention=spec, stream=False))
    except ServingError:
        for handle in handles:
            handle.cancel("disconnect")  # the client gets an error: nobody reads these
        raise
    return await results_or_disconnect(handles, request.receive)


async def infer(request: Request, repository: ModelRepository, entry: ModelVersion) -> Response:
    """Answer one infer request on `entry`, leased for the whole request (a roll-out waits for it)."""
    # Leased from its resolution on: reading the body awaits, and a retirement in between must wait for it.
    with repository.lease(entry) as engine:
        return await _answer(request, entry, engine)


async def _answer(request: Request, entry: ModelVersion, engine: EngineClient) -> Response:
    settings: ServiceSettings = request.app.state.settings
    infer_request, texts, shape = _parse(await request.body(), request.headers.get(HEADER_LENGTH), settings)
    p = _parameters(infer_request)
    names, binary = _requested(infer_request)
    cross = CROSS_ATTENTION in names
    if cross:
        check_beam_attention(p)
    if request.app.state.draining:
        raise ModelNotReady("shutting down: not accepting new requests")
    if not engine.ready:
        raise ModelNotReady("model is loading")
    params = replace(generation_params(p, settings), timeout_s=engine_timeout_s(request, settings))
    results = await within_deadline(request, settings, _generate(request, engine, texts, params, cross=cross))
    prefix = texts if p.return_full_text else [""] * len(texts)
    tensors = {
        TEXT_OUTPUT: lambda: OutputTensor(
            TEXT_OUTPUT, "BYTES", tuple(shape), [pre + r.text for pre, r in zip(prefix, results, strict=True)]
        ),
        TOKEN_IDS: lambda: OutputTensor(TOKEN_IDS, "INT64", _token_ids(results).shape, _token_ids(results)),
        CROSS_ATTENTION: lambda: _cross_tensor(results, settings),
    }
    head = {"model_name": entry.name, "model_version": entry.version}
    if infer_request.id is not None:
        head["id"] = infer_request.id

    def build() -> tuple[bytes, int | None]:
        return encode_outputs(head, [tensors[name]() for name in names], binary=binary)

    # Attention is work proportional to the response: built off the event loop, as the TGI routes do.
    body, header_length = await asyncio.to_thread(build) if cross else build()
    if header_length is None:
        return Response(body, media_type="application/json")
    return Response(
        body, media_type="application/octet-stream", headers={"Inference-Header-Content-Length": str(header_length)}
    )


def _cross_tensor(results: list[GenerationResult], settings: ServiceSettings) -> OutputTensor:
    attention = _cross_attention(results)
    check_attention_cells(int(attention.size), budget=settings.max_attention_cells)
    return OutputTensor(CROSS_ATTENTION, "FP32", attention.shape, attention)
