"""The engine alone on two checkouts, alternating: requests/s of the bundled model at N closed-loop
clients on the short mix (deploy/loadtest/inputs.tsv, greedy, max_new_tokens 64, as bench/batching.py
drives it; no per-token log-probabilities, as `POST /generate` without details: `--token-logprobs` asks for
them) and one at a time. Each round runs each tree in a subprocess of its own (its `service`
imported first on sys.path), the order flipping every round; a ratio is the median of per-round ratios.
Besides requests per wall second, each rate is given per second of the process's CPU time (every
thread): on a machine other jobs share, wall figures mean nothing and CPU figures still compare;
`--threads 1` keeps onnxruntime's spinning pool thread out of them.

`python -m bench.trees --before /tmp/atento-before [--after .] [--rounds 3] [--clients 32] [--threads 1]
[--after-lanes 2 [--after-lane-threads 1]] [--after-processes 2] [--after-variant auto] [--after-draft-tokens 4]
[--before-model-dir D] [--both] [--token-logprobs]`,
with the before tree made by `git worktree add /tmp/atento-before <commit>`. An older tree may refuse a newer
manifest's fields: `--before-model-dir` gives it a copy whose manifest holds only what it reads, while the after
tree serves the model directory whole (its edit guard and case folding included, as `python -m service` does).
"""

# ruff: noqa: T201, S603  (a CLI; it runs this interpreter on this file)
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


async def _measure(model_dir: Path, args: argparse.Namespace) -> dict[str, float]:
    """One tree's rates; `args` is the child's command line (clients, requests, threads, lanes, variant,
    after_lane_threads, draft_tokens, token_logprobs)."""
    clients, requests, threads, lanes = args.clients, args.requests, args.threads, args.lanes
    variant, lane_threads, draft_tokens = args.variant, args.after_lane_threads, args.draft_tokens
    processes = args.processes
    from bench.workload import (
        bundled_texts,
        closed_loop,
        generate_request,
        make_engine,
        process_cpu_s,
        serve_one_at_a_time,
    )
    from service.engine import GenerationParams

    chosen: dict[str, Any] = {} if variant is None else {"variant": variant}
    if draft_tokens:  # the before tree's make_engine may not know drafts
        chosen["draft_tokens"] = draft_tokens
    if processes > 1:  # the cores shared out among the engine processes (BatchingSettings.processes)
        chosen["processes"] = processes
        threads = max(1, threads // processes)
    if lanes > 1:  # by default one onnxruntime thread a lane: the lanes are the parallelism (BatchingSettings.lanes)
        engine = make_engine(model_dir, max_batch_size=clients, threads=lane_threads, lanes=lanes, **chosen)
    else:  # the before tree's make_engine may not know lanes
        engine = make_engine(model_dir, max_batch_size=clients, threads=threads, **chosen)
    await engine.start()
    try:
        params = generate_request(GenerationParams, token_logprobs=args.token_logprobs)
        texts = bundled_texts(requests)
        await closed_loop(engine, texts[: 2 * clients], params, concurrency=clients)  # warm-up
        cpu = process_cpu_s()
        run = await closed_loop(engine, texts, params, concurrency=clients)
        concurrent_cpu_s = process_cpu_s() - cpu
        started, cpu = time.perf_counter(), process_cpu_s()
        alone = texts[: max(8, requests // 8)]
        await serve_one_at_a_time(engine, alone, params)
        one = len(alone) / (time.perf_counter() - started)
        one_cpu_s = process_cpu_s() - cpu
    finally:
        await engine.stop(timeout_s=30)
    return {
        "concurrent": run.requests / run.elapsed_s,
        "one at a time": one,
        # Requests per second of this process's CPU time (every thread): what a busy machine inflates
        # least, and the figure to compare when other jobs share the cores.
        "concurrent per CPU s": run.requests / concurrent_cpu_s,
        "one at a time per CPU s": len(alone) / one_cpu_s,
    }


def _child(tree: Path, model_dir: Path, args: argparse.Namespace) -> None:
    sys.path.insert(0, str(tree))
    import service.engine

    if not Path(service.engine.__file__).resolve().is_relative_to(tree):
        raise RuntimeError(f"imported {service.engine.__file__}, not {tree}'s service")
    print(json.dumps(asyncio.run(_measure(model_dir, args))))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.trees", description=__doc__)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path())
    parser.add_argument("--model-dir", type=Path, default=Path("models/normalize/1"))
    parser.add_argument(
        "--before-model-dir",
        type=Path,
        default=None,
        help="the before tree's copy of the model directory, its manifest cut to what that tree reads "
        "(default: --model-dir for both)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=256, help="requests per measured round (concurrent)")
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="onnxruntime intra-op threads (1: no spinning pool thread in the CPU figures)",
    )
    parser.add_argument(
        "--after-lanes",
        type=int,
        default=1,
        help="the after tree's engine in this many lanes of one onnxruntime thread each (BatchingSettings.lanes)",
    )
    parser.add_argument(
        "--after-processes",
        type=int,
        default=1,
        help="the after tree's engine in this many engine processes, the --threads shared out among them "
        "(BatchingSettings.processes)",
    )
    parser.add_argument(
        "--after-variant",
        default=None,
        help="the after tree's variant (fp32, int8, auto: ATENTO_VARIANT); default: the manifest's, as the before tree",
    )
    parser.add_argument(
        "--after-lane-threads",
        type=int,
        default=1,
        help="with --after-lanes: the onnxruntime threads of the process's one pool, which the lanes share",
    )
    parser.add_argument(
        "--after-draft-tokens",
        type=int,
        default=0,
        help="the after tree's tokens drafted from the source (BatchingSettings.draft_tokens; default: none)",
    )
    parser.add_argument(
        "--both",
        action="store_true",
        help="the --after-* settings for the before tree too: two trees that both know them, compared as configured",
    )
    parser.add_argument(
        "--token-logprobs",
        action="store_true",
        help="every request asks for its tokens' log-probabilities (as /generate with details, and every stream); "
        "default: as /generate without details, none",
    )
    parser.add_argument("--draft-tokens", type=int, default=0, help=argparse.SUPPRESS)  # the child's
    parser.add_argument("--lanes", type=int, default=1, help=argparse.SUPPRESS)  # the child's
    parser.add_argument("--processes", type=int, default=1, help=argparse.SUPPRESS)  # the child's
    parser.add_argument("--variant", default=None, help=argparse.SUPPRESS)  # the child's
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.after_lane_threads != 1 and args.after_lanes == 1:
        parser.error("--after-lane-threads applies to lanes: give --after-lanes too")
    model_dir = args.model_dir.resolve()
    if args.child is not None:
        _child(args.child, model_dir, args)
        return 0
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    model_dirs = {"before": (args.before_model_dir or args.model_dir).resolve(), "after": model_dir}
    rates: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for round_index in range(args.rounds):
        for name in list(trees) if round_index % 2 == 0 else list(reversed(trees)):
            command = [sys.executable, "-m", "bench.trees", "--before", str(trees["before"]), "--child"]
            command += [str(trees[name]), "--model-dir", str(model_dirs[name]), "--clients", str(args.clients)]
            command += ["--requests", str(args.requests), "--threads", str(args.threads)]
            command += ["--token-logprobs"] if args.token_logprobs else []
            configured = name == "after" or args.both
            command += ["--lanes", str(args.after_lanes if configured else 1)]
            if configured and args.after_processes > 1:
                command += ["--processes", str(args.after_processes)]
            if configured and args.after_draft_tokens:
                command += ["--draft-tokens", str(args.after_draft_tokens)]
            if configured and args.after_variant is not None:
                command += ["--variant", args.after_variant]
            if configured and args.after_lanes > 1:
                command += [
                    "--after-lanes",
                    str(args.after_lanes),
                    "--after-lane-threads",
                    str(args.after_lane_threads),
                ]
            out = subprocess.run(command, check=True, capture_output=True, text=True, timeout=1800)
            rates[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"round {round_index + 1} {name}: {rates[name][-1]}", flush=True)
    for kind in ("concurrent", "one at a time", "concurrent per CPU s", "one at a time per CPU s"):
        ratios = [a[kind] / b[kind] for a, b in zip(rates["after"], rates["before"], strict=True)]
        after = statistics.median(r[kind] for r in rates["after"])
        before = statistics.median(r[kind] for r in rates["before"])
        label = kind.replace("concurrent", f"{args.clients} clients")
        print(
            f"{label}: after / before {statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f}); "
            f"after {after:,.1f}, before {before:,.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
