"""Segmentation of long inputs: pieces within the limit at sentence boundaries and line breaks, joined
back byte for byte; and JoinedHandle, which joins the pieces' tokens and results."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.case_folding import CaseFolding
from service.engine.edit_guard import EditGuard, GuardedText
from service.engine.errors import InputTooLong, ModelLoadError
from service.engine.handle import RequestHandle
from service.engine.joined_handle import JOIN_ON_LOOP_CHARS, JoinedHandle
from service.engine.pieces import TextRules
from service.engine.segmentation import Piece, SegmentationSpec, Segmented, split_text, units
from service.engine.types import GenerationResult, TokenEvent

SPEC = SegmentationSpec(segmenter="sentencex", language="es")


def words(text: str) -> int:
    """A stand-in token count: one per word, plus EOS."""
    return len(text.split()) + 1


def test_units_are_lines_and_the_sentences_of_a_long_line() -> None:
    text = "Llegó el tres de mayo. Se fue.\nOtra línea sin punto\n\nY otra.  "
    assert units(text, SPEC, fits=lambda t: True) == [
        "Llegó el tres de mayo. Se fue.\n",
        "Otra línea sin punto\n\n",
        "Y otra.  ",
    ]
    short = units(text, SPEC, fits=lambda t: len(t) < 25)
    assert short == ["Llegó el tres de mayo. ", "Se fue.\n", "Otra línea sin punto\n\n", "Y otra.  "]


def test_pieces_pack_sentences_greedily_within_the_limit() -> None:
    text = "  Uno dos tres. Cuatro cinco seis.\nSiete ocho.\n\nNueve diez once doce.\r\n"
    plan = split_text(text, SPEC, count_tokens=words, limit=7)
    assert [p.text for p in plan.pieces] == ["Uno dos tres. Cuatro cinco seis.", "Siete ocho.\n\nNueve diez once doce."]
    assert [p.before for p in plan.pieces] == ["  ", "\n"]
    assert plan.after == "\r\n"
    assert all(words(p.text) <= 7 for p in plan.pieces)
    assert plan.join([p.text for p in plan.pieces]) == text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Hola", "mundo.", "Sí!", " ", "\n", "\n\n", "  ", "¿Qué?", "\t", "x"]), max_size=40))
def test_joining_the_pieces_gives_back_the_text(parts: list[str]) -> None:
    text = "".join(parts)
    if any(words(unit.strip()) > 4 for unit in units(text, SPEC, fits=lambda t: words(t) <= 4)):
        with pytest.raises(InputTooLong):  # a sentence alone over the limit
            split_text(text, SPEC, count_tokens=words, limit=4)
        return
    plan = split_text(text, SPEC, count_tokens=words, limit=4)
    assert plan.join([p.text for p in plan.pieces]) == text
    assert all(p.text and p.text == p.text.strip() for p in plan.pieces)
    assert all(words(p.text) <= 4 for p in plan.pieces)


def test_a_declared_piece_size_packs_smaller_pieces_and_a_longer_sentence_stands_alone() -> None:
    spec = SegmentationSpec(segmenter="sentencex", language="es", piece_tokens=6)
    text = "Uno dos tres. Cuatro cinco. Seis siete ocho nueve diez once. Doce."
    plan = split_text(text, spec, count_tokens=words, limit=20)
    assert [p.text for p in plan.pieces] == ["Uno dos tres. Cuatro cinco.", "Seis siete ocho nueve diez once.", "Doce."]
    assert plan.join([p.text for p in plan.pieces]) == text


def test_split_lines_makes_every_line_a_piece() -> None:
    spec = SegmentationSpec(segmenter="sentencex", language="es", split_lines=True)
    text = "Uno dos.\nTres.\n\nCuatro cinco. Seis.\n"
    plan = split_text(text, spec, count_tokens=words, limit=20)
    assert [p.text for p in plan.pieces] == ["Uno dos.", "Tres.", "Cuatro cinco. Seis."]
    assert plan.join([p.text for p in plan.pieces]) == text


def test_a_sentence_over_the_limit_says_the_limit_in_tokens_and_characters() -> None:
    text = "Corta. " + "palabra " * 20 + "final."
    with pytest.raises(InputTooLong) as caught:
        split_text(text, SPEC, count_tokens=words, limit=8)
    message = caught.value.message
    assert "the limit is 8 tokens, about " in message
    assert "characters (estimated from this input's" in message
    assert "22 tokens" in message  # the sentence's own count


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ("sentencex", "'segmentation'"),
        ({"segmenter": "regex", "language": "es"}, "segmentation.segmenter"),
        ({"segmenter": "sentencex"}, "segmentation.language"),
        ({"segmenter": "sentencex", "language": "es es"}, "segmentation.language"),
        ({"segmenter": "sentencex", "language": "es", "max": 3}, "unknown keys"),
    ],
)
def test_a_bad_manifest_entry_names_the_field(entry: Any, field: str) -> None:
    with pytest.raises(ModelLoadError, match=field):
        SegmentationSpec.from_manifest(entry, where="manifest.json")


# ---- JoinedHandle, fed by hand as the engine's worker would ----


def _event(text: str, token_id: int = 7, *, special: bool = False) -> TokenEvent:
    return TokenEvent(id=token_id, text=text, logprob=-0.5, special=special)


def _result(texts: list[str], *, finish: str = "eos") -> GenerationResult:
    tokens = [_event(t, i) for i, t in enumerate(texts)]
    if finish == "eos":
        tokens.append(_event("", 2, special=True))
    return GenerationResult(
        text="".join(texts),
        token_ids=list(range(len(texts))),
        tokens=tokens,
        finish_reason=finish,
        input_token_ids=[5, 2],
        seed=None,
    )


PLAN = Segmented(
    pieces=(Piece(before="\n", text="uno dos"), Piece(before=" ", text="tres"), Piece(before="\n\n", text="cuatro")),
    after="\n",
)


def _handles(loop: asyncio.AbstractEventLoop, *, stream: bool) -> tuple[list[RequestHandle], list[str]]:
    cancelled: list[str] = []
    handles = [RequestHandle(f"r{i}", loop, lambda i, reason: cancelled.append(i), stream=stream) for i in range(3)]
    return handles, cancelled


def _feed(handles: list[RequestHandle], results: list[GenerationResult], order: list[int]) -> None:
    for index in order:
        for event in results[index].tokens:
            handles[index].push(event)
        handles[index].finish(results[index])


def test_tokens_stream_in_piece_order_and_join_like_the_result() -> None:
    async def run() -> tuple[list[TokenEvent], GenerationResult]:
        loop = asyncio.get_running_loop()
        handles, _ = _handles(loop, stream=True)
        joined = JoinedHandle(
            handles, PLAN, guard=None, on_reverted=lambda n: None, input_token_ids=[1, 2, 3], stream=True
        )
        results = [_result(["uno", " dos"]), _result(["tres"], finish="length"), _result(["cua", "tro"])]
        _feed(handles, results, [2, 0, 1])  # the last piece finishes first
        events = [event async for event in joined]
        return events, await joined.result()

    events, result = asyncio.run(run())
    assert [e.text for e in events] == ["\nuno", " dos", " tres", "\n\ncua", "tro", "\n"]  # two EOS dropped
    assert events[-1].special  # the last piece's EOS, carrying the whitespace after it
    assert result.tokens == events
    assert result.text == "\nuno dos tres\n\ncuatro\n" == "".join(e.text for e in events)
    assert result.finish_reason == "length"
    assert result.token_ids == [0, 1, 0, 0, 1]
    assert result.input_token_ids == [1, 2, 3]
    assert result.edit_guard is None


def test_the_guard_runs_per_piece_and_counts_what_it_reverts() -> None:
    guard = EditGuard(frozenset({"dos", "tres"}), frozenset("0123456789"), frozenset("0123456789"))
    counted: list[int] = []

    async def run() -> GenerationResult:
        loop = asyncio.get_running_loop()
        handles, _ = _handles(loop, stream=False)
        joined = JoinedHandle(
            handles, PLAN, guard=guard, on_reverted=counted.append, input_token_ids=None, stream=False
        )
        _feed(handles, [_result(["uno 2"]), _result(["3"]), _result(["cinco"])], [0, 1, 2])
        return await joined.result()

    result = asyncio.run(run())
    assert result.text == "\nuno 2 3\n\ncuatro\n"
    assert [(r.source, r.output) for r in result.edit_guard or ()] == [("cuatro", "cinco")]
    assert counted == [1]


def test_the_capitals_come_back_on_tokens_stream_and_text_after_the_guard() -> None:
    """The guard reads the folded source the model read; the capitals come back after it, and a streamed token
    waits until the word after it is complete."""
    guard = EditGuard(frozenset({"dos", "tres"}), frozenset("0123456789"), frozenset("0123456789"))
    folding = CaseFolding(keep_words=frozenset())
    plan = Segmented(pieces=(Piece(before="", text="Uno Dos Ana"), Piece(before="\n", text="Tres Cuatro")), after="")

    async def run(stream: bool) -> tuple[list[TokenEvent], GenerationResult]:
        loop = asyncio.get_running_loop()
        handles = [RequestHandle(f"r{i}", loop, lambda i, reason: None, stream=stream) for i in range(2)]
        joined = JoinedHandle(
            handles, plan, guard=guard, case=folding, on_reverted=lambda n: None, input_token_ids=None, stream=stream
        )
        _feed(handles, [_result(["uno", " 2", " an", "a"]), _result(["3", " cinco"])], [0, 1])
        events = [event async for event in joined] if stream else []
        return events, await joined.result()

    events, result = asyncio.run(run(stream=True))
    assert [e.text for e in events] == ["Uno", " 2", " An", "a", "\n3", " cinco", ""]  # "cinco" copies nothing
    assert result.tokens == events
    assert result.text == "Uno 2 Ana\n3 Cuatro"  # "cinco" was no copy: the guard put the source back
    # The span put back is reported as the client sent it, not as the model read it.
    assert [(r.source, r.output) for r in result.edit_guard or ()] == [("Cuatro", "cinco")]
    assert asyncio.run(run(stream=False))[1].text == result.text


def test_a_stop_sequence_ends_the_output_with_its_piece() -> None:
    async def run() -> tuple[list[TokenEvent], GenerationResult]:
        loop = asyncio.get_running_loop()
        handles, _ = _handles(loop, stream=True)
        joined = JoinedHandle(handles, PLAN, guard=None, on_reverted=lambda n: None, input_token_ids=None, stream=True)
        results = [_result(["uno"]), _result(["tr"], finish="stop_sequence"), _result(["x"])]
        _feed(handles, results, [0, 1])  # the last piece has not finished: nobody waits for it
        events = [event async for event in joined]
        return events, await joined.result()

    events, result = asyncio.run(run())
    assert result.text == "\nuno tr" == "".join(e.text for e in events)
    assert result.finish_reason == "stop_sequence"


def test_a_failed_piece_fails_the_request_and_cancel_reaches_every_piece() -> None:
    async def run() -> list[str]:
        loop = asyncio.get_running_loop()
        handles, cancelled = _handles(loop, stream=False)
        joined = JoinedHandle(handles, PLAN, guard=None, on_reverted=lambda n: None, input_token_ids=None, stream=False)
        joined.cancel()
        handles[1].finish(InputTooLong("boom"))
        with pytest.raises(InputTooLong):
            await joined.result()
        with pytest.raises(RuntimeError):
            joined.__aiter__()
        return cancelled

    assert asyncio.run(run()) == ["r0", "r1", "r2"]


def test_more_pieces_than_a_request_may_hold_is_too_long_not_overloaded() -> None:
    """The queue holds max_pieces requests: a document of more lines could never be queued, so it is a 413
    that says what to do, not a 429 to retry forever."""
    rules = TextRules(
        guard=None,
        segmentation=SegmentationSpec(segmenter="sentencex", language="es", split_lines=True),
        encode=lambda text: [0] * words(text),
        max_source_tokens=16,
        max_pieces=3,
    )
    submitted: list[str] = []

    async def submit_both() -> None:
        loop = asyncio.get_running_loop()

        def submit_one(text: str, group: str | None) -> RequestHandle:
            submitted.append(text)
            return RequestHandle(text, loop, lambda request_id, reason: None)

        options: dict[str, Any] = {"attention": False, "forced": False, "stream": False, "on_reverted": print}
        with pytest.raises(InputTooLong) as caught:
            rules.submit("uno\ndos\ntres\ncuatro", submit_one, **options)
        assert "4 pieces" in caught.value.message and "at most 3" in caught.value.message and not submitted
        rules.submit("uno\ndos\ntres", submit_one, **options)

    asyncio.run(submit_both())
    assert submitted == ["uno", "dos", "tres"]


@pytest.mark.parametrize(("repeat", "off_the_loop"), [(1, False), (40, True)])
def test_the_guard_reads_a_long_text_off_the_event_loop(repeat: int, off_the_loop: bool) -> None:
    """A short text is joined where its last piece finishes; a longer one (over JOIN_ON_LOOP_CHARS) in a thread, so
    that the guard's reading of a long list of numbers does not hold every other request."""
    guard = EditGuard(frozenset({"dos", "tres"}), frozenset("0123456789"), frozenset("0123456789"))
    threads: list[threading.Thread] = []
    original = EditGuard.apply

    def recording(self: EditGuard, source: str, output: str, *, cased_source: str | None = None) -> GuardedText:
        threads.append(threading.current_thread())
        return original(self, source, output, cased_source=cased_source)

    plan = Segmented(pieces=tuple(Piece(before=" ", text="dos tres " * repeat) for _ in range(3)), after="")
    assert (sum(len(piece.text) for piece in plan.pieces) > JOIN_ON_LOOP_CHARS) is off_the_loop

    async def run() -> GenerationResult:
        loop = asyncio.get_running_loop()
        handles, _ = _handles(loop, stream=False)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(EditGuard, "apply", recording)
            joined = JoinedHandle(handles, plan, guard=guard, on_reverted=print, input_token_ids=None, stream=False)
            _feed(handles, [_result(["2 3 " * repeat])] * 3, [0, 1, 2])
            return await joined.result()

    result = asyncio.run(run())
    assert result.text == (" " + "2 3 " * repeat) * 3
    assert len(threads) == 3
    assert all((thread is not threading.main_thread()) is off_the_loop for thread in threads)
