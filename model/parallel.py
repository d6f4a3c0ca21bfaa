"""Data-parallel training on one machine's CPU cores (`python -m model.train --workers N`).

The bundled model's ops are too small for two torch threads to share well: on a 2-core AMD EPYC
(Zen 4) a training step took 0.95 s with one thread and 0.68 s with two. N processes of one thread
each, every one back-propagating its share of a step's micro-batches, keep every core busy with
whole operations instead. Their gradients are summed through gloo (shared memory on one machine)
before each optimizer step, which is the same in every process, so their weights stay identical.
"""

from __future__ import annotations

import datetime as dt
import pickle
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

Result = TypeVar("Result")
# Long enough for the leader's validation and checkpoints, while the others wait at the next sum.
GROUP_TIMEOUT = dt.timedelta(minutes=15)
RESULT_POLL_SECONDS = 1.0


@dataclass(frozen=True)
class WorkerGroup:
    """This process's place among the workers that share each step."""

    rank: int = 0
    size: int = 1

    @property
    def is_leader(self) -> bool:
        """The worker that validates, writes checkpoints and reports progress."""
        return self.rank == 0

    def own_share(self, items: Sequence[int]) -> list[int]:
        """This worker's items of a length-sorted sequence, dealt in a snake (0 1 1 0 0 1 ...) so that
        no worker always gets the longest micro-batch of each round."""
        mine = []
        for index, item in enumerate(items):
            turn, position = divmod(index, self.size)
            if (position if turn % 2 == 0 else self.size - 1 - position) == self.rank:
                mine.append(item)
        return mine

    @contextmanager
    def every_core(self) -> Iterator[None]:
        """As many torch threads as there are workers, for work only the leader does while the others wait."""
        threads = torch.get_num_threads()
        torch.set_num_threads(max(threads, self.size))
        try:
            yield
        finally:
            torch.set_num_threads(threads)

    def sum_gradients(self, model: torch.nn.Module, *numbers: float) -> tuple[float, ...]:
        """Replace every worker's gradients by their sum over the group, and sum `numbers` likewise
        (the step's loss and token count, for the log). One flat tensor: one collective, not one a weight."""
        if self.size == 1:
            return numbers
        parameters = [p for p in model.parameters() if p.requires_grad]
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in parameters]
        flat = torch.cat([g.reshape(-1) for g in grads] + [torch.tensor(numbers, dtype=grads[0].dtype)])
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        offset = 0
        for parameter in parameters:
            size = parameter.numel()
            parameter.grad = flat[offset : offset + size].view_as(parameter).clone()
            offset += size
        return tuple(float(x) for x in flat[offset:])


ONE_PROCESS = WorkerGroup()


def run_workers(target: Callable[..., Result], size: int, *args: Any) -> Result:
    """Run target(group, *args) in `size` processes of one torch thread each; return the leader's result.

    A worker's exception is raised here (the others are stopped), not left to hang the group."""
    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    with tempfile.TemporaryDirectory(prefix="atento-workers-") as folder:
        rendezvous = Path(folder) / "rendezvous"
        workers = [
            context.Process(target=_worker, args=(rank, size, str(rendezvous), results, target, args), daemon=True)
            for rank in range(size)
        ]
        for worker in workers:
            worker.start()
        try:
            return _leader_result(workers, results)
        finally:
            for worker in workers:
                if worker.is_alive():
                    worker.terminate()
                worker.join()


def _leader_result(workers: list[Any], results: Any) -> Any:
    while True:
        if not results.empty():
            kind, value = pickle.loads(results.get())
            if kind == "error":
                raise value
            for worker in workers:  # each ends its process group cleanly, not terminated by run_workers
                worker.join()
            return value
        failed = [w for w in workers if w.exitcode not in (None, 0)]
        if failed:
            raise RuntimeError(f"training worker {workers.index(failed[0])} died with exit code {failed[0].exitcode}")
        if all(w.exitcode == 0 for w in workers):
            raise RuntimeError("training workers ended without a result")
        workers[0].join(RESULT_POLL_SECONDS)


def _worker(rank: int, size: int, rendezvous: str, results: Any, target: Callable[..., Any], args: tuple) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=size, timeout=GROUP_TIMEOUT
    )
    try:
        value = target(WorkerGroup(rank, size), *args)
    except BaseException as error:
        results.put(pickle.dumps(("error", error)))
        raise
    finally:
        dist.destroy_process_group()
    if rank == 0:
        # Pickled here, not by the queue: torch's reducers would share a tensor's memory through a file
        # descriptor that dies with this process.
        results.put(pickle.dumps(("result", value)))
