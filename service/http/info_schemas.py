"""GET /info's response body: the served model, its files, variant and provider, the server's limits and the model's
languages (service/http/routes/info.py builds it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Limits(BaseModel):
    max_source_tokens: int
    max_target_tokens: int
    max_new_tokens: int
    max_batch_inputs: int
    max_num_beams: int
    max_body_bytes: int
    request_timeout_s: float | None
    max_batch_size: int
    max_queue: int
    lanes: int = Field(description="Batches stepped side by side in each engine process (ATENTO_BATCHING__LANES).")
    engine_processes: int = Field(
        description="Whole engines in processes of their own behind this server (ATENTO_BATCHING__PROCESSES); "
        "max_batch_size and max_queue are shared out among them."
    )


class Languages(BaseModel):
    codes: dict[str, int] = Field(description="Language code -> its token id.")
    source: str | None = Field(description="The source language the model was saved with (null: none in the source).")
    target: str | None = Field(description="The target language it generates by default (null: none forced).")
    in_source: bool = Field(
        False, description='Multilingual Marian: target_language\'s code (">>fra<<") is written first in the source.'
    )


class InfoResponse(BaseModel):
    model_id: str = Field(description="name/version")
    model_name: str
    model_version: str
    architecture: dict[str, Any] = Field(description="The model's config (layers, heads, d_model, vocab...).")
    files: dict[str, str] = Field(description="sha256 of every model file.")
    variant: str
    execution_provider: str
    decoder_graphs: dict[str, str | None] = Field(
        default_factory=dict,
        description="The decoder graph files the engine runs: format_3 (each row's own cache and source length; "
        "steps of one token a row without attention weights) or null when it does not, and format_2 (the others).",
    )
    limits: Limits
    languages: Languages | None = Field(
        None, description="The language codes the model knows (parameters.source_language / target_language)."
    )
    version: str = Field(description="atento's version.")
    router: str = "atento"
