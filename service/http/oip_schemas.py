"""The Open Inference Protocol's bodies (KServe V2 / Triton HTTP), for validation and for /docs.

The infer body is read by hand (service/http/oip_tensors.py: it may carry binary tensors after its JSON);
these models validate its JSON part and document every route's shape in the OpenAPI schema.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

TEXT_INPUT = "text_input"
TEXT_OUTPUT = "text_output"
TOKEN_IDS = "token_ids"
CROSS_ATTENTION = "cross_attention"
# Request parameters tritonclient itself sets (not generation parameters): accepted and left alone, except
# the binary one, which asks for every output as binary data.
TRANSPORT_PARAMETERS = frozenset({"binary_data_output", "priority", "timeout"})
TOKEN_PAD = -1  # token_ids rows are padded to the longest with this (no token has a negative id)


class OipError(BaseModel):
    error: str = Field(description="What went wrong.")
    error_type: str | None = Field(None, description="atento's machine-readable name for it.")


class TensorMetadata(BaseModel):
    name: str
    datatype: str = Field(description="BYTES, INT64 or FP32.")
    shape: list[int] = Field(description="-1 for a dimension of any size.")


class ServerMetadata(BaseModel):
    name: str
    version: str
    extensions: list[str]


class ModelMetadata(BaseModel):
    name: str
    versions: list[str] = Field(description="The served versions, newest first.")
    platform: str
    inputs: list[TensorMetadata]
    outputs: list[TensorMetadata]


class ModelReady(BaseModel):
    name: str
    version: str | None = None
    ready: bool


class RequestInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=64, description=f"{TEXT_INPUT!r}: the texts to generate from.")
    shape: list[int] = Field(max_length=2, description="[N] or [N, 1]: a batch of N texts.")
    datatype: str = Field(description="BYTES.")
    parameters: dict[str, Any] | None = Field(None, description="binary_data_size: the input's binary length.")
    data: list[Any] | None = Field(None, description="The texts, unless they are binary data after the JSON.")


class RequestOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=64, description=f"{TEXT_OUTPUT!r}, {TOKEN_IDS!r} or {CROSS_ATTENTION!r}.")
    parameters: dict[str, Any] | None = Field(None, description="binary_data: true for raw data after the JSON.")


class InferRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "inputs": [
                        {"name": TEXT_INPUT, "shape": [2], "datatype": "BYTES", "data": ["tres de mayo", "hola"]}
                    ],
                    "parameters": {"max_new_tokens": 32},
                    "outputs": [{"name": TEXT_OUTPUT}, {"name": TOKEN_IDS}],
                }
            ]
        },
    )

    id: str | None = Field(None, max_length=256, description="Echoed back in the response.")
    parameters: dict[str, Any] | None = Field(
        None,
        description="Generation parameters, as TGI's: max_new_tokens, do_sample, temperature, top_k, top_p, "
        "seed, num_beams, repetition_penalty, length_penalty, stop... (an unknown one is a 422 naming it).",
    )
    inputs: list[RequestInput] = Field(min_length=1, max_length=1, description=f"One BYTES tensor, {TEXT_INPUT!r}.")
    outputs: list[RequestOutput] | None = Field(
        None,
        max_length=3,
        description=f"Outputs to return; none = {TEXT_OUTPUT!r} and {TOKEN_IDS!r} ({CROSS_ATTENTION!r} only "
        "when asked: it is large).",
    )


class ResponseOutput(BaseModel):
    name: str
    datatype: str
    shape: list[int]
    parameters: dict[str, Any] | None = None
    data: list[Any] | None = None


class InferResponse(BaseModel):
    model_name: str
    model_version: str
    id: str | None = None
    outputs: list[ResponseOutput]


class RepositoryEntry(BaseModel):
    name: str
    version: str
    state: str = Field(description="READY, LOADING, DRAINING or UNAVAILABLE.")
    reason: str = Field(description="Why it is not READY: the load error, unloaded, the version policy.")


class RepositoryIndexRequest(BaseModel):
    ready: bool = Field(False, description="true: only the READY versions.")
