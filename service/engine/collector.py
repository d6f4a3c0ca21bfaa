"""The cyclic garbage collector's schedule in a process that serves a model.

Serving allocates a few objects a token (events, their text, per-step lists) and almost no reference cycles, so
CPython's default, a young-generation collection every 700 net allocations, runs one every few decoder steps and
finds nearly nothing: on the bundled model, int8, 16 clients, 114 collections in 2,048 requests, 0.04 ms of CPU a
request (about 1%), against 1 collection and 0.01 ms with this schedule (`python -m bench.profile_engine
--split-only [--cpython-gc]`; BENCHMARKS.md, "format 3's binding kept"). The entry points that own their process call
`collect_less_often` once (`python -m service` and each engine process); an application that embeds the engine
keeps its own schedule.
"""

from __future__ import annotations

import gc

# Young objects between collections: a few hundred requests' worth at the bundled model's short inputs. The older
# generations keep CPython's ratios, so a full collection still comes, just as rarely relative to this.
YOUNG_GENERATION_THRESHOLD = 50_000


def collect_less_often() -> None:
    """Collect the young generation every YOUNG_GENERATION_THRESHOLD net allocations instead of CPython's 700."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, oldest)
