"""Draft tokens read from the source (prompt lookup decoding), for greedy requests.

A normalizer's output is mostly its input copied, and a copy is predictable: after the tokens it has just
written, the output goes on with what followed them in the source. The decoder graph takes several target
tokens beside its cache, so one call can check a row's next few tokens at once: the arg-max at each
position says how many of the drafted tokens greedy decoding would have chosen, and those are kept with
the token greedy chooses after them. The output is greedy's, in fewer decoder calls.

Drafts that keep failing (a translator's output is no copy of its source) are paused, so that a model whose
output does not follow its source pays for a few wide steps and then decodes one token at a time again.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

# After this many drafting steps in a row that kept none of their drafts, a request stops drafting for
# PAUSE_STEPS steps, then tries again; the pause doubles each time, up to MAX_PAUSE_STEPS.
MISSES_BEFORE_PAUSE = 2
PAUSE_STEPS = 4
MAX_PAUSE_STEPS = 64
# Most positions (rows x tokens) of a step that drafts: every row gets the width of the longest draft, and a
# step's cost grows with its positions (the bundled model, int8, one thread: 1 row x 5 tokens 0.26 ms against
# 0.21 for 1 x 1, 8 x 3 0.82 against 0.43 for 8 x 1). At 16 the engine alone at 32 clients in two lanes
# (16 rows each, no drafts) runs as fast as without drafts, one request at a time 1.5x faster; at 32 (one
# draft token a row there) 10% slower (BENCHMARKS.md, issue 23: drafts from the source).
DRAFT_POSITIONS = 16


@dataclass
class SourceDrafts:
    """One request's source, indexed by the token pairs and tokens it holds, and how its drafts have done."""

    source: list[int]
    after_pair: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # pair -> where what follows starts
    after_token: dict[int, list[int]] = field(default_factory=dict)
    cursor: int = 0  # where the last draft ended in the source: the next match is looked for from here on
    misses: int = 0
    paused_for: int = 0
    pause: int = PAUSE_STEPS

    indexed: bool = False  # after_pair and after_token are built by the first proposal

    @classmethod
    def of_source(cls, source: Sequence[int]) -> SourceDrafts:
        """A request's drafts; its source is indexed when it first drafts (in a full batch it never does)."""
        return cls(list(source))

    def _build_index(self) -> None:
        tokens = self.source
        for i, token in enumerate(tokens):
            self.after_token.setdefault(token, []).append(i + 1)
            if i + 1 < len(tokens):
                self.after_pair.setdefault((token, tokens[i + 1]), []).append(i + 2)
        self.indexed = True

    def propose(self, generated: Sequence[int], count: int) -> list[int]:
        """Up to `count` tokens that would continue `generated` as a copy of the source; [] when paused or
        when the last tokens written are not in the source."""
        if self.paused_for:
            self.paused_for -= 1
            return []
        if not self.indexed:
            self._build_index()
        if not generated:
            start: int | None = 0
        else:
            starts = self.after_pair.get((generated[-2], generated[-1])) if len(generated) >= 2 else None
            start = self._nearest(starts or self.after_token.get(generated[-1]))
        if start is None:
            return []
        draft = self.source[start : start + count]
        if draft:
            self.cursor = start
        return draft

    def _nearest(self, starts: list[int] | None) -> int | None:
        """The first start at or after the cursor (a copy moves forward through the source), else the first."""
        if not starts:
            return None
        at = bisect.bisect_left(starts, self.cursor)
        return starts[at] if at < len(starts) else starts[0]

    def record(self, kept: int) -> None:
        """How the last draft went: `kept` of its tokens were greedy's."""
        self.cursor += kept
        if kept:
            self.misses, self.pause = 0, PAUSE_STEPS
            return
        self.misses += 1
        if self.misses >= MISSES_BEFORE_PAUSE:
            self.paused_for, self.misses = self.pause, 0
            self.pause = min(2 * self.pause, MAX_PAUSE_STEPS)


def kept_drafts(picks: Sequence[int], draft: Sequence[int]) -> int:
    """How many leading drafted tokens greedy decoding chose too: picks[i] is the arg-max after draft[:i]."""
    kept = 0
    while kept < len(draft) and picks[kept] == draft[kept]:
        kept += 1
    return kept


def draft_count(draft_tokens: int, *, rows: int) -> int:
    """How many tokens each row may draft this step: at most `draft_tokens`, within DRAFT_POSITIONS."""
    return min(draft_tokens, DRAFT_POSITIONS // max(1, rows) - 1)


def with_drafts(
    tokens: np.ndarray, tgt_mask: np.ndarray | None, drafts: dict[int, list[int]], *, filler: int
) -> tuple[np.ndarray, np.ndarray]:
    """The step's (B, 1 + longest draft) tokens and mask: each row's last token, then its draft, if any;
    `filler` (any valid id, masked) pads the rows with shorter drafts or none."""
    batch = tokens.shape[0]
    width = 1 + max(len(draft) for draft in drafts.values())
    grid = np.full((batch, width), filler, dtype=np.int64)
    grid[:, :1] = tokens
    mask = np.zeros((batch, width), dtype=bool)
    mask[:, :1] = True if tgt_mask is None else tgt_mask
    for row, draft in drafts.items():
        grid[row, 1 : 1 + len(draft)] = draft
        mask[row, 1 : 1 + len(draft)] = True
    return grid, mask


def propose_drafts(drafting: Iterable[tuple[int, SourceDrafts, Sequence[int]]], count: int) -> dict[int, list[int]]:
    """Each drafting request's row and up to `count` tokens its source suggests come next (none below 1).

    `drafting`: (row, the request's SourceDrafts, what it has generated) for each drafting request."""
    if count < 1:
        return {}
    proposed = ((row, drafts.propose(generated, count)) for row, drafts, generated in drafting)
    return {row: draft for row, draft in proposed if draft}
