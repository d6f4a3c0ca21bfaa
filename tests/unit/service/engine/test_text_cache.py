"""TextMemo: what it computes once and what again; TokenEvent.with_text."""

from __future__ import annotations

from service.engine.text_cache import MEMO_MIN_CHARS, TextMemo
from service.engine.types import TokenEvent


def counting_memo() -> tuple[TextMemo[int], list[str]]:
    computed: list[str] = []

    def compute(text: str) -> int:
        computed.append(text)
        return len(text)

    return TextMemo(compute), computed


def test_a_short_text_read_twice_in_a_row_is_computed_once() -> None:
    memo, computed = counting_memo()
    assert memo("tres de mayo") == memo("tres de mayo") == 12
    assert computed == ["tres de mayo"]


def test_only_the_latest_short_text_is_kept() -> None:
    memo, computed = counting_memo()
    for text in ("uno", "dos", "uno", "uno"):
        memo(text)
    assert computed == ["uno", "dos", "uno"]


def test_long_texts_are_kept_beside_the_latest_short_one() -> None:
    memo, computed = counting_memo()
    long_a, long_b = "a" * MEMO_MIN_CHARS, "b" * MEMO_MIN_CHARS
    for text in (long_a, "corto", long_b, long_a, "corto"):
        memo(text)
    assert computed == [long_a, "corto", long_b]  # a long text does not displace the latest short one


def test_with_text_returns_the_same_event_for_the_same_text() -> None:
    event = TokenEvent(7, "mayo", -0.5, False)
    assert event.with_text("mayo") is event
    changed = event.with_text("Mayo")
    assert changed == TokenEvent(7, "Mayo", -0.5, False)
