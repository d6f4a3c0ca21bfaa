"""Request schemas: TGI compatibility (what huggingface_hub sends), validation, OpenAPI shapes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from service.http.schemas import AttentionRequest, GenerateParameters, GenerateRequest

# What InferenceClient.text_generation sends with every neutral default left in place.
HF_CLIENT_PARAMETERS = {
    "decoder_input_details": False,
    "details": True,
    "do_sample": False,
    "max_new_tokens": 20,
    "return_full_text": False,
    "watermark": False,
    "stop": [],
}


def test_huggingface_hub_payload_is_accepted():
    request = GenerateRequest.model_validate({"inputs": "x", "parameters": HF_CLIENT_PARAMETERS, "stream": False})
    assert request.parameters.unsupported() == []


# Every key of TGI's GenerateParameters (and of InferenceClient.text_generation's payload) at its neutral value.
TGI_NEUTRAL_PARAMETERS = {
    "adapter_id": None,
    "best_of": None,
    "decoder_input_details": False,
    "details": False,
    "do_sample": False,
    "frequency_penalty": None,
    "grammar": None,
    "max_new_tokens": 20,
    "repetition_penalty": None,
    "return_full_text": False,
    "seed": None,
    "stop": [],
    "temperature": None,
    "top_k": None,
    "top_n_tokens": None,
    "top_p": None,
    "truncate": None,
    "typical_p": None,
    "watermark": False,
}


def test_every_tgi_parameter_is_accepted_and_the_unimplemented_are_named_as_ignored():
    params = GenerateParameters.model_validate(TGI_NEUTRAL_PARAMETERS)
    assert params.unsupported() == []
    assert params.ignored() == [
        "adapter_id",
        "best_of",
        "frequency_penalty",
        "grammar",
        "top_n_tokens",
        "truncate",
        "typical_p",
        "watermark",
    ]
    assert GenerateParameters.model_validate({"max_new_tokens": 5}).ignored() == []


@pytest.mark.parametrize("key", ["max_tokens", "num_beam", "stop_sequence", "colour"])
def test_unknown_parameters_are_refused_naming_the_key(key):
    with pytest.raises(ValidationError) as error:
        GenerateRequest.model_validate({"inputs": "x", "parameters": {"max_new_tokens": 5, key: 1}})
    [problem] = error.value.errors()
    assert problem["loc"] == ("parameters", key) and problem["type"] == "extra_forbidden"


@pytest.mark.parametrize(
    "params",
    [
        {"best_of": 2},
        {"grammar": {"type": "json"}},
        {"watermark": True},
        {"typical_p": 0.5},
        {"truncate": 10},
        {"top_n_tokens": 3},
        {"adapter_id": "x"},
        {"frequency_penalty": 0.2},
    ],
)
def test_unsupported_tgi_parameters_are_named(params):
    assert GenerateParameters.model_validate(params).unsupported() == list(params)


@pytest.mark.parametrize(
    "params",
    [
        {"temperature": 0},
        {"top_p": 0},
        {"top_p": 1.01},
        {"top_k": 0},
        {"max_new_tokens": 0},
        {"num_beams": 0},
        {"stop": [""]},
        {"seed": -1},
        {"repetition_penalty": 0},
    ],
)
def test_invalid_parameters(params):
    with pytest.raises(ValidationError):
        GenerateParameters.model_validate(params)


def test_inputs_str_or_non_empty_list():
    assert GenerateRequest.model_validate({"inputs": ["a", "b"]}).inputs == ["a", "b"]
    for bad in ("", [], [""]):
        with pytest.raises(ValidationError):
            GenerateRequest.model_validate({"inputs": bad})


@given(
    st.lists(st.sampled_from(["encoder", "decoder", "cross"]), min_size=1, max_size=3),
    st.booleans(),
    st.sampled_from(["json", "base64"]),
)
def test_attention_request_round_trip(kinds, mean_heads, fmt):
    request = AttentionRequest.model_validate({"inputs": "x", "kinds": kinds, "mean_heads": mean_heads, "format": fmt})
    assert AttentionRequest.model_validate(request.model_dump()) == request


def test_attention_request_refuses_unknown_fields_and_kinds():
    for bad in (
        {"inputs": "x", "kinds": ["self"]},
        {"inputs": "x", "colour": 1},
        {"inputs": "x", "layers": []},
    ):
        with pytest.raises(ValidationError):
            AttentionRequest.model_validate(bad)
