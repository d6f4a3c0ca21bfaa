"""`python -m bench` on a fresh clone (no runs/normalize checkpoint): the figures that need the checkpoint
are skipped with one line each naming what to run, and everything else still runs. No real benchmark:
the measuring functions are replaced by stubs that record what they were given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

bench_main = pytest.importorskip("bench.__main__")


@pytest.fixture
def stubs(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    calls: dict[str, Any] = {"peers_models": None}

    async def peers_run(models: list[tuple[Any, ...]], **_: Any) -> list[Any]:
        calls["peers_models"] = [m[0] for m in models]
        return []

    def no_bundled(*_: Any) -> None:
        raise AssertionError("the bundled model was loaded without its checkpoint")

    monkeypatch.setattr(bench_main.peers, "run", peers_run)
    monkeypatch.setattr(bench_main, "load_bundled_model", no_bundled)
    monkeypatch.setattr(bench_main, "load_base_model", lambda: "base")
    monkeypatch.setattr(bench_main.hardware, "sgemm_gflops", lambda **_: {"numpy": 100.0})
    return calls


def test_without_the_checkpoint_hardware_runs_on_the_base_model_and_says_what_to_run(
    stubs: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # a clone where runs/normalize does not exist
    out = tmp_path / "report.json"

    code = bench_main.main(["--hardware", "--quick", "--out", str(out)])

    assert code == 0
    assert stubs["peers_models"] == ["base"]
    printed = capsys.readouterr().out
    skip_lines = [line for line in printed.splitlines() if line.startswith("skipped ")]
    assert skip_lines == [
        "skipped the bundled model's share of the sgemm rate (--hardware): needs runs/normalize "
        "(the bundled model's training checkpoint) — run `make train`"
    ]
    report = json.loads(out.read_text())
    assert report["skipped"] == skip_lines
    assert [f["label"] for f in report["figures"]] == ["fp32 sgemm 2048^3, 2 threads, numpy"]
    assert report["machine"]["cpu"] and "cpu_flags" in report["machine"]


def test_one_line_per_skipped_figure_and_none_with_the_checkpoint(tmp_path: Path) -> None:
    missing = bench_main.parse_args(["--checkpoint", str(tmp_path / "none")])
    lines = [s.line() for s in bench_main.skipped_figures(bench_main.chosen_benchmarks(missing), missing)]
    assert len(lines) == 3  # peers and hardware need the checkpoint; the GPU figure its own tool
    assert sum(f"needs {tmp_path / 'none'}" in line for line in lines) == 2
    assert all(f"`python -m model.train --out {tmp_path / 'none'}`" in line for line in lines[:2])
    assert "`python -m bench.gpu`" in lines[2]

    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "config.json").write_text("{}")
    present = bench_main.parse_args(["--peers", "--hardware", "--checkpoint", str(tmp_path / "ckpt")])
    assert bench_main.skipped_figures(bench_main.chosen_benchmarks(present), present) == []
    base_only = bench_main.parse_args(["--peers", "--models", "base", "--checkpoint", str(tmp_path / "none")])
    assert bench_main.skipped_figures(bench_main.chosen_benchmarks(base_only), base_only) == []
