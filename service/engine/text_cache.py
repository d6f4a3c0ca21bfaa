"""Bounded, thread-safe memos of the text work `Engine.submit` does: tokenizing and segmenting.

`Engine.prepare(text)` fills them from a worker thread, so that the `submit` of a long input on the event
loop finds its tokens and its pieces ready instead of spending a second of the loop on them. Pure Python.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")

MEMO_MIN_CHARS = 256  # shorter texts are cheaper to tokenize again than to look up and keep
_MEMO_MAX_CHARS = 4_000_000  # the memo's keys (texts) in all, whatever their number


class TextMemo(Generic[V]):
    """`compute(text)`, remembered for texts of at least MEMO_MIN_CHARS characters, least recent dropped
    first once the remembered texts exceed a few million characters in all, and for the latest shorter text.
    Callers share a remembered value: they must not change it."""

    def __init__(self, compute: Callable[[str], V]) -> None:
        self._compute = compute
        self._values: OrderedDict[str, V] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        # The latest short text's value: submit reads a text twice (is it over the piece size? its ids), and
        # the second read was a second tokenizing. One (text, value) pair, replaced whole, so no lock.
        self._latest: tuple[str, V] | None = None

    def __call__(self, text: str) -> V:
        if len(text) < MEMO_MIN_CHARS:
            latest = self._latest
            if latest is not None and latest[0] == text:
                return latest[1]
            value = self._compute(text)
            self._latest = (text, value)
            return value
        with self._lock:
            if text in self._values:
                self._values.move_to_end(text)
                return self._values[text]
        value = self._compute(text)  # outside the lock: two threads may compute one text, never wait on it
        with self._lock:
            if text not in self._values:
                self._values[text] = value
                self._chars += len(text)
                while self._chars > _MEMO_MAX_CHARS and len(self._values) > 1:
                    old, _ = self._values.popitem(last=False)
                    self._chars -= len(old)
        return value
