"""Soak test (not in CI): minutes of mixed load against a local `python -m service`, then the verdict.

    python -m bench.soak --minutes 10 --model-dir models/normalize/1

Concurrent clients loop over generate (greedy, checked against the unloaded answer), beam search, seeded
sampling, streams, /attention, and clients that hang up mid-stream or mid-request. It passes when there
are zero unexpected errors (any non-200, transport error, error event or wrong answer outside the
hang-ups), the queue and running gauges return to zero, and the server's resident memory grows by less
than 10% from the end of warm-up to the end of the run. Prints the figures and a JSON summary.
"""

# ruff: noqa: T201  (a CLI benchmark: printing the figures is its output)
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from deploy.loadtest.local_server import local_server

TEXTS = (
    "The play premiered on August 25, 1916.",
    "one hundred and twenty thousand",
    "catorce de noviembre de mil novecientos cinco",
    "See you on the tenth of May, two thousand nineteen!",
    "I still have three million, five hundred and thirty-nine thousand pages left to read.",
    "7 de julio de 2043",
    "Tengo 21 años y 3 gatos.",
    "This one is mine.",
)
MAX_NEW = 48
# Operation -> weight. "hangup_*" clients leave mid-flight; the server must just free their slots.
MIX = {
    "generate": 30,
    "beam": 8,
    "sample": 7,
    "stream": 25,
    "attention": 10,
    "hangup_stream": 10,
    "hangup_generate": 10,
}
GROWTH_LIMIT = 0.10


@dataclass
class Tally:
    ops: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    latencies: dict[str, list[float]] = field(default_factory=dict)

    def error(self, op: str, what: str) -> None:
        self.errors[op] += 1
        if len(self.examples) < 10:
            self.examples.append(f"{op}: {what}"[:300])


def _final_event(text: str) -> dict[str, Any]:
    events = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    return events[-1] if events else {"error": "no events"}


async def _one(client: httpx.AsyncClient, op: str, rng: random.Random, reference: dict[str, str], tally: Tally) -> None:
    text = rng.choice(TEXTS)
    greedy = {"inputs": text, "parameters": {"max_new_tokens": MAX_NEW}}
    if op == "generate":
        r = await client.post("/generate", json=greedy)
        if r.status_code != 200:
            tally.error(op, f"{r.status_code} {r.text}")
        elif r.json()["generated_text"] != reference[text]:
            tally.error(op, f"wrong answer for {text!r}: {r.json()['generated_text']!r}")
    elif op in ("beam", "sample"):
        extra = {"num_beams": 3} if op == "beam" else {"do_sample": True, "top_k": 20, "seed": rng.randrange(2**31)}
        r = await client.post(
            "/generate", json={"inputs": [text, rng.choice(TEXTS)], "parameters": {"max_new_tokens": MAX_NEW, **extra}}
        )
        if r.status_code != 200 or len(r.json()) != 2:
            tally.error(op, f"{r.status_code} {r.text}")
    elif op == "stream":
        r = await client.post("/generate_stream", json=greedy)
        final = _final_event(r.text) if r.status_code == 200 else {"error": r.text}
        if "error" in final:
            tally.error(op, f"{r.status_code} {final}")
        elif final["generated_text"] != reference[text]:
            tally.error(op, f"wrong streamed answer for {text!r}")
    elif op == "attention":
        body = {
            "inputs": text,
            "kinds": rng.sample(["encoder", "decoder", "cross"], rng.randint(1, 3)),
            "format": rng.choice(["json", "base64"]),
            "parameters": {"max_new_tokens": MAX_NEW},
        }
        r = await client.post("/attention", json=body)
        if r.status_code != 200:
            tally.error(op, f"{r.status_code} {r.text}")
    elif op == "hangup_stream":
        async with client.stream("POST", "/generate_stream", json=greedy) as r:
            if r.status_code != 200:
                tally.error(op, f"{r.status_code}")
            async for line in r.aiter_lines():
                if line.startswith("data:"):
                    break  # leave after the first token: closing the response drops the connection
    elif op == "hangup_generate":
        try:
            await asyncio.wait_for(client.post("/generate", json=greedy), timeout=rng.uniform(0.005, 0.05))
        except TimeoutError:
            pass  # abandoned mid-flight: the connection closes with the cancelled request


async def _client(url: str, until: float, seed: int, reference: dict[str, str], tally: Tally) -> None:
    rng = random.Random(seed)
    ops, weights = zip(*MIX.items(), strict=True)
    # No keep-alive pool reuse across hang-ups matters: httpx drops a connection whose request was cut.
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        while time.monotonic() < until:
            op = rng.choices(ops, weights)[0]
            started = time.perf_counter()
            try:
                await _one(client, op, rng, reference, tally)
            except (httpx.HTTPError, KeyError, ValueError) as error:
                tally.error(op, repr(error))
            tally.ops[op] += 1
            tally.latencies.setdefault(op, []).append(time.perf_counter() - started)


async def _sample_memory(
    process: psutil.Process, until: float, every_s: float, samples: list[tuple[float, int]]
) -> None:
    start = time.monotonic()
    while time.monotonic() < until:
        samples.append((time.monotonic() - start, process.memory_info().rss))
        await asyncio.sleep(every_s)
    samples.append((time.monotonic() - start, process.memory_info().rss))


def _gauges(url: str) -> dict[str, float]:
    out = {}
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith(("atento_queue_depth ", "atento_running_sequences ", "atento_cancellations_total{")) or (
            line.startswith("atento_requests_total{") and 'status="5' in line
        ):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def soak(args: argparse.Namespace) -> dict[str, Any]:
    # The server's JSON log is kept: a 5xx the clients never saw (they had hung up) is found there by its error id.
    args.server_log.parent.mkdir(parents=True, exist_ok=True)
    with local_server(
        args.model_dir, max_batch_size=args.max_batch_size, threads=args.threads, log=args.server_log
    ) as server:
        url = server.url
        reference = {}
        for text in TEXTS:  # each input's answer on an idle server
            r = httpx.post(
                f"{url}/generate", json={"inputs": text, "parameters": {"max_new_tokens": MAX_NEW}}, timeout=60
            )
            r.raise_for_status()
            reference[text] = r.json()["generated_text"]
        process = psutil.Process(server.process.pid)
        duration = args.minutes * 60
        warmup_s = duration * args.warmup_fraction
        tally = Tally()
        samples: list[tuple[float, int]] = []

        async def run() -> None:
            until = time.monotonic() + duration
            await asyncio.gather(
                _sample_memory(process, until, args.sample_every_s, samples),
                *(_client(url, until, args.seed + i, reference, tally) for i in range(args.concurrency)),
            )

        started = time.monotonic()
        asyncio.run(run())
        elapsed = time.monotonic() - started
        deadline = time.monotonic() + 10
        gauges = _gauges(url)
        while (gauges["atento_queue_depth"], gauges["atento_running_sequences"]) != (0, 0):
            if time.monotonic() > deadline:
                tally.error("gauges", f"not back to zero: {gauges}")
                break
            time.sleep(0.1)
            gauges = _gauges(url)
        after_warmup = [rss for t, rss in samples if t >= warmup_s]
        baseline = statistics.median(after_warmup[:3])
        final = statistics.median(after_warmup[-3:])
        return {
            "minutes": round(elapsed / 60, 2),
            "concurrency": args.concurrency,
            "requests": sum(tally.ops.values()),
            "requests_per_s": round(sum(tally.ops.values()) / elapsed, 1),
            "ops": dict(tally.ops),
            "unexpected_errors": sum(tally.errors.values()),
            "errors_by_op": dict(tally.errors),
            "error_examples": tally.examples,
            "p50_ms": {op: round(1000 * statistics.median(v), 1) for op, v in tally.latencies.items()},
            "server_5xx": sum(v for k, v in gauges.items() if k.startswith("atento_requests_total")),
            "cancellations": {k: v for k, v in gauges.items() if k.startswith("atento_cancellations_total")},
            "rss_mb": {
                "start": round(samples[0][1] / 2**20, 1),
                "after_warmup": round(baseline / 2**20, 1),
                "end": round(final / 2**20, 1),
                "peak": round(max(rss for _, rss in samples) / 2**20, 1),
            },
            "rss_growth_after_warmup": round((final - baseline) / baseline, 4),
        }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to load the server")
    parser.add_argument("--model-dir", type=Path, default=Path("models/normalize/1"))
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent clients")
    parser.add_argument("--warmup-fraction", type=float, default=0.2, help="memory growth counts after this")
    parser.add_argument("--sample-every-s", type=float, default=2.0, help="resident memory sampling period")
    parser.add_argument("--max-batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON summary here")
    parser.add_argument("--server-log", type=Path, default=Path("runs/soak-server.log"), help="the server's log")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    summary = soak(args)
    ok = summary["unexpected_errors"] == 0 and summary["server_5xx"] == 0
    ok = ok and summary["rss_growth_after_warmup"] < GROWTH_LIMIT
    summary["verdict"] = "pass" if ok else "fail"
    rss = summary["rss_mb"]
    print(
        f"{summary['requests']} requests in {summary['minutes']} min ({summary['requests_per_s']}/s), "
        f"{args.concurrency} clients: {summary['ops']}"
    )
    print(
        f"unexpected errors: {summary['unexpected_errors']} {summary['errors_by_op'] or ''}; "
        f"server 5xx: {summary['server_5xx']:g}; cancellations: {summary['cancellations']}"
    )
    print(
        f"server RSS MB: start {rss['start']}, after warm-up {rss['after_warmup']}, end {rss['end']}, "
        f"peak {rss['peak']}; growth after warm-up {100 * summary['rss_growth_after_warmup']:+.1f}% "
        f"(limit {100 * GROWTH_LIMIT:.0f}%)"
    )
    for example in summary["error_examples"]:
        print(f"  {example}")
    print(json.dumps(summary))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2))
    print(f"verdict: {summary['verdict']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
