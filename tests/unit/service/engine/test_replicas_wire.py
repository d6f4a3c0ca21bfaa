"""What crosses between the serving process and an engine process (service/engine/replicas.py): errors with
their keyword-only fields, results with their tokens, attention and edit-guard spans, and a refusal's admission."""

from __future__ import annotations

import asyncio
import pickle

import numpy as np
import pytest

from service.engine.edit_guard import RevertedEdit
from service.engine.errors import InferenceFailed, InputTooLong, Overloaded
from service.engine.replica_link import RelayedHandle
from service.engine.replica_wire import packed_error, packed_result, unpacked_error, unpacked_result
from service.engine.types import Attention, GenerationResult, TokenEvent


def _across(value: object) -> object:
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def test_errors_keep_their_type_and_fields() -> None:
    overloaded = unpacked_error(_across(packed_error(Overloaded("queue full", retry_after_s=2.5))))
    assert isinstance(overloaded, Overloaded) and overloaded.retry_after_s == 2.5 and overloaded.message == "queue full"
    failed = unpacked_error(_across(packed_error(InferenceFailed("boom", error_id="abc"))))
    assert isinstance(failed, InferenceFailed) and failed.error_id == "abc"
    assert isinstance(unpacked_error(_across(packed_error(InputTooLong("long")))), InputTooLong)
    # Anything else is a bug on the engine's side: logged there, an InferenceFailed with an id here.
    other = unpacked_error(_across(packed_error(KeyError("x"))))
    assert isinstance(other, InferenceFailed) and other.error_id in other.message


def test_a_result_crosses_whole() -> None:
    attention = Attention(
        encoder={0: np.ones((2, 3, 3), np.float32)},
        decoder={},
        cross={0: np.zeros((2, 4, 3), np.float32)},
        heads=(0, 1),
    )
    result = GenerationResult(
        text="El 2024",
        token_ids=[5, 6],
        tokens=[TokenEvent(5, "El", -0.5, False), TokenEvent(2, "", None, True)],
        finish_reason="eos",
        input_token_ids=[9, 2],
        seed=7,
        attention=attention,
        edit_guard=(RevertedEdit(source="El", output="Le", source_start=0),),
    )
    back = unpacked_result(_across(packed_result(result)))
    assert (back.text, back.token_ids, back.tokens, back.finish_reason) == ("El 2024", [5, 6], result.tokens, "eos")
    assert (back.input_token_ids, back.seed, back.edit_guard) == ([9, 2], 7, result.edit_guard)
    assert back.attention is not None
    np.testing.assert_array_equal(back.attention.encoder[0], attention.encoder[0])


def test_a_refusal_settles_both_admission_and_result() -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        refused = RelayedHandle("r1", loop, lambda request_id, reason: None, stream=True)
        refused.finish(Overloaded("full"))
        with pytest.raises(Overloaded):
            await refused.admitted()
        with pytest.raises(Overloaded):
            await refused.result()
        taken = RelayedHandle("r2", loop, lambda request_id, reason: None, stream=False)
        taken.admit()
        await taken.admitted()
        assert not taken.result().done()

    asyncio.run(run())
