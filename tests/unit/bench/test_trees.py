"""bench.trees and bench.profile_engine drive the engine with the request `POST /generate` makes by default."""

from __future__ import annotations

from dataclasses import dataclass

from bench.workload import generate_request
from service.engine import GenerationParams


def test_the_engine_alone_asks_for_no_log_probabilities_unless_told() -> None:
    """/generate without details asks for none; the engine's own default computes them for every token."""
    assert GenerationParams().token_logprobs is True
    default = generate_request(GenerationParams, token_logprobs=False)
    assert default == GenerationParams(max_new_tokens=64, token_logprobs=False)
    assert generate_request(GenerationParams, token_logprobs=True).token_logprobs is True


def test_a_tree_without_the_option_gets_its_own_default() -> None:
    """845a98d's GenerationParams has no token_logprobs (it computed them always): it must still load."""

    @dataclass(frozen=True)
    class OlderParams:
        max_new_tokens: int = 32

    assert generate_request(OlderParams, token_logprobs=False) == OlderParams(max_new_tokens=64)
