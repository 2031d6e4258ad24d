"""`cricket bench --quick --only ...` with the tiny size set: the report and the plots are written
and hold the table of every bench run (or the reason it was skipped). Every bench but `servers`
runs here; `servers` runs alone, through the same size set, in test_multiserver_bench.py."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# The rpc and latency benches build the libtirpc C pair; the tiny size set keeps the run short.
pytestmark = pytest.mark.cc


@pytest.fixture(scope="module")
def benches() -> list[str]:
    """The benches the command runs: all but `servers` (its own test runs it)."""
    sys.path.insert(0, str(ROOT))
    from bench.suite import BENCHES
    return [name for name in BENCHES if name != "servers"]


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory, benches) -> Path:
    pytest.importorskip("matplotlib", reason="matplotlib (the bench extra) draws the plots")
    out = tmp_path_factory.mktemp("bench")
    env = dict(os.environ, CRICKET_BENCH_TINY="1")
    (out / "started").write_text("")           # files newer than this were written by the run
    r = subprocess.run([sys.executable, "-m", "cricket", "bench", "--quick", "--only", *benches,
                        "--out", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=360)
    assert r.returncode == 0, f"cricket bench failed:\n{r.stdout}\n{r.stderr[-4000:]}"
    (out / "stderr.txt").write_text(r.stderr)
    return out


def _section(report: str, name: str) -> str:
    m = re.search(rf"^## .*\(`{name}`\)\n(.*?)(?=^## |\Z)", report, re.S | re.M)
    assert m, f"no section for {name} in the report"
    return m.group(1)


def _table_rows(section: str) -> list[list[str]]:
    lines = [ln for ln in section.splitlines() if ln.startswith("| ") and not ln.startswith("| what")]
    return [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines]


def test_report_records_the_machine_and_the_date(report_dir):
    report = (report_dir / "report.md").read_text()
    for key in ("date (UTC)", "CPU", "cores usable", "Python", "uvloop", "Cython"):
        assert re.search(rf"^\| {re.escape(key)} \| \S", report, re.M), f"machine info lacks {key}"


def test_every_bench_has_a_table_or_says_why_it_was_skipped(report_dir, benches):
    report = (report_dir / "report.md").read_text()
    assert "--only " + " ".join(benches) in report, "the report names the command that wrote it"
    for name in benches:
        section = _section(report, name)
        assert "Failed:" not in section, section
        if section.lstrip().startswith("Skipped:"):
            assert len(section.strip()) > len("Skipped: "), f"{name} skipped without a reason"
            continue
        rows = _table_rows(section)
        assert rows, f"{name} has no table rows"
        for what, ours, ref, ratio, goal in rows:
            assert ours != "—", f"{name}: no figure of ours for {what}"


def test_figures_are_medians_with_their_spread(report_dir):
    report = (report_dir / "report.md").read_text()
    rows = _table_rows(_section(report, "latency"))
    assert [r[0] for r in rows] == ["ECHO 4 B", "ECHO 4 KiB", "ECHO 64 KiB"]
    for what, ours, ref, ratio, goal in rows:
        assert re.fullmatch(r"[\d.,]+ [µnm]?s \([\d.,]+–[\d.,]+, n=2\)", ours), ours
        assert "C ↔ C" in ref and re.fullmatch(r"[\d.]+×", ratio)


def test_rpc_and_latency_ratios_match_their_figures(report_dir):
    import json
    results = {b["name"]: b for b in json.loads((report_dir / "results.json").read_text())}
    for row in results["latency"]["rows"] + results["rpc"]["rows"][:2]:
        ours = sorted(row["ours"])[len(row["ours"]) // 2] if len(row["ours"]) % 2 else \
            sum(sorted(row["ours"])[len(row["ours"]) // 2 - 1:len(row["ours"]) // 2 + 1]) / 2
        ref = sorted(row["reference"])[len(row["reference"]) // 2] if len(row["reference"]) % 2 else \
            sum(sorted(row["reference"])[len(row["reference"]) // 2 - 1:len(row["reference"]) // 2 + 1]) / 2
        assert row["ratio"] == pytest.approx(ours / ref)
        assert 1e-7 < ours < 1.0, "a round trip on loopback takes between 0.1 µs and 1 s"


def test_plots_are_png_files_linked_from_the_report(report_dir):
    report = (report_dir / "report.md").read_text()
    for name in ("latency_by_size.png", "copy_bandwidth.png", "emu_throughput.png"):
        png = report_dir / name
        assert png.exists(), f"{name} was not written"
        assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 10_000
        assert f"]({name})" in report


def test_progress_line_names_each_bench(report_dir, benches):
    err = (report_dir / "stderr.txt").read_text()
    for i, name in enumerate(benches, 1):
        assert f"[{i}/{len(benches)}] {name}:" in err


def test_unknown_bench_name_is_refused_with_the_list():
    r = subprocess.run([sys.executable, "-m", "cricket", "bench", "--only", "nosuch"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "no bench named nosuch" in r.stderr and "latency" in r.stderr


def test_benches_without_a_size_axis_say_they_have_no_plot(report_dir):
    report = (report_dir / "report.md").read_text()
    for name in ("xdr", "rpc"):
        section = _section(report, name)
        if not section.lstrip().startswith("Skipped:"):
            assert "no plot: these figures have no size axis" in section, section
    assert "no plot" not in _section(report, "latency")


def test_the_run_writes_only_under_out(report_dir):
    started = (report_dir / "started").stat().st_mtime
    written = [p for p in (ROOT / "build").rglob("*") if p.is_file() and p.stat().st_mtime > started
               and any(part.startswith(("bench_", "examples")) for part in p.relative_to(ROOT / "build").parts)]
    assert not written, f"cricket bench wrote into the source tree: {written[:5]}"
    if not _section((report_dir / "report.md").read_text(), "xdr").lstrip().startswith("Skipped:"):
        assert (report_dir / "build" / "bench_xdr").is_dir()   # the xdr bench built under --out


def test_measured_benches_carry_their_time_breakdown(report_dir, benches):
    from bench.breakdown import NOTES
    from bench.suite import BENCHES
    assert set(NOTES) <= set(BENCHES), "a breakdown for a bench that does not exist"
    report = (report_dir / "report.md").read_text()
    for name in set(NOTES) & set(benches):
        section = _section(report, name)
        if not section.lstrip().startswith("Skipped:"):
            assert "breakdown (" in section, name
