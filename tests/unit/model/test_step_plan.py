"""The plan of a run's steps (model/step_plan.py): fixed, or fitted to a wall-clock budget at the pace so far."""

from __future__ import annotations

import itertools

import pytest

from model.step_plan import StepPlan, learning_rate_factor


def test_without_a_budget_the_plan_is_the_steps_and_the_schedule_is_unchanged() -> None:
    plan = StepPlan(max_steps=1000, cooldown=200)
    for step in range(1, 1001):
        plan.agree(plan.propose(step - 1, elapsed=step * 0.5), step)
        assert plan.total == 1000
        assert plan.factor(step, 100) == learning_rate_factor(step, 100, 1000, 200)


def test_a_budget_plans_the_steps_that_fit_at_the_pace_so_far() -> None:
    plan = StepPlan(max_steps=10_000, cooldown=100, budget_seconds=600)
    assert plan.propose(0, 0.0) == 10_000  # no pace yet
    assert plan.propose(50, 100.0) == 300  # 2 s a step: 250 more fit in the 500 s left
    assert plan.propose(50, 25.0) == 1200
    assert StepPlan(max_steps=500, cooldown=100, budget_seconds=600).propose(50, 25.0) == 500  # never over --steps
    assert plan.propose(50, 900.0) == 51  # over budget already: this step is the last
    assert plan.propose(50, 100.0, reserve=100.0) == 250  # the final validation's 100 s kept aside


def test_one_slow_first_step_does_not_fix_the_plan() -> None:
    """The first steps are not the run's pace (workers start, another process may still be running)."""
    plan = StepPlan(max_steps=1800, cooldown=1200, budget_seconds=1200)
    plan.agree(plan.propose(1, elapsed=1.24), 2)  # 1.24 s a step would fit 967: all of it a cool-down
    assert plan.total == 1800 and not plan.cooling
    for step in range(3, 22):
        plan.agree(plan.propose(step - 1, elapsed=1.24 + (step - 2) * 0.6), step)
    assert plan.total == 1800 and not plan.cooling  # 0.63 s a step over 20 steps: 1,800 fit
    slow = StepPlan(max_steps=1800, cooldown=1200, budget_seconds=1200)
    slow.agree(slow.propose(5, elapsed=130.0), 6)  # a tenth of the budget gone in 5 steps: 26 s a step is the pace
    assert slow.total == 46  # 41 more fit in the 1,070 s left


def test_once_cooling_the_plan_may_shrink_but_never_grow() -> None:
    plan = StepPlan(max_steps=10_000, cooldown=100, budget_seconds=600)
    plan.agree(plan.propose(250, 500.0), 251)  # 2 s a step: 300 in all, cooling from step 201
    assert plan.total == 300 and plan.cooling
    plan.agree(plan.propose(260, 500.0), 261)  # faster now: it would fit 312, but the cool-down is under way
    assert plan.total == 300
    plan.agree(plan.propose(270, 580.0), 271)  # slower: 20 s left, 2.15 s a step, so 279 in all
    assert plan.total == 279


@pytest.mark.parametrize("slowdown", [1.0, 1.3, 0.8])
def test_a_run_at_a_changing_pace_ends_within_its_budget_on_a_cooled_step(slowdown: float) -> None:
    """As model/train.py drives it: propose before the step (leader), agree, take the step's rate."""
    budget, warmup, cooldown = 3600.0, 100, 300
    plan = StepPlan(max_steps=100_000, cooldown=cooldown, budget_seconds=budget)
    elapsed, factors = 0.0, []
    for step in itertools.count(1):
        plan.agree(plan.propose(step - 1, elapsed), step)
        factors.append(plan.factor(step, warmup))
        elapsed += 1.0 if step < 1000 else slowdown  # the pace changes a third of the way in
        if step >= plan.total:
            break
    # Over by a step at most; under by what a faster cool-down saves (its steps are held, never added).
    assert 0.99 * budget <= elapsed <= budget + slowdown
    cooled = factors[-cooldown:]
    assert all(a >= b for a, b in itertools.pairwise(cooled))  # the cool-down falls steadily
    assert cooled[-1] <= learning_rate_factor(plan.total, warmup) / cooldown * 2


def test_the_constant_schedule_holds_the_peak_until_the_cool_down() -> None:
    warmup, total, cooldown = 100, 1000, 200
    factors = [learning_rate_factor(step, warmup, total, cooldown, "constant") for step in range(1, total + 1)]
    assert factors[:warmup] == pytest.approx([step / warmup for step in range(1, warmup + 1)])
    assert factors[warmup - 1 : total - cooldown] == [1.0] * (total - cooldown - warmup + 1)
    assert factors[total - cooldown :] == pytest.approx([(total - step + 1) / cooldown for step in range(801, 1001)])
    rsqrt = learning_rate_factor(500, warmup, total, cooldown)
    assert rsqrt == pytest.approx((warmup / 500) ** 0.5)  # the default is unchanged
    plan = StepPlan(max_steps=total, cooldown=cooldown, schedule="constant")
    assert [plan.factor(step, warmup) for step in range(1, total + 1)] == factors
    with pytest.raises(ValueError, match="unknown schedule 'cosine'"):
        learning_rate_factor(5, warmup, schedule="cosine")


def test_cools_tells_which_steps_draw_the_cool_down_batches() -> None:
    plan = StepPlan(max_steps=1000, cooldown=200)
    assert not plan.cools(800) and plan.cools(801) and plan.cools(1000)
    assert not any(StepPlan(max_steps=1000, cooldown=0).cools(step) for step in range(1, 1001))
    budgeted = StepPlan(max_steps=10_000, cooldown=100, budget_seconds=600)
    budgeted.agree(budgeted.propose(150, 300.0), 151)  # 2 s a step: 300 in all
    assert not budgeted.cools(200) and budgeted.cools(201)
