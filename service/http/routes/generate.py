"""TGI's generate routes: POST /generate, POST /generate_stream and POST / (compat, streams on request).

Translates HTTP bodies to engine calls and back; status codes are left to service/http/error_handlers.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from service.engine import (
    AttentionSpec,
    EngineClient,
    GenerationHandle,
    GenerationParams,
    GenerationResult,
    TokenEvent,
)
from service.engine.client import LONG_INPUT_CHARS
from service.engine.errors import InputTooLong, InvalidInput, ServingError
from service.http.attention_body import (
    FINISH_REASONS,
    attention_body,
    attention_floor,
    check_attention_budget,
    check_attention_cells,
    selected_counts,
    source_tokens,
)
from service.http.deadline import engine_timeout_s, render_json, within_deadline
from service.http.disconnect import EventStreamResponse, results_or_disconnect
from service.http.error_handlers import error_body
from service.http.schemas import (
    ErrorResponse,
    GenerateParameters,
    GenerateRequest,
    GenerateResponse,
    StreamResponse,
)
from service.http.settings import ServiceSettings
from service.http.state import ready_engine, settings_of

logger = logging.getLogger("atento.http")
router = APIRouter(tags=["generate"])  # service/http/app.py adds the API-key check when keys are set

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": description}
    for status, description in (
        (401, "Missing or wrong API key"),
        (408, "The request body stopped arriving (ATENTO_BODY_TIMEOUT_S)"),
        (413, "Input longer than the model's limits, or body over the configured size"),
        (422, "Invalid parameters"),
        (429, "Queue full (see Retry-After)"),
        (503, "Model not loaded yet, or shutting down"),
        (504, "Past the request's deadline"),
    )
}
_STREAM_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-Sent Events, one `data:{StreamResponse}` per token; the last carries "
        "`generated_text` and (with details) `details`. Errors after the stream started arrive as "
        '`data:{"error": ..., "error_type": ...}`.',
        "content": {"text/event-stream": {"schema": StreamResponse.model_json_schema()}},
    }
}


def generation_params(p: GenerateParameters, settings: ServiceSettings) -> GenerationParams:
    """Translate TGI parameters to the engine's, enforcing the server's limits.

    As TGI does, setting temperature, top_k or top_p turns sampling on.

    Raises:
        InvalidInput: an unsupported TGI parameter, max_new_tokens or num_beams over the limit,
            or beam search combined with sampling.
    """
    unsupported = p.unsupported()
    if unsupported:
        raise InvalidInput(f"unsupported parameters: {', '.join(unsupported)}")
    if ignored := p.ignored():
        logger.debug("ignored TGI parameters atento does not implement: %s", ", ".join(ignored))
    max_new = p.max_new_tokens if p.max_new_tokens is not None else settings.max_new_tokens_limit
    if max_new > settings.max_new_tokens_limit:
        raise InvalidInput(f"max_new_tokens must be <= {settings.max_new_tokens_limit}, got {max_new}")
    if p.num_beams > settings.max_num_beams:
        raise InvalidInput(f"num_beams must be <= {settings.max_num_beams}, got {p.num_beams}")
    warped = p.temperature not in (None, 1.0) or p.top_k is not None or p.top_p not in (None, 1.0)
    do_sample = p.do_sample or warped
    if do_sample and p.num_beams > 1:
        raise InvalidInput("num_beams > 1 is beam search: it cannot be combined with sampling parameters")
    return GenerationParams(
        max_new_tokens=max_new,
        do_sample=do_sample,
        temperature=p.temperature if p.temperature is not None else 1.0,
        top_k=p.top_k,
        top_p=p.top_p,
        seed=p.seed,
        repetition_penalty=p.repetition_penalty,
        num_beams=p.num_beams,
        length_penalty=p.length_penalty,
        stop=tuple(p.stop),
        timeout_s=settings.request_timeout_s,
        no_repeat_ngram_size=p.no_repeat_ngram_size,
        bad_words=tuple(p.bad_words),
        bad_words_ids=tuple(tuple(word) for word in p.bad_words_ids),
        source_language=p.source_language,
        target_language=p.target_language,
        token_logprobs=p.details,  # only details show them (streams ask for them below)
    )


def _token(event: TokenEvent) -> dict[str, Any]:
    return {"id": event.id, "text": event.text, "logprob": event.logprob, "special": event.special}


def edit_guard_details(result: GenerationResult) -> dict[str, Any] | None:
    """`details.edit_guard`: the spans the model directory's edit guard put back, or None when it did not run."""
    if result.edit_guard is None:
        return None
    return {"reverted": [{"source": r.source, "output": r.output} for r in result.edit_guard]}


def response_body(engine: EngineClient, text: str, p: GenerateParameters, result: GenerationResult) -> dict[str, Any]:
    """Build TGI's generate response (plus `attention` when asked) from an engine result."""
    body: dict[str, Any] = {"generated_text": (text + result.text) if p.return_full_text else result.text}
    offsets: list[tuple[int, int]] = []
    if (p.details and p.decoder_input_details) or p.return_attention:
        _, offsets = engine.tokenize(text)
    if p.details:
        prefill = []
        if p.decoder_input_details:
            prefill = [
                {"id": t["id"], "text": t["text"], "logprob": None}
                for t in source_tokens(text, result.input_token_ids, offsets, labels=engine.info.special_labels)
            ]
        body["details"] = {
            "finish_reason": FINISH_REASONS.get(result.finish_reason, result.finish_reason),
            "generated_tokens": len(result.tokens),
            "seed": result.seed,
            "prefill": prefill,
            "tokens": [_token(t) for t in result.tokens],
            "top_tokens": None,
            "best_of_sequences": None,
            "edit_guard": edit_guard_details(result),
        }
    if p.return_attention:
        body["attention"] = attention_body(
            result,
            source_text=text,
            source_offsets=offsets,
            forced=False,
            mean_heads=False,
            encoding="json",
            labels=engine.info.special_labels,
            output_labels=engine.info.output_labels,
        )
    return body


async def prepare_long_inputs(engine: EngineClient, texts: list[str]) -> None:
    """Let the engine do its text work for long inputs off the event loop (EngineClient.prepare)."""
    long = [text for text in texts if len(text) >= LONG_INPUT_CHARS]

    def prepare_all() -> None:
        for text in long:
            engine.prepare(text)

    if long:
        await asyncio.to_thread(prepare_all)


def check_attention_floor(
    engine: EngineClient,
    texts: list[str],
    *,
    budget: int,
    kinds: Sequence[str] = ("encoder", "decoder", "cross"),
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
    mean_heads: bool = False,
    target_length: int = 1,
) -> None:
    """Refuse up front (413, before any decoding) attention that cannot fit the budget whatever is generated.

    Raises:
        InputTooLong: the encoder attention alone (plus one decoder position) is over `budget`.
    """
    counts = selected_counts(engine.info.config, kinds=kinds, layers=layers, heads=heads, mean_heads=mean_heads)
    if counts is None:
        return  # a config without layer and head counts: only the check on the result applies
    lengths = [len(engine.tokenize(text)[0]) for text in texts]  # long ones are memoized by prepare
    floor = attention_floor(lengths, layers=counts[0], heads=counts[1], target_length=target_length)
    check_attention_cells(floor, budget=budget)


def _submit_all(
    engine: EngineClient, texts: list[str], params: GenerationParams, spec: AttentionSpec | None
) -> list[GenerationHandle]:
    """Submit every input before awaiting any, so they share batches; undo all if one is refused."""
    handles: list[GenerationHandle] = []
    try:
        for text in texts:
            handles.append(engine.submit(text, params, attention=spec, stream=False))
    except ServingError:
        for handle in handles:
            handle.cancel("disconnect")  # the client gets an error, so nobody will read these
        raise
    return handles


def check_beam_attention(p: GenerateParameters) -> None:
    """Refuse attention with beam search: the beam search does not keep the attention of its hypotheses.

    Raises:
        InvalidInput: num_beams > 1 together with attention (422), rather than a 200 with attention null.
    """
    if p.num_beams > 1:
        raise InvalidInput(
            "attention is not available with beam search (num_beams > 1): use num_beams 1, or pass the "
            "beam search's output as the target of POST /attention to see the attention behind it"
        )


async def _generate(request: Request, body: GenerateRequest) -> Response:
    settings = settings_of(request)
    engine = ready_engine(request)
    p = body.parameters
    params = replace(generation_params(p, settings), timeout_s=engine_timeout_s(request, settings))
    texts = body.inputs if isinstance(body.inputs, list) else [body.inputs]
    if len(texts) > settings.max_batch_inputs:
        raise InputTooLong(f"at most {settings.max_batch_inputs} inputs per request, got {len(texts)}")
    if p.return_attention:
        check_beam_attention(p)
    spec = AttentionSpec() if p.return_attention else None

    async def answer() -> bytes:
        await prepare_long_inputs(engine, texts)
        if p.return_attention:
            check_attention_floor(engine, texts, budget=settings.max_attention_cells)
        handles = _submit_all(engine, texts, params, spec)
        results = await results_or_disconnect(handles, request.receive)
        if p.return_attention:
            check_attention_budget(results, mean_heads=False, budget=settings.max_attention_cells)

        def build() -> Any:
            bodies = [response_body(engine, text, p, result) for text, result in zip(texts, results, strict=True)]
            return bodies if isinstance(body.inputs, list) else bodies[0]

        # Attention, or per-token details of many inputs, is work proportional to the response: off the loop.
        return await render_json(build, offload=p.return_attention or (p.details and len(texts) > 1))

    payload = await within_deadline(request, settings, answer())
    return Response(payload, media_type="application/json")


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data:" + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


async def _stream_events(handle: GenerationHandle, text: str, p: GenerateParameters) -> AsyncIterator[bytes]:
    """TGI's stream: one event per token; the held-back last token carries generated_text and details."""
    index = 0
    held: TokenEvent | None = None
    try:
        async for event in handle:
            if held is not None:
                index += 1
                yield _sse(
                    {
                        "index": index,
                        "token": _token(held),
                        "top_tokens": None,
                        "generated_text": None,
                        "details": None,
                    }
                )
            held = event
        result = await handle.result()
        if held is None and result.tokens:
            held = result.tokens[-1]
        if held is None:
            held = TokenEvent(id=-1, text="", logprob=0.0, special=True)  # nothing generated at all
        details = None
        if p.details:
            details = {
                "finish_reason": FINISH_REASONS.get(result.finish_reason, result.finish_reason),
                "generated_tokens": len(result.tokens),
                "seed": result.seed,
            }
            guard = edit_guard_details(result)
            if guard is not None:  # TGI's stream details keep exactly their keys when no guard ran
                details["edit_guard"] = guard
        generated = (text + result.text) if p.return_full_text else result.text
        yield _sse(
            {
                "index": index + 1,
                "token": _token(held),
                "top_tokens": None,
                "generated_text": generated,
                "details": details,
            }
        )
    except ServingError as exc:  # headers are sent: the error travels in the stream, as in TGI
        yield _sse(error_body(exc))


async def _generate_stream(request: Request, body: GenerateRequest) -> Response:
    settings = settings_of(request)
    engine = ready_engine(request)
    if isinstance(body.inputs, list):
        raise InvalidInput("streaming takes a single input, not a list")
    if body.parameters.return_attention:
        raise InvalidInput("return_attention is not available when streaming; use POST /attention")
    params = replace(
        generation_params(body.parameters, settings),
        timeout_s=engine_timeout_s(request, settings),
        token_logprobs=True,  # every stream event carries its token's logprob, as TGI's
    )
    await prepare_long_inputs(engine, [body.inputs])
    handle = engine.submit(body.inputs, params)
    try:
        await handle.admitted()  # a refusal is the response's status, not an error event after a 200
    except asyncio.CancelledError:
        handle.cancel("disconnect")
        raise
    return EventStreamResponse(
        _stream_events(handle, body.inputs, body.parameters),
        on_disconnect=lambda: handle.cancel("disconnect"),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},  # nginx: do not buffer SSE
    )


@router.post(
    "/generate",
    response_model=GenerateResponse | list[GenerateResponse],
    responses=ERROR_RESPONSES,
    summary="Generate (TGI)",
    description="TGI's generate: one input returns one response, a list of inputs returns a list.",
)
async def generate(request: Request, body: GenerateRequest) -> Response:
    return await _generate(request, body)


@router.post(
    "/generate_stream",
    responses={**_STREAM_DOC, **ERROR_RESPONSES},
    summary="Generate, streaming tokens as Server-Sent Events (TGI)",
)
async def generate_stream(request: Request, body: GenerateRequest) -> Response:
    return await _generate_stream(request, body)


@router.post(
    "/",
    response_model=GenerateResponse | list[GenerateResponse],
    responses={**_STREAM_DOC, **ERROR_RESPONSES},
    summary="Generate or stream (TGI's compat route)",
    description='As /generate; with `"stream": true`, as /generate_stream. '
    "huggingface_hub's InferenceClient "
    "posts here.",
)
async def compat_generate(request: Request, body: GenerateRequest) -> Response:
    if body.stream:
        return await _generate_stream(request, body)
    return await _generate(request, body)
