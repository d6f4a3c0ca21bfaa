from __future__ import annotations

from service.engine.errors import (
    STATUS_BY_ERROR,
    DeadlineExceeded,
    InferenceFailed,
    InputTooLong,
    InvalidInput,
    ModelLoadError,
    ModelNotReady,
    Overloaded,
    ServingError,
    Unauthorized,
    status_for,
)


def test_status_table() -> None:
    assert {cls.__name__: code for cls, code in STATUS_BY_ERROR.items()} == {
        "InvalidInput": 422,
        "InputTooLong": 413,
        "Overloaded": 429,
        "ModelNotReady": 503,
        "DeadlineExceeded": 504,
        "Unauthorized": 401,
        "UnsupportedMediaType": 415,
        "HeadersTooLarge": 431,
        "BodyTimeout": 408,
        "InferenceFailed": 500,
        "ModelLoadError": 503,
        "ServingError": 500,
    }
    assert status_for(Overloaded("full", retry_after_s=2)) == 429
    assert status_for(DeadlineExceeded("late")) == 504


def test_payloads() -> None:
    assert Overloaded("queue full").payload() == {"error": "queue full", "error_type": "overloaded"}
    body = InferenceFailed("boom", error_id="abc").payload()
    assert body == {"error": "boom", "error_type": "inference_failed", "error_id": "abc"}
    kinds = [InvalidInput, InputTooLong, ModelNotReady, Unauthorized, ModelLoadError]
    assert len({k("x").error_type for k in kinds}) == len(kinds)
    assert all(issubclass(k, ServingError) for k in kinds)
