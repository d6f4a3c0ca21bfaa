"""POST /attention: the attention behind an output, forced or generated, in BertViz's layout.

Validates the selection against the model's config, asks the engine to keep only that, and lays it out
(service/http/attention_body.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from service.engine import AttentionSpec
from service.engine.errors import InvalidInput
from service.http.attention_body import attention_body, check_attention_budget
from service.http.deadline import engine_timeout_s, render_json, within_deadline
from service.http.disconnect import results_or_disconnect
from service.http.routes.generate import (
    ERROR_RESPONSES,
    check_attention_floor,
    check_beam_attention,
    generation_params,
    prepare_long_inputs,
)
from service.http.schemas import AttentionRequest, AttentionResponse
from service.http.state import ready_engine, settings_of

router = APIRouter(tags=["attention"])  # service/http/app.py adds the API-key check when keys are set

_LAYER_COUNT_KEYS = {
    "encoder": "n_encoder_layers",
    "decoder": "n_decoder_layers",
    "cross": "n_decoder_layers",
}


def _check_selection(body: AttentionRequest, config: Mapping[str, Any]) -> None:
    """Refuse layer or head indices the model does not have (when its config says how many it has).

    Raises:
        InvalidInput: an index out of range or repeated.
    """
    n_heads = config.get("n_heads")
    if body.heads is not None:
        if len(set(body.heads)) != len(body.heads):
            raise InvalidInput("heads must not repeat")
        if isinstance(n_heads, int) and any(not 0 <= h < n_heads for h in body.heads):
            raise InvalidInput(f"heads must be in [0, {n_heads}), got {body.heads}")
    if body.layers is not None:
        if len(set(body.layers)) != len(body.layers):
            raise InvalidInput("layers must not repeat")
        for kind in body.kinds:
            n_layers = config.get(_LAYER_COUNT_KEYS[kind])
            if isinstance(n_layers, int) and any(not 0 <= layer < n_layers for layer in body.layers):
                raise InvalidInput(f"{kind} layers must be in [0, {n_layers}), got {body.layers}")


@router.post(
    "/attention",
    response_model=AttentionResponse,
    responses=ERROR_RESPONSES,
    summary="Attention behind an output",
    description=(
        "For `inputs` and either a `target` (forced decoding) or the model's own output (`target` null, "
        "generated with `parameters`), return source and target tokens with character offsets and the "
        "encoder self, decoder self and cross attention probabilities, selected by `kinds`, `layers` and "
        "`heads`, optionally averaged over heads.\n\n"
        "Layout (BertViz's): `encoder_attention`, `decoder_attention` and `cross_attention` hold one entry "
        "per "
        "layer listed in `layers[kind]`; each entry has shape **(1, heads, query_len, key_len)** — axis 0 a "
        "batch of one, axis 1 the heads listed in `heads` (size 1 with `mean_heads`), axis 2 the attending "
        "(query) position, axis 3 the attended (key) position. Encoder: (1, H, S, S); decoder: (1, H, T, T); "
        "cross: (1, H, T, S), where S = len(encoder_tokens) and T = len(decoder_tokens). With "
        '`"format": "base64"` each entry is `{dtype: "float16", shape, data}` (little-endian, C order).\n\n'
        "A JSON response can be passed to BertViz as is (converting each entry to a tensor): "
        "`model_view(encoder_attention=..., decoder_attention=..., cross_attention=..., encoder_tokens=..., "
        "decoder_tokens=...)`."
    ),
)
async def attention(request: Request, body: AttentionRequest) -> Response:
    engine = ready_engine(request)
    _check_selection(body, engine.info.config)
    if body.target is None:
        check_beam_attention(body.parameters)
        params = generation_params(body.parameters, settings_of(request))
    else:
        params = generation_params(body.parameters.model_copy(update={"num_beams": 1}), settings_of(request))
    spec = AttentionSpec(
        kinds=frozenset(body.kinds),
        layers=tuple(body.layers) if body.layers is not None else None,
        heads=tuple(body.heads) if body.heads is not None else None,
    )
    settings = settings_of(request)
    params = replace(params, timeout_s=engine_timeout_s(request, settings))  # one deadline for the whole request

    async def answer() -> bytes:
        await prepare_long_inputs(engine, [body.inputs])
        check_attention_floor(
            engine,
            [body.inputs],
            budget=settings.max_attention_cells,
            kinds=body.kinds,
            layers=body.layers,
            heads=body.heads,
            mean_heads=body.mean_heads,
        )
        handle = engine.submit(body.inputs, params, attention=spec, forced_target=body.target, stream=False)
        [result] = await results_or_disconnect([handle], request.receive)
        check_attention_budget([result], mean_heads=body.mean_heads, budget=settings.max_attention_cells)

        def build() -> dict[str, Any]:
            _, offsets = engine.tokenize(body.inputs)
            return attention_body(
                result,
                source_text=body.inputs,
                source_offsets=offsets,
                forced=body.target is not None,
                mean_heads=body.mean_heads,
                encoding=body.format,
                labels=engine.info.special_labels,
                output_labels=engine.info.output_labels,
            )

        return await render_json(build, offload=True)  # proportional to the selection: never on the loop

    return Response(await within_deadline(request, settings, answer()), media_type="application/json")
