"""How many steps a training run takes: `--steps`, or as many as fit a wall-clock budget (`--time-budget`).

Machines of one type differ: the bundled recipe's steps ran at 2.0-2.2 per second on one 2-core AMD
EPYC and at 1.4-1.6 on another. A run told to take 90 minutes cannot fix its step count in advance, and
its learning-rate schedule depends on that count (the cool-down must end on the last step). So the
leader measures the pace so far and plans the steps that fit; the plan is re-estimated every step until
the cool-down starts, then held, so that the learning rate falls steadily to zero on the last step. It may
still shrink (never grow) there when the pace drops, so that the run keeps within its budget.

Every worker must use the same plan: only the leader's proposal counts (model/train.py sums it with the
gradients, the others proposing 0). Imports nothing from this repository.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

SCHEDULES = ("rsqrt", "constant")
# The pace is first read after this many steps or a tenth of the budget, whichever comes first: one slow first
# step (another process starting beside it) planned a 20-minute fine-tune at 945 of its 1,800 steps, and a
# cool-down longer than that plan had started at once, holding it there.
PACE_STEPS = 20


def learning_rate_factor(step: int, warmup: int, total: int = 0, cooldown: int = 0, schedule: str = "rsqrt") -> float:
    """Linear warm-up, then inverse square-root decay (Vaswani et al., 2017, section 5.3; schedule
    "rsqrt") or the peak rate held (schedule "constant": warm-up, stable, decay), then over the last
    `cooldown` of `total` steps a linear fall to zero. Neither gets near zero by itself, so without the
    cool-down the final weights are still a noisy sample around the optimum; annealing to zero lets them
    settle (Hägele et al., 2024, who find the constant rate with a cool-down as good as cosine)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; choose one of {SCHEDULES}")
    step = max(step, 1)
    factor = min(step / warmup, 1.0 if schedule == "constant" else math.sqrt(warmup / step))
    if cooldown > 0 and step > total - cooldown:
        factor *= max(total - step + 1, 1) / cooldown  # the last step still learns, at 1/cooldown
    return factor


@dataclass
class StepPlan:
    """The run's planned number of steps, fixed (no budget) or fitted to `budget_seconds`."""

    max_steps: int  # --steps: never more
    cooldown: int  # --cooldown-steps
    budget_seconds: float | None = None  # --time-budget in seconds; None = exactly max_steps
    schedule: str = "rsqrt"  # --schedule
    total: int = field(init=False)  # the plan all workers agreed on; --steps until the first agreement
    cooling: bool = field(default=False, init=False)  # the cool-down has started: the plan may only shrink

    def __post_init__(self) -> None:
        self.total = self.max_steps

    def propose(self, done: int, elapsed: float, reserve: float = 0.0) -> int:
        """The leader's plan after `done` steps in `elapsed` seconds: the steps that fit the budget at the
        pace so far (at least done + 1, the step being taken; at most --steps), keeping `reserve` seconds
        for what follows the last step (its validation, as long as the last one took)."""
        if self.budget_seconds is None or done == 0 or elapsed <= 0:
            return self.total
        if done < PACE_STEPS and elapsed < self.budget_seconds / 10:
            return self.total
        pace = elapsed / done
        fits = done + int(max(self.budget_seconds - elapsed - reserve, 0.0) / pace)
        proposal = min(self.max_steps, max(done + 1, fits))
        return min(proposal, self.total) if self.cooling else proposal

    def agree(self, total: int, step: int) -> None:
        """Take the plan every worker received (the leader's proposal) for `step` (1-based)."""
        self.total = total
        if self.cooldown > 0 and step > total - self.cooldown:
            self.cooling = True

    def cools(self, step: int) -> bool:
        """Whether `step` (1-based) falls in the cool-down of the plan agreed so far (a step's batch is
        drawn before its own agreement, so a plan that shrinks there moves the cool-down a step late)."""
        return self.cooling or (self.cooldown > 0 and step > self.total - self.cooldown)

    def factor(self, step: int, warmup: int) -> float:
        """The learning-rate factor of `step` (1-based) under the agreed plan."""
        return learning_rate_factor(step, warmup, self.total, self.cooldown, self.schedule)
