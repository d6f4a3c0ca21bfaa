"""What the engine does around the model call for a model directory's text rules: a long input split
into pieces (segmentation.py) submitted together under one `JoinedHandle` (joined_handle.py), which joins
their tokens and results and applies the edit guard and case folding to each piece's output.

Runs on the event loop, beside Engine.submit; no onnxruntime, no HTTP.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from service.engine.case_folding import CaseFolding
from service.engine.edit_guard import EditGuard
from service.engine.errors import InputTooLong, ServingError
from service.engine.handle import RequestHandle
from service.engine.joined_handle import JoinedHandle
from service.engine.segmentation import Piece, SegmentationSpec, Segmented, split_text
from service.engine.text_cache import TextMemo

# One model call of the request (its params and options bound); `group` names the document a piece belongs to,
# which the scheduler takes turns between (service/engine/scheduler.py).
SubmitOne = Callable[[str, str | None], RequestHandle]


@dataclass(frozen=True)
class TextRules:
    """A model directory's `edit_guard`, `segmentation` and `case_folding` (each may be None), ready to apply."""

    guard: EditGuard | None
    segmentation: SegmentationSpec | None
    encode: Callable[[str], list[int]]  # the model's ids of a text, EOS included (memoized by the engine)
    max_source_tokens: int
    # The most pieces one request may be split into: the scheduler's queue size. More could never be queued
    # together, and the client would be told the queue is full however long it waited.
    max_pieces: int
    # The tokenizer folds what the model reads (`encode` included); the outputs get the source's capitals back.
    case: CaseFolding | None = None
    _plans: TextMemo[Segmented | InputTooLong] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_plans", TextMemo(self._split))  # frozen: set once, here

    def _split(self, text: str) -> Segmented | InputTooLong:
        if self.segmentation is None:  # only submit's over-the-limit branch splits, and only when it is set
            raise RuntimeError("this model declares no segmentation")
        try:
            return split_text(
                text, self.segmentation, count_tokens=lambda t: len(self.encode(t)), limit=self.max_source_tokens
            )
        except InputTooLong as error:  # remembered too: a second submit must not split it all again
            return error

    def plan(self, text: str) -> Segmented:
        """The pieces of `text` (memoized). Raises InputTooLong: one sentence alone is over the limit."""
        planned = self._plans(text)
        if isinstance(planned, InputTooLong):
            raise planned
        return planned

    @property
    def piece_tokens(self) -> int:
        """Inputs over this many tokens are segmented (when the model declares segmentation)."""
        declared = self.segmentation.piece_tokens if self.segmentation is not None else None
        return min(declared or self.max_source_tokens, self.max_source_tokens)

    def _wants_pieces(self, text: str) -> bool:
        """Whether the model's segmentation splits `text`: over the piece size, or (with split_lines)
        holding a line break between two lines of text."""
        if self.segmentation is None:
            return False
        core = text.strip()
        if self.segmentation.split_lines and ("\n" in core or "\r" in core):
            return True
        return len(self.encode(text)) > self.piece_tokens

    def prepare(self, text: str) -> None:
        """Do `submit`'s text work for `text` now, in any thread: its tokens and, when it is over the piece
        size and the model segments, its pieces and their tokens. A later submit of `text` reuses them."""
        if not self._wants_pieces(text):
            return
        try:
            pieces = self.plan(text).pieces
        except InputTooLong:
            return
        for piece in pieces:
            self.encode(piece.text)

    def submit(
        self,
        text: str,
        submit_one: SubmitOne,
        *,
        attention: bool,
        forced: bool,
        stream: bool,
        on_reverted: Callable[[int], None],
    ) -> RequestHandle | JoinedHandle:
        """Submit `text` as one model call, or as pieces when it is over the piece size or the source limit.

        The guard is applied unless the request asks for attention or forces a target (attention
        explains the model's own tokens, so their text stays the model's). An input over the limit is
        segmented only when the model declares `segmentation`, and never for attention or a forced target.

        Raises:
            InputTooLong: over the limit and not segmentable, or one sentence alone over the limit.
            InvalidInput, Overloaded, ModelNotReady: as Engine.submit.
        """
        guard = None if attention or forced else self.guard
        # A model that declares a piece size under its limit gets long inputs in pieces even when they
        # would fit whole; attention and forced targets always describe one model call.
        if not (attention or forced) and self._wants_pieces(text):
            return self._submit_pieces(text, submit_one, guard=guard, stream=stream, on_reverted=on_reverted)
        try:
            handle = submit_one(text, None)
        except InputTooLong:
            if self.segmentation is None or forced:
                raise
            if attention:
                raise InputTooLong(
                    f"the input has {len(self.encode(text))} tokens with EOS; the limit is {self.max_source_tokens}. "
                    "Longer inputs are split into sentences, but attention covers one model call: "
                    "ask for the attention of each sentence on its own"
                ) from None
            return self._submit_pieces(text, submit_one, guard=guard, stream=stream, on_reverted=on_reverted)
        if guard is None and self.case is None:
            return handle
        whole = Segmented(pieces=(Piece(before="", text=text),), after="")
        return JoinedHandle(
            [handle], whole, guard=guard, case=self.case, on_reverted=on_reverted, input_token_ids=None, stream=stream
        )

    def _submit_pieces(
        self,
        text: str,
        submit_one: SubmitOne,
        *,
        guard: EditGuard | None,
        stream: bool,
        on_reverted: Callable[[int], None],
    ) -> JoinedHandle:
        """Submit the pieces of `text` together. Raises InputTooLong: one sentence alone is over the limit."""
        plan = self.plan(text)
        if len(plan.pieces) > self.max_pieces:
            raise InputTooLong(
                f"the input splits into {len(plan.pieces)} pieces (each line, and each sentence of a long line); "
                f"one request holds at most {self.max_pieces}: send it in parts"
            )
        handles: list[RequestHandle] = []
        document = f"document-{uuid.uuid4().hex}"
        try:
            for piece in plan.pieces:  # in one event loop turn: the pieces share encoder passes and batches
                handles.append(submit_one(piece.text, document))
        except ServingError:
            for submitted in handles:
                submitted.cancel("disconnect")  # the client gets the error: nobody reads these
            raise
        return JoinedHandle(
            handles,
            plan,
            guard=guard,
            case=self.case,
            on_reverted=on_reverted,
            input_token_ids=self.encode(text),
            stream=stream,
        )
