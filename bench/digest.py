"""md5 digests of the engine's outputs on the bundled task's mix, to check that a change to the engine
leaves every output byte-identical: texts, token ids, finish reasons and every log-probability, for
greedy, seeded sampling and beam search: one at a time, all at once (one batch) and 32 concurrent
clients (timing-dependent batches: see below).

`python -m bench.digest [--tree DIR]`: DIR's `service` package is imported instead of this tree's
(a `git worktree` of the commit before a change), so both trees are digested by the same code.
Prints one line per mode: `<mode> <md5> <requests>`.
"""

# ruff: noqa: T201  (a CLI: the digests are its output)
from __future__ import annotations

import argparse
import asyncio
import hashlib
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

INPUTS = Path(__file__).resolve().parent.parent / "deploy" / "loadtest" / "inputs.tsv"
MODES: dict[str, dict[str, Any]] = {
    "greedy": {},
    "sampling": {"do_sample": True, "temperature": 0.8, "top_p": 0.95, "seed": 7},
    "beam": {"num_beams": 4},
}


def digest(results: Sequence[Any]) -> str:
    """md5 over every result's text, ids, finish reason and per-token log-probabilities (as float32 bytes)."""
    md5 = hashlib.md5()  # noqa: S324 - a checksum, not security
    for result in results:
        md5.update(result.text.encode("utf-8") + b"\0")
        md5.update(struct.pack(f"<{len(result.token_ids)}q", *result.token_ids))
        md5.update(result.finish_reason.encode("ascii"))
        md5.update(struct.pack(f"<{len(result.tokens)}f", *(t.logprob for t in result.tokens)))
    return md5.hexdigest()


async def _closed_loop(engine: Any, sources: Sequence[str], params: Any, concurrency: int) -> list[Any]:
    """`concurrency` clients, each sending its next source when its previous one returned."""
    queue = list(reversed(range(len(sources))))
    results: list[Any] = [None] * len(sources)

    async def client() -> None:
        while queue:
            index = queue.pop()
            results[index] = await engine.submit(sources[index], params, stream=False).result()

    await asyncio.gather(*(client() for _ in range(concurrency)))
    return results


async def _digests(model_dir: Path, count: int, concurrency: int) -> None:
    from service.engine import Engine, GenerationParams
    from service.engine.settings import BatchingSettings, RuntimeSettings

    sources = [line.split("\t", 1)[0] for line in INPUTS.read_text(encoding="utf-8").splitlines() if line][:count]
    engine = Engine(
        model_dir,
        runtime=RuntimeSettings(intra_op_threads=2, shared_thread_pool=True),
        batching=BatchingSettings(max_batch_size=128, max_queue=4096, max_tokens_in_flight=10**9),
    )
    await engine.start()
    try:
        for mode, options in MODES.items():
            params = GenerationParams(max_new_tokens=64, **options)
            one = [await engine.submit(text, params, stream=False).result() for text in sources]
            print(f"{mode + ' one-at-a-time':<24} {digest(one)} {len(one)}", flush=True)
            results = await _closed_loop(engine, sources, params, concurrency)
            # Which requests share a step depends on timing here, and a row's float sums on its batch:
            # this digest can differ between two runs of one tree. All at once (one batch) cannot.
            print(f"{mode + f' {concurrency}-clients':<24} {digest(results)} {len(results)}", flush=True)
            handles = [engine.submit(text, params, stream=False) for text in sources]
            together = [await handle.result() for handle in handles]
            print(f"{mode + ' all-at-once':<24} {digest(together)} {len(together)}", flush=True)
    finally:
        await engine.stop(timeout_s=30)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.digest", description=__doc__)
    parser.add_argument("--tree", type=Path, default=None, help="import `service` from this checkout instead")
    parser.add_argument("--model-dir", type=Path, default=Path("models/normalize/1"))
    parser.add_argument("--count", type=int, default=400, help="inputs from deploy/loadtest/inputs.tsv")
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args(argv)
    if args.tree is not None:
        sys.path.insert(0, str(args.tree.resolve()))
        for name in [m for m in sys.modules if m == "service" or m.startswith("service.")]:
            del sys.modules[name]
    asyncio.run(_digests(args.model_dir.resolve(), args.count, args.concurrency))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
