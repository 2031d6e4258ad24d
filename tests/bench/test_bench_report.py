"""The suite's figures: medians with their range, ratios and goals as the report prints them."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.report import BenchResult, Row  # noqa: E402
from bench.stats import Sample, fmt, size_label  # noqa: E402


def test_figure_prints_median_then_range_of_runs_in_a_readable_unit():
    s = Sample.of([12.1e-6, 11.9e-6, 13.0e-6], "s")
    assert s.median == pytest.approx(12.1e-6)
    assert fmt(s) == "12.1 µs (11.9–13.0, n=3)"
    assert fmt(Sample.of([2.5e9], "B/s")) == "2.50 GB/s"


def test_sample_without_runs_is_refused():
    with pytest.raises(ValueError, match="at least one run"):
        Sample.of([], "s")


def test_ratio_is_ours_over_reference_and_goal_is_checked():
    row = Row("x", Sample.of([30e-6], "s"), Sample.of([20e-6], "s"), "C ↔ C", ("<=", 1.25))
    assert row.ratio == pytest.approx(1.5)
    what, ours, ref, ratio, goal = row.cells()
    assert ratio == "1.5×" and goal == "≤ 1.25× ✗" and ref.endswith("(C ↔ C)")
    met = Row("x", Sample.of([22e-6], "s"), Sample.of([20e-6], "s"), goal=("<=", 1.25))
    assert met.cells()[4] == "≤ 1.25× ✓"


def test_speedup_rows_divide_the_reference_time_by_ours():
    row = Row("pack", Sample.of([1e-6], "s"), Sample.of([40e-6], "s"), goal=(">=", 30), ratio_of="ref/ours")
    assert row.ratio == pytest.approx(40)
    assert row.cells()[3] == "40× faster" and row.cells()[4] == "≥ 30× ✓"


def test_goal_on_our_figure_alone_uses_its_unit():
    row = Row("rate", Sample.of([615e6], "/s"), goal=(">=", 300e6), goal_on="ours")
    assert row.cells()[2:] == ["—", "—", "≥ 300 M/s ✓"]


def test_skipped_bench_says_why_and_has_no_table():
    text = BenchResult("calls", "Client calls", skipped="bench/calls.py is not in this build").markdown()
    assert "Skipped: bench/calls.py is not in this build" in text and "| what |" not in text


def test_size_labels():
    assert [size_label(s) for s in (4, 4096, 16 << 20, 1536)] == ["4 B", "4 KiB", "16 MiB", "1.5 KiB"]
