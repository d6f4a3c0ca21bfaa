"""Where a request's time goes in the engine alone: cProfile of the worker thread and of the event loop
thread, on thread CPU time (so a busy machine inflates neither), N closed-loop clients on the short mix
(deploy/loadtest/inputs.tsv), greedy, max_new_tokens 64, no per-token log-probabilities (as /generate without
details; `--token-logprobs` asks for them).

`python -m bench.profile_engine [--tree DIR] [--requests 128] [--clients 32] [--threads 1] [--variant int8]
[--lanes 2 --split-only] [--split-only]`:
DIR's `service` is profiled instead of this tree's (a `git worktree` of another commit). Prints a
request's CPU split (the worker thread, onnxruntime's run within it, the other threads), onnxruntime's calls a
request per graph with their CPU and wall time (wall beyond CPU: mostly the wait to take the GIL back when a
graph returns), each thread's CPU time over the wall time (a lane below 1 waited, for work or the GIL), then both
threads' top functions by own time and by cumulative time (`--split-only`: the split alone, without
cProfile's overhead on every Python call). py-spy (bench extra) samples wall time instead, and fell
hopelessly behind on a 2-core machine shared with a training run; on a quiet machine
`py-spy record -r 200 -f raw -o out.txt -- python -m bench.profile_engine` works too.
"""

# ruff: noqa: T201  (a CLI: the profile is its output)
from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _profiled_worker(profile: cProfile.Profile) -> None:
    """Wrap EngineLoop.run (the worker thread's body) in `profile`."""
    from service.engine import worker

    original: Callable[..., None] = worker.EngineLoop.run

    def run(self: Any, executor: Any) -> None:
        profile.enable()
        try:
            original(self, executor)
        finally:
            profile.disable()

    worker.EngineLoop.run = run  # type: ignore[method-assign]


@dataclass
class _OnnxruntimeClock:
    """What the engine's threads spent inside InferenceSession.run, per graph: CPU time (the calling thread's),
    wall time and calls. Wall beyond CPU is mostly the wait to take the GIL back when the graph returns."""

    cpu: dict[str, float] = field(default_factory=lambda: {"encoder": 0.0, "decoder": 0.0})
    wall: dict[str, float] = field(default_factory=lambda: {"encoder": 0.0, "decoder": 0.0})
    calls: dict[str, int] = field(default_factory=lambda: {"encoder": 0, "decoder": 0})

    def install(self) -> None:
        import onnxruntime

        original: Callable[..., Any] = onnxruntime.InferenceSession.run
        clock = self

        def run(self: Any, output_names: Any, feeds: Any, *args: Any, **kwargs: Any) -> Any:
            graph = "encoder" if "src" in feeds else "decoder"  # the decoder's feeds hold src_mask, never src
            started, started_wall = time.thread_time(), time.perf_counter()
            try:
                return original(self, output_names, feeds, *args, **kwargs)
            finally:
                clock.cpu[graph] += time.thread_time() - started
                clock.wall[graph] += time.perf_counter() - started_wall
                clock.calls[graph] += 1

        def run_with_iobinding(self: Any, binding: Any, *args: Any, **kwargs: Any) -> Any:
            # Bound calls are the decoder's: format 3's steps on the CPU, or CUDA's I/O binding.
            started, started_wall = time.thread_time(), time.perf_counter()
            try:
                return original_bound(self, binding, *args, **kwargs)
            finally:
                clock.cpu["decoder"] += time.thread_time() - started
                clock.wall["decoder"] += time.perf_counter() - started_wall
                clock.calls["decoder"] += 1

        original_bound: Callable[..., Any] = onnxruntime.InferenceSession.run_with_iobinding
        onnxruntime.InferenceSession.run = run
        onnxruntime.InferenceSession.run_with_iobinding = run_with_iobinding

    def reset(self) -> None:
        for graph in self.cpu:
            self.cpu[graph] = self.wall[graph] = 0.0
            self.calls[graph] = 0


class _CollectorClock:
    """The cyclic garbage collector's collections and their thread CPU time (gc.callbacks), while installed."""

    def __init__(self) -> None:
        self.collections = 0
        self.cpu = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.collections += 1
            self.cpu += time.thread_time() - self._started


def _thread_clocks() -> dict[str, int]:
    """The CPU clock of each engine worker thread and of the event loop's (the main) thread."""
    workers = [t for t in threading.enumerate() if t.name.startswith("atento-engine")]
    clocks = {worker.name: time.pthread_getcpuclockid(worker.ident or 0) for worker in workers}
    clocks["event loop"] = time.pthread_getcpuclockid(threading.main_thread().ident or 0)
    return clocks


async def _drive(model_dir: Path, args: argparse.Namespace) -> None:
    from bench.workload import bundled_texts, closed_loop, generate_request, make_engine
    from service.engine import GenerationParams

    requests, clients = args.requests, args.clients
    onnxruntime_clock = _OnnxruntimeClock()
    onnxruntime_clock.install()
    # Only what was asked: --tree may be a checkout whose make_engine knows no lanes or variant.
    chosen: dict[str, Any] = {} if args.variant is None else {"variant": args.variant}
    if args.lanes > 1:
        chosen["lanes"] = args.lanes
    if args.format2_only:
        chosen["runtime"] = {"gqa_decoder": False}
    if args.cpython_gc:
        chosen["service_gc"] = False
    engine = make_engine(model_dir, max_batch_size=clients, threads=args.threads, **chosen)
    await engine.start()
    collector_clock = _CollectorClock()
    try:
        params = generate_request(GenerationParams, token_logprobs=args.token_logprobs)
        await closed_loop(engine, bundled_texts(2 * clients), params, concurrency=clients)  # warm-up
        clocks = _thread_clocks()
        workers = [name for name in clocks if name != "event loop"]

        def thread_cpu() -> dict[str, float]:
            return {name: time.clock_gettime(clock) for name, clock in clocks.items()}

        onnxruntime_clock.reset()
        gc.callbacks.append(collector_clock)
        cpu, wall, threads_before = time.process_time(), time.perf_counter(), thread_cpu()
        try:
            run = await closed_loop(engine, bundled_texts(requests), params, concurrency=clients)
        finally:
            gc.callbacks.remove(collector_clock)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        busy = {name: spent - threads_before[name] for name, spent in thread_cpu().items()}
        worker_cpu = sum(busy[name] for name in workers)
        in_onnxruntime = sum(onnxruntime_clock.cpu.values())
        per_request = 1000 / run.requests
        print(
            f"{run.requests} requests, {run.requests / run.elapsed_s:.1f} requests/s, "
            f"process CPU {cpu:.2f} s in {wall:.1f} s wall: "
            f"{run.requests / cpu:.1f} requests per CPU second\n"
            f"CPU per request: process {cpu * per_request:.2f} ms = worker thread{'s' if len(workers) > 1 else ''} "
            f"{worker_cpu * per_request:.2f} ms "
            f"(onnxruntime's run {in_onnxruntime * per_request:.2f} ms, the rest "
            f"{(worker_cpu - in_onnxruntime) * per_request:.2f} ms) + other threads "
            f"{(cpu - worker_cpu) * per_request:.2f} ms (event loop, clients, onnxruntime's pool)"
        )
        for graph in ("encoder", "decoder"):
            calls = onnxruntime_clock.calls[graph]
            print(
                f"onnxruntime's {graph}: {calls / run.requests:.2f} calls a request, "
                f"{onnxruntime_clock.cpu[graph] * per_request:.3f} ms of CPU a request, "
                f"{onnxruntime_clock.wall[graph] * per_request:.3f} ms of wall time inside run"
            )
        print(
            f"garbage collection (the young generation every {gc.get_threshold()[0]} allocations): "
            f"{collector_clock.collections} collections, {collector_clock.cpu * per_request:.3f} ms of CPU a request"
        )
        # A worker busy for less than the whole wall time waited: for work, or (inside and around run) for the GIL.
        shares = ", ".join(f"{name} {spent / wall:.2f}" for name, spent in busy.items())
        print(f"CPU time / wall time per thread: {shares}; process {cpu / wall:.2f} cores")
    finally:
        await engine.stop(timeout_s=30)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_engine", description=__doc__)
    parser.add_argument("--tree", type=Path, default=None, help="import `service` from this checkout instead")
    parser.add_argument("--model-dir", type=Path, default=Path("models/normalize/1"))
    parser.add_argument("--requests", type=int, default=128)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    parser.add_argument("--top", type=int, default=30, help="functions listed per table")
    parser.add_argument("--variant", default=None, help="fp32 | int8 | auto (default: the manifest's)")
    parser.add_argument("--lanes", type=int, default=1, help="batches run side by side (BatchingSettings.lanes)")
    parser.add_argument(
        "--format2-only",
        action="store_true",
        help="no decoder format 3 (RuntimeSettings.gqa_decoder false): every step on the mask-reading graph",
    )
    parser.add_argument(
        "--token-logprobs", action="store_true", help="requests ask for log-probabilities (default: as /generate, none)"
    )
    parser.add_argument(
        "--cpython-gc",
        action="store_true",
        help="keep CPython's garbage collection schedule (default: python -m service's, service.engine.collector)",
    )
    parser.add_argument(
        "--split-only", action="store_true", help="no cProfile (it inflates Python): the CPU split per request only"
    )
    args = parser.parse_args(argv)
    if args.tree is not None:
        sys.path.insert(0, str(args.tree.resolve()))
    if args.lanes > 1 and not args.split_only:
        parser.error("--lanes needs --split-only: one cProfile cannot follow two worker threads")
    if args.split_only:
        asyncio.run(_drive(args.model_dir.resolve(), args))
        return 0
    worker_profile, loop_profile = cProfile.Profile(time.thread_time), cProfile.Profile(time.thread_time)
    _profiled_worker(worker_profile)
    loop_profile.enable()
    asyncio.run(_drive(args.model_dir.resolve(), args))
    loop_profile.disable()
    for name, profile in (("worker thread", worker_profile), ("event loop thread", loop_profile)):
        print(f"\n=== {name} ===")
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
