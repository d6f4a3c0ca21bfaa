"""Request and response bodies: Hugging Face text-generation-inference's generate API plus atento's attention.

Pydantic models only (they feed validation and the OpenAPI schema); no engine or HTTP logic here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from service.engine.types import MAX_LENGTH_PENALTY

AttentionKind = Literal["encoder", "decoder", "cross"]
FinishReason = Literal["length", "eos_token", "stop_sequence"]

# Examples the bundled normalizer rewrites (text it copies unchanged would show nothing).
_EXAMPLE_INPUT = "El artículo se publicó el tres de mayo de dos mil uno."
_EXAMPLE_OUTPUT = "El artículo se publicó el 2001-05-03."
_EXAMPLE_EN = "We sold one thousand, two hundred and thirty-four copies."
# The schema's own ceiling on lists (the server's max_batch_inputs is lower): validation stops at the
# length instead of checking, and then reporting, each of 100,000 items (seconds on the event loop).
MAX_LIST_INPUTS = 1024
MAX_BAD_WORDS = 256  # per request: each is checked against every row's history at every step


def _encodable(value: str) -> str:
    """Refuse unpaired surrogates: JSON can escape them ("\\ud800"), the tokenizer cannot encode them."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError("must be valid Unicode text (no unpaired surrogates)") from error
    return value


Text = Annotated[str, AfterValidator(_encodable)]  # pydantic already refuses them in min_length strings


class GenerateParameters(BaseModel):
    """TGI's `parameters`, plus atento's `num_beams`, `length_penalty` and `return_attention`.

    TGI fields atento does not implement are accepted at their neutral value (what
    huggingface_hub sends by default; a debug log names them) and refused with 422 otherwise. Any other
    key is a 422 naming it: a misspelt `max_tokens` or `num_beam` must not be dropped silently.
    """

    # Every key a client may send is a field here (TGI's GenerateParameters, which huggingface_hub's
    # InferenceClient.text_generation sends in full, and atento's own). Strict: "5" or true is not a
    # max_new_tokens (no coercion).
    model_config = ConfigDict(extra="forbid", strict=True)

    max_new_tokens: int | None = Field(
        None, ge=1, description="Most tokens to generate; default and ceiling from the server's limits."
    )
    do_sample: bool = Field(False, description="Sample instead of greedy or beam search.")
    temperature: float | None = Field(None, gt=0, description="Softmax temperature when sampling (> 0).")
    top_k: int | None = Field(None, ge=1, description="Sample from the k most likely tokens.")
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling mass, in (0, 1].")
    seed: int | None = Field(None, ge=0, description="Sampling seed; the response reports the one used.")
    stop: list[Text] = Field(
        default_factory=list,
        max_length=8,
        description="Stop sequences; the generated text keeps the stop string (finish_reason stop_sequence).",
    )
    repetition_penalty: float | None = Field(None, gt=0, description="CTRL-style penalty (> 0, 1 = none).")
    details: bool = Field(False, description="Return `details` (finish reason, tokens with logprobs, seed).")
    decoder_input_details: bool = Field(
        False,
        description="Also return `details.prefill`: the source tokens (logprob null: they are not scored).",
    )
    return_full_text: bool | None = Field(False, description="Prefix the input to `generated_text`.")
    num_beams: int = Field(1, ge=1, description="atento extension: beam width (> 1 = beam search, no sampling).")
    length_penalty: float = Field(
        1.0,
        ge=-MAX_LENGTH_PENALTY,
        le=MAX_LENGTH_PENALTY,
        description="atento extension: beam score / length ** length_penalty.",
    )
    return_attention: bool = Field(
        False,
        description="atento extension: add `attention` (all kinds, layers and heads, JSON numbers; "
        "the layout "
        "of POST /attention) to each response. Not available when streaming.",
    )
    no_repeat_ngram_size: int | None = Field(
        None,
        ge=0,
        description="atento extension (transformers' generate() parameter): no n-gram of this many tokens occurs "
        "twice in the output, in greedy, sampling and beam search; 0 = off; null = the model's default "
        "(an imported model's generation_config.json).",
    )
    bad_words: list[Text] = Field(
        default_factory=list,
        max_length=MAX_BAD_WORDS,
        description="atento extension (vLLM's bad_words): words never generated. Each is tokenized alone and after "
        "a space (a byte-level BPE spells them differently) and banned as transformers' bad_words_ids bans a "
        "sequence; added to the model's own bad words.",
    )
    bad_words_ids: list[Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1, max_length=64)]] = Field(
        default_factory=list,
        max_length=MAX_BAD_WORDS,
        description="atento extension (transformers' generate(bad_words_ids=...)): token id sequences never "
        "generated (the last id is banned after the others); added to the model's own bad words.",
    )
    source_language: str | None = Field(
        None,
        max_length=64,
        description="atento extension, for models whose GET /info lists `languages` (NLLB, M2M100, mBART-50): "
        "the source's language code (as `spa_Latn`, `__es__`, `es_XX`), put where the tokenizer puts it. "
        "null = the one the model was saved with. A model without languages, or whose source carries no "
        "language code, answers 422.",
    )
    target_language: str | None = Field(
        None,
        max_length=64,
        description="atento extension, for models whose GET /info lists `languages`: the language to generate, "
        "its code forced as the first token (transformers' forced_bos_token_id); with POST /attention's "
        "`target`, the code is put before the target. null = the model's default. Unknown codes and models "
        "without languages answer 422.",
    )
    # TGI parameters that atento does not implement: neutral values only.
    best_of: int | None = Field(None, description="Not supported: null or 1.")
    typical_p: float | None = Field(None, description="Not supported: null.")
    frequency_penalty: float | None = Field(None, description="Not supported: null or 0.")
    truncate: int | None = Field(None, description="Not supported: null.")
    watermark: bool = Field(False, description="Not supported: false.")
    top_n_tokens: int | None = Field(None, description="Not supported: null or 0.")
    grammar: Any | None = Field(None, description="Not supported: null.")
    adapter_id: str | None = Field(None, description="Not supported: null.")

    @field_validator("stop")
    @classmethod
    def _stop_not_empty(cls, value: list[str]) -> list[str]:
        if any(not s for s in value):
            raise ValueError("stop sequences must be non-empty strings")
        return value

    def ignored(self) -> list[str]:
        """Return the names of TGI parameters atento does not implement that the client sent (neutral values)."""
        return sorted(self.model_fields_set & _NOT_IMPLEMENTED)

    def unsupported(self) -> list[str]:
        """Return the names of TGI parameters set to something atento cannot honour."""
        bad = []
        if self.best_of not in (None, 1):
            bad.append("best_of")
        if self.typical_p is not None:
            bad.append("typical_p")
        if self.frequency_penalty not in (None, 0, 0.0):
            bad.append("frequency_penalty")
        if self.truncate is not None:
            bad.append("truncate")
        if self.watermark:
            bad.append("watermark")
        if self.top_n_tokens not in (None, 0):
            bad.append("top_n_tokens")
        if self.grammar is not None:
            bad.append("grammar")
        if self.adapter_id is not None:
            bad.append("adapter_id")
        return bad


# TGI's parameters that GenerateParameters accepts only at their neutral value (see unsupported()).
_NOT_IMPLEMENTED = frozenset(
    {"best_of", "typical_p", "frequency_penalty", "truncate", "watermark", "top_n_tokens", "grammar", "adapter_id"}
)


class GenerateRequest(BaseModel):
    """Body of POST /generate, POST /generate_stream and POST / (TGI's compat route)."""

    model_config = ConfigDict(
        strict=True,  # "stream": "yes" is an error, not true
        json_schema_extra={
            "examples": [
                {"inputs": _EXAMPLE_INPUT},
                {"inputs": _EXAMPLE_INPUT, "parameters": {"details": True, "num_beams": 4}},
                {"inputs": [_EXAMPLE_INPUT, _EXAMPLE_EN], "parameters": {"max_new_tokens": 64}},
                {"inputs": _EXAMPLE_EN, "stream": True},
            ]
        },
    )

    inputs: (
        Annotated[str, Field(min_length=1)]
        | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=MAX_LIST_INPUTS)]
    ) = Field(description="Source text, or a list of them (the response is then a list).")
    parameters: GenerateParameters = Field(default_factory=GenerateParameters)
    stream: bool = Field(False, description="POST / only: stream Server-Sent Events as /generate_stream does.")


class Token(BaseModel):
    id: int
    text: str
    logprob: float | None = None
    special: bool = False


class PrefillToken(BaseModel):
    id: int
    text: str
    logprob: float | None = None


class RevertedEdit(BaseModel):
    source: str = Field(description="The source text the guard kept.")
    output: str = Field(description="What the model had written in its place.")


class EditGuardDetails(BaseModel):
    """atento extension: what the model directory's edit guard did to this output."""

    reverted: list[RevertedEdit] = Field(
        description="Spans of the model's output that broke the model's edit guard and were replaced by their "
        "source text (empty: the output is the model's own). `tokens` are the model's, before the guard."
    )


_EDIT_GUARD = (
    "atento extension: present when the model declares an edit guard (and ATENTO_EDIT_GUARD is on); "
    "null for requests that ask for attention, whose output is always the model's own."
)


class Details(BaseModel):
    finish_reason: FinishReason
    generated_tokens: int
    seed: int | None = None
    prefill: list[PrefillToken] = Field(default_factory=list)
    tokens: list[Token] = Field(default_factory=list)
    top_tokens: list[list[Token]] | None = None
    best_of_sequences: None = None
    edit_guard: EditGuardDetails | None = Field(None, description=_EDIT_GUARD)


class StreamDetails(BaseModel):
    finish_reason: FinishReason
    generated_tokens: int
    seed: int | None = None
    edit_guard: EditGuardDetails | None = Field(
        None, description=_EDIT_GUARD + " Applies to `generated_text`; the streamed tokens are the model's own."
    )


class StreamResponse(BaseModel):
    """One Server-Sent Event of /generate_stream: `data:{...}` per token; the last carries the totals."""

    index: int
    token: Token
    top_tokens: list[Token] | None = None
    generated_text: str | None = None
    details: StreamDetails | None = None


class EncodedArray(BaseModel):
    """A float array as base64: little-endian `dtype` values in C (row-major) order of `shape`."""

    dtype: Literal["float16"] = "float16"
    shape: list[int] = Field(description="(1, heads, query_len, key_len)")
    data: str = Field(description="base64 of the raw little-endian bytes")


LayerAttention = list[list[list[list[float]]]] | EncodedArray

_SHAPES = (
    "One entry per selected layer (in `layers` order), each of shape (1, heads, query_len, key_len): "
    "axis 0 is "
    "a batch of one (BertViz's layout), axis 1 the selected heads (`heads` order; one when `mean_heads`), "
    "axis 2 the attending position, axis 3 the attended position; each row sums to 1 over the "
    "real keys. JSON numbers, or EncodedArray when format is base64."
)


class AttentionRequest(BaseModel):
    """Body of POST /attention."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,  # layer and head indices are JSON integers, mean_heads a JSON boolean
        json_schema_extra={
            "examples": [
                {"inputs": _EXAMPLE_INPUT, "target": _EXAMPLE_OUTPUT},
                {"inputs": _EXAMPLE_INPUT, "kinds": ["cross"], "layers": [0], "mean_heads": True},
                {"inputs": _EXAMPLE_EN, "format": "base64", "parameters": {"max_new_tokens": 64}},
            ]
        },
    )

    inputs: str = Field(min_length=1, description="Source text.")
    target: Text | None = Field(
        None, description="Target text to force-decode (teacher forcing); null = the model's own output."
    )
    parameters: GenerateParameters = Field(
        default_factory=GenerateParameters, description="How to generate when `target` is null."
    )
    kinds: list[AttentionKind] = Field(
        default_factory=lambda: list[AttentionKind](["encoder", "decoder", "cross"]),
        min_length=1,
        max_length=3,
        description="Which attention to return: encoder self, decoder (masked) self, cross.",
    )
    layers: list[int] | None = Field(
        None, min_length=1, max_length=256, description="Layer indices (0-based); null = all."
    )
    heads: list[int] | None = Field(
        None, min_length=1, max_length=256, description="Head indices (0-based); null = all."
    )
    mean_heads: bool = Field(False, description="Average over the selected heads (heads axis of size 1).")
    format: Literal["json", "base64"] = Field("json", description="base64 float16 for large payloads.")


class AlignedToken(BaseModel):
    id: int
    text: str
    start: int = Field(description="Character offset of the token's first character in its text.")
    end: int = Field(description="Character offset one past its last character (start == end: special).")
    special: bool = False


class AttentionResponse(BaseModel):
    """Attention in BertViz's layout: `bertviz.model_view(**{k: response[k] for k in (...)})`."""

    source_text: str
    target_text: str = Field(description="The forced target or the generated text.")
    forced: bool = Field(description="True when `target` was given (teacher forcing).")
    finish_reason: FinishReason | None = Field(None, description="Only when the model generated the target.")
    source_tokens: list[AlignedToken] = Field(description="Source tokens (with EOS) and offsets in source_text.")
    target_tokens: list[AlignedToken] = Field(
        description="Output tokens and offsets in target_text; decoder position i predicted target_tokens[i]."
    )
    encoder_tokens: list[str] = Field(description="Labels of the S encoder positions (key/query axes).")
    decoder_tokens: list[str] = Field(
        description="Labels of the T decoder positions: the token each position reads (BOS first)."
    )
    layers: dict[str, list[int]] = Field(description="Per kind (encoder, decoder, cross): the layer of each entry.")
    heads: list[int] = Field(description="Heads along axis 1; before averaging when mean_heads.")
    mean_heads: bool
    format: Literal["json", "base64"]
    encoder_attention: list[LayerAttention] | None = Field(None, description="Encoder self: (1, H, S, S). " + _SHAPES)
    decoder_attention: list[LayerAttention] | None = Field(
        None, description="Decoder masked self: (1, H, T, T), zero above the diagonal. " + _SHAPES
    )
    cross_attention: list[LayerAttention] | None = Field(None, description="Cross: (1, H, T, S). " + _SHAPES)


class GenerateResponse(BaseModel):
    generated_text: str
    details: Details | None = None
    attention: AttentionResponse | None = Field(None, description="Only with parameters.return_attention.")


class ErrorResponse(BaseModel):
    """The one error body of every endpoint (TGI's)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"error": "queue full", "error_type": "overloaded"}]})

    error: str
    error_type: str


class HealthStatus(BaseModel):
    status: str
