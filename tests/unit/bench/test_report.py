"""The report's markdown names the command that measures each figure on its own."""

from __future__ import annotations

from bench.__main__ import BENCHMARKS
from bench.report import COMMANDS, Figure, markdown


def test_every_benchmark_names_the_flag_that_runs_it_alone() -> None:
    """The table's command column printed a bare `python -m bench` for --fastest and --marian."""
    assert set(BENCHMARKS) <= set(COMMANDS)
    for name in BENCHMARKS:
        row = markdown([Figure(name, "a figure", 1.5, "x")]).splitlines()[-1]
        assert row.endswith(f"`{COMMANDS[name]}` |")
        assert COMMANDS[name] != "python -m bench"
    assert "--fastest" in COMMANDS["fastest"] and "--marian" in COMMANDS["marian"]
