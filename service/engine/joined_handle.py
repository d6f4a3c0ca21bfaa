"""`JoinedHandle`: one request handle over the pieces of a long input (pieces.py submits them), joining their
token events and results exactly, with the edit guard (edit_guard.py) run on each piece's output and, when the
model folds case, the source's capitals put back (case_folding.py).

Runs on the event loop (a long text's join in a thread); no onnxruntime, no HTTP.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace

from service.engine.case_folding import CaseFolding, CaseRestorer
from service.engine.edit_guard import EditGuard, RevertedEdit
from service.engine.handle import RequestHandle, admitted_at_submit
from service.engine.segmentation import Segmented
from service.engine.types import GenerationResult, TokenEvent

# The guard reads every piece (a line of 60 number words: 30 ms; a sentence with a date: 1 ms): the join of a
# longer text runs off the event loop, which 250 lines of number words held for 86 s (2026-12-05).
JOIN_ON_LOOP_CHARS = 256


class _RestoredEvents:
    """A piece's token events with the source's capitals back (CaseRestorer): an event is released once
    its text is decided (the word it ends in is complete), in order, each as long as it came."""

    def __init__(self, restorer: CaseRestorer) -> None:
        self._restorer = restorer
        self._held: list[TokenEvent] = []
        self._decided = ""  # restored text not yet handed back in an event

    def push(self, event: TokenEvent) -> list[TokenEvent]:
        self._held.append(event)
        self._decided += self._restorer.push(event.text)
        return self._release()

    def finish(self) -> list[TokenEvent]:
        """Every event still held: call it once the piece's events have all been pushed."""
        self._decided += self._restorer.finish()
        return self._release()

    def every(self, events: Sequence[TokenEvent]) -> tuple[list[TokenEvent], str]:
        """A whole piece's events at once (a result's tokens), restored, and their text restored. The text is restored
        in one pass (a word is decided by the text after it alone, so in parts or whole it comes out the same), at
        half the cost of a pass per token."""
        restored = self._restorer.push("".join(event.text for event in events)) + self._restorer.finish()
        released: list[TokenEvent] = []
        at = 0
        for event in events:
            released.append(event.with_text(restored[at : at + len(event.text)]))
            at += len(event.text)
        return released, restored

    def _release(self) -> list[TokenEvent]:
        released: list[TokenEvent] = []
        while self._held and len(self._held[0].text) <= len(self._decided):
            event = self._held.pop(0)
            size = len(event.text)
            released.append(event.with_text(self._decided[:size]))
            self._decided = self._decided[size:]
        return released


class _TokenJoiner:
    """The pieces' token events, fed in piece order, as the joined request's events: the whitespace
    before a piece is put at the front of its first event, the whitespace after the last piece at the
    end of the final event; an EOS that ends a piece other than the last is dropped."""

    def __init__(self, plan: Segmented) -> None:
        self._plan = plan
        self._piece = 0
        self._pending = ""  # whitespace not yet placed
        self._held: TokenEvent | None = None  # held back one event, to carry the final whitespace

    def start(self, piece: int) -> None:
        self._piece = piece
        self._pending += self._plan.pieces[piece].before

    def push(self, event: TokenEvent) -> list[TokenEvent]:
        if event.special and self._piece < len(self._plan.pieces) - 1:
            return []
        if self._pending:
            event = event.with_text(self._pending + event.text)
            self._pending = ""
        out = [] if self._held is None else [self._held]
        self._held = event
        return out

    def end(self, *, truncated: bool) -> list[TokenEvent]:
        """Release the held event; after a stop sequence the text ends with it (nothing after)."""
        if self._held is None:
            return []
        tail = "" if truncated else self._pending + self._plan.after
        held, self._held = self._held, None
        return [held.with_text(held.text + tail)]


class JoinedHandle:
    """One request served as several model calls (or one, checked by the guard or given its capitals back):
    the GenerationHandle the engine returns for it.

    Tokens stream piece after piece (a later piece's tokens wait in its own handle); they are the
    model's own tokens, before the guard, with the whitespace between pieces on the first token of
    each (and, when the model folds case, the source's capitals on the words they copy). The result
    joins the pieces' guarded outputs with the whitespace between them put back;
    `finish_reason` is "stop_sequence" when a piece stopped (the output ends with that piece), else
    "length" when a piece ran out of max_new_tokens (each piece has the request's whole
    max_new_tokens), else "eos".
    """

    def __init__(
        self,
        handles: Sequence[RequestHandle],
        plan: Segmented,
        *,
        guard: EditGuard | None,
        case: CaseFolding | None = None,
        on_reverted: Callable[[int], None],
        input_token_ids: list[int] | None,
        stream: bool,
    ) -> None:
        self.id = handles[0].id
        self.stream = stream
        self._handles = list(handles)
        self._plan = plan
        self._guard = guard
        # A source that folding leaves as it is gets its output back as written: no capitals to restore.
        self._case = case if case is not None and any(case.fold(p.text) != p.text for p in plan.pieces) else None
        self._on_reverted = on_reverted
        self._input_token_ids = input_token_ids
        self._results: list[GenerationResult | None] = [None] * len(handles)
        self._result: asyncio.Future[GenerationResult] = asyncio.get_running_loop().create_future()
        for index, handle in enumerate(self._handles):
            handle.result().add_done_callback(functools.partial(self._settle, index))

    def __aiter__(self) -> AsyncIterator[TokenEvent]:
        if not self.stream:
            raise RuntimeError("this request was submitted with stream=False: await result() instead")
        whole = len(self._handles) == 1 and not self._plan.pieces[0].before and not self._plan.after
        if whole and self._case is None:
            return self._handles[0].__aiter__()
        return self._stream()

    async def _stream(self) -> AsyncIterator[TokenEvent]:
        joiner = _TokenJoiner(self._plan)
        truncated = False
        for index, handle in enumerate(self._handles):
            joiner.start(index)
            restored = self._restored_events(index)
            async for event in handle:  # raises the piece's failure at its end
                for ready in [event] if restored is None else restored.push(event):
                    for joined in joiner.push(ready):
                        yield joined
            for ready in [] if restored is None else restored.finish():
                for joined in joiner.push(ready):
                    yield joined
            piece = handle.result()
            if piece.cancelled():
                return
            if piece.result().finish_reason == "stop_sequence":
                truncated = True
                break
        for joined in joiner.end(truncated=truncated):
            yield joined

    def _restored_events(self, index: int) -> _RestoredEvents | None:
        if self._case is None:
            return None
        return _RestoredEvents(self._case.restorer(self._plan.pieces[index].text))

    def result(self) -> asyncio.Future[GenerationResult]:
        """Await it for the joined result; raises the first failure of any piece."""
        return asyncio.shield(self._result)

    def admitted(self) -> asyncio.Future[None]:
        """Every piece was taken within submit (a refused one undid the others there)."""
        return admitted_at_submit()

    def cancel(self, reason: str = "disconnect") -> None:
        """Cancel every piece (each is counted as a cancellation)."""
        if not self._result.done():
            for handle in self._handles:
                handle.cancel(reason)

    def _settle(self, index: int, piece: asyncio.Future[GenerationResult]) -> None:
        if piece.cancelled():
            self._result.cancel()
            return
        error = piece.exception()  # also marks it retrieved
        if self._result.done():
            return
        if error is not None:
            self._result.set_exception(error)
            self._result.exception()  # mark retrieved: an unawaited failure is not a loop warning
            return
        self._results[index] = piece.result()
        done: list[GenerationResult] = []
        for result in self._results:
            if result is None:
                return
            done.append(result)
            if result.finish_reason == "stop_sequence":
                break  # the later pieces are dropped (they finish in the engine; nobody reads them)
        if self._guard is None or sum(len(piece.text) for piece in self._plan.pieces) <= JOIN_ON_LOOP_CHARS:
            self._result.set_result(self._join(done))
            return
        joined = asyncio.get_running_loop().run_in_executor(None, self._join, done)
        joined.add_done_callback(self._settle_joined)

    def _settle_joined(self, joined: asyncio.Future[GenerationResult]) -> None:
        error = joined.exception()  # also marks it retrieved, when nobody waits for the result any more
        if self._result.done():
            return
        if error is not None:
            self._result.set_exception(error)
            self._result.exception()
        else:
            self._result.set_result(joined.result())

    def _join(self, results: list[GenerationResult]) -> GenerationResult:
        truncated = len(results) < len(self._handles) or results[-1].finish_reason == "stop_sequence"
        outputs: list[str] = []
        reverted: list[RevertedEdit] = []
        joiner = _TokenJoiner(self._plan)
        tokens: list[TokenEvent] = []
        for index, (piece, result) in enumerate(zip(self._plan.pieces, results, strict=False)):
            events, restored_text = result.tokens, None
            restorer = self._restored_events(index)
            if restorer is not None:
                events, restored_text = restorer.every(result.tokens)
            joiner.start(index)
            for event in events:
                tokens.extend(joiner.push(event))
            output = result.text
            if self._guard is not None:  # in the text the model read: the folded source; capitals as sent
                read = piece.text if self._case is None else self._case.fold(piece.text)
                guarded = self._guard.apply(read, output, cased_source=piece.text)
                output = guarded.text
                reverted.extend(
                    guarded.reverted if self._case is None else _as_sent(self._case, piece.text, guarded.reverted)
                )
            if self._case is not None:  # one restoring pass, not two, when the guard changed nothing
                unchanged = output == "".join(event.text for event in result.tokens)
                output = (
                    restored_text if restored_text is not None and unchanged else self._case.restore(piece.text, output)
                )
            outputs.append(output)
        text = "".join(piece.before + out for piece, out in zip(self._plan.pieces, outputs, strict=False))
        tokens.extend(joiner.end(truncated=truncated))
        reasons = [r.finish_reason for r in results if r.finish_reason != "eos"]
        if reverted:
            self._on_reverted(len(reverted))
        first = results[0]
        return GenerationResult(
            text=text if truncated else text + self._plan.after,
            token_ids=[token for result in results for token in result.token_ids],
            tokens=tokens,
            finish_reason="stop_sequence" if "stop_sequence" in reasons else (reasons[0] if reasons else "eos"),
            input_token_ids=self._input_token_ids if self._input_token_ids is not None else first.input_token_ids,
            seed=first.seed,
            attention=first.attention if len(results) == 1 else None,
            edit_guard=tuple(reverted) if self._guard is not None else None,
        )


def _as_sent(case: CaseFolding, source: str, reverted: tuple[RevertedEdit, ...]) -> list[RevertedEdit]:
    """Spans the guard put back in a folded source: their source as the client sent it, their output restored."""
    return [
        replace(
            edit,
            source=source[edit.source_start : edit.source_start + len(edit.source)],
            output=case.restore(source, edit.output),
        )
        for edit in reverted
    ]
