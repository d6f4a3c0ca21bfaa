"""Drafting from the source (prompt lookup): the output stays greedy's whatever the drafts were, in fewer
decoder calls when the output copies the source; the rejected drafts' columns end their rows, masked."""

from __future__ import annotations

import numpy as np
import pytest
from fake_runner import EOS, VOCAB, FakeRunner, FakeTokenizer

from service.engine.drafts import MISSES_BEFORE_PAUSE, PAUSE_STEPS, SourceDrafts, kept_drafts
from service.engine.executor import BatchExecutor, ModelShape, Request, SpecialIds
from service.engine.kv_cache import DecoderStep
from service.engine.runner import DecoderOutput, KvCache
from service.engine.types import GenerationParams


class DeviatingRunner(FakeRunner):
    """The copy model, but every fourth position writes a token that is not the source's: drafts fail there.
    Its tokens depend on each row's position, which counts the unmasked columns: a rejected draft left
    unmasked would shift every later token."""

    def decode(
        self, tgt: np.ndarray, cache: KvCache, *, attention: bool, tgt_mask: np.ndarray | None = None
    ) -> DecoderOutput:
        positions = cache.positions()[:, None] + np.arange(tgt.shape[1])  # before the call: it consumes the cache
        out = super().decode(tgt, cache, attention=attention, tgt_mask=tgt_mask)
        logits = out.logits.copy()
        for b, t in zip(*np.nonzero(positions % 4 == 3), strict=True):
            token = int(logits[b, t].argmax())
            if token != EOS:
                logits[b, t] = 0.0
                logits[b, t, (token + 7) % VOCAB or 9] = 5.0
        return DecoderOutput(logits, out.cache, None, None)


def generate(runner: FakeRunner, sources: list[list[int]], *, draft_tokens: int, **params: int) -> dict[str, list[int]]:
    executor = BatchExecutor(
        runner,
        FakeTokenizer(),
        special=SpecialIds(pad=0, bos=1, eos=EOS),
        shape=ModelShape(1, 1, 1),
        draft_tokens=draft_tokens,
    )
    requests = [Request(f"r{i}", [*s, EOS], GenerationParams(**params)) for i, s in enumerate(sources)]  # type: ignore[arg-type]
    results: dict[str, list[int]] = {}
    outcome = executor.step(requests)
    for _ in range(200):
        results.update({k: v.token_ids for k, v in outcome.results.items()})
        if len(results) == len(requests):
            break
        outcome = executor.step([])
    return results


SOURCES = [[10 + i for i in range(n)] for n in (1, 3, 8, 17, 30)] + [[5, 6, 5, 6, 5, 7, 5, 6, 8]]


@pytest.mark.parametrize("runner_type", [FakeRunner, DeviatingRunner])
@pytest.mark.parametrize("draft_tokens", [1, 3, 8])
def test_drafting_changes_no_output(runner_type: type[FakeRunner], draft_tokens: int) -> None:
    plain = generate(runner_type(), SOURCES, draft_tokens=0, max_new_tokens=40)
    drafted_runner = runner_type()
    assert generate(drafted_runner, SOURCES, draft_tokens=draft_tokens, max_new_tokens=40) == plain
    # One at a time too (the widest drafts), and with the length limit falling inside a draft.
    for source in SOURCES:
        for max_new_tokens in (40, 5):
            alone = generate(runner_type(), [source], draft_tokens=0, max_new_tokens=max_new_tokens)
            assert generate(runner_type(), [source], draft_tokens=draft_tokens, max_new_tokens=max_new_tokens) == alone


def test_a_copy_takes_fewer_decoder_calls() -> None:
    plain, drafted = FakeRunner(), FakeRunner()
    source = list(range(10, 40))
    assert generate(drafted, [source], draft_tokens=4) == generate(plain, [source], draft_tokens=0) == {"r0": source}
    assert len(plain.decode_calls) == 31 and len(drafted.decode_calls) == 7  # 30 tokens + EOS, 5 a call


def test_a_full_batch_does_not_draft() -> None:
    runner = FakeRunner()
    generate(runner, [[10, 11, 12]] * 32, draft_tokens=4)
    assert len(runner.decode_calls) == 4  # 32 rows: one token a call


def test_drafts_follow_the_source_from_the_last_tokens_written() -> None:
    drafts = SourceDrafts.of_source([5, 6, 7, 5, 6, 8, EOS])
    assert not drafts.indexed  # a request in a full batch never drafts: its source is indexed on first use
    assert drafts.propose([], 3) == [5, 6, 7]  # nothing written yet: the source's start
    drafts.record(3)
    assert drafts.propose([5, 6, 7, 5, 6], 2) == [8, EOS]  # the pair (5, 6) after the cursor
    assert drafts.propose([99], 2) == []  # a token the source does not hold
    assert kept_drafts([5, 6, 9], [5, 6]) == 2 and kept_drafts([4, 6], [5, 6]) == 0


def test_drafts_that_keep_failing_pause() -> None:
    drafts = SourceDrafts.of_source([5, 6, 7, EOS])
    for _ in range(MISSES_BEFORE_PAUSE):
        assert drafts.propose([5], 2) == [6, 7]
        drafts.record(0)
    assert [drafts.propose([5], 2) for _ in range(PAUSE_STEPS)] == [[]] * PAUSE_STEPS
    assert drafts.propose([5], 2) == [6, 7]  # tried again after the pause


def test_each_rows_new_columns_follow_its_real_ones() -> None:
    """Rows of different lengths: a step's columns go right after each row's real ones (a dead row's, masked,
    too), so a row's real columns stay its first ones and a rejected draft's are its last, masked."""
    lengths = np.array([3, 0, 5])
    mask = np.arange(6)[None, :] < lengths[:, None]
    keys = np.where(mask[None, :, None, :, None], 1.0, 0.0).astype(np.float32) * np.ones((2, 3, 2, 6, 4), np.float32)
    cross = np.zeros((2, 3, 2, 5, 4), dtype=np.float32)
    cache = KvCache(keys, -keys, mask, cross, cross, np.ones((3, 5), dtype=bool))
    new_mask = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 0]], dtype=bool)
    step = DecoderStep.prepare(np.ones((3, 3), dtype=np.int64), cache, new_mask, [("k", "v", "ck", "cv")] * 2)
    assert step.feeds["tgt_positions"].tolist() == [[3, 4, 5], [0, 1, 2], [5, 6, 7]]
    new = np.arange(1, 4, dtype=np.float32)[None, None, None, :, None] + np.zeros((2, 3, 2, 3, 4), np.float32)
    out = step.finish(cache, [np.zeros((3, 3, VOCAB), np.float32), 10 * new, -10 * new], attention=False)
    assert out.cache.positions().tolist() == [6, 0, 7]
    assert out.cache.past_length == 8  # the longest row's 5 and the step's 3
    for row, length in enumerate([6, 0, 7]):
        assert out.cache.self_mask[row].tolist() == [True] * length + [False] * (8 - length)
    assert out.cache.keys[0, 0, 0, :, 0].tolist() == [1, 1, 1, 10, 20, 30, 0, 0]
    assert out.cache.keys[0, 2, 0, :, 0].tolist() == [1, 1, 1, 1, 1, 10, 20, 30]  # its third column written, masked
    assert out.cache.values[1, 1, 1, :3, 3].tolist() == [-10, -20, -30]  # the dead row's, masked
