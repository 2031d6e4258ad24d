"""One report for the whole suite: a table per bench, the machine, the date, the plots."""
from __future__ import annotations

import datetime
import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .stats import Sample, fmt


@dataclass
class Row:
    """One line of a bench table: our figure, the reference measured in the same run, the goal.

    ``goal`` is ``("<=", 1.25)`` or ``(">=", 30)`` on the ratio ours/reference (or on ``ours``
    alone when ``goal_on`` is ``"ours"``), or free text.
    """

    what: str
    ours: Sample | None
    reference: Sample | None = None
    reference_label: str = ""
    goal: tuple[str, float] | str = "—"
    goal_on: str = "ratio"
    ratio_of: str = "ours/ref"        # or "ref/ours" (a speed-up where the figures are times)

    @property
    def ratio(self) -> float | None:
        if self.ours is None or self.reference is None:
            return None
        a, b = self.ours.median, self.reference.median
        if self.ratio_of == "ref/ours":
            a, b = b, a
        return a / b if b else None

    def goal_text(self) -> str:
        if isinstance(self.goal, str):
            return self.goal
        op, value = self.goal
        x = self.ratio if self.goal_on == "ratio" else (self.ours.median if self.ours else None)
        label = op.replace("<=", "≤").replace(">=", "≥") + " "
        if self.goal_on == "ratio" or self.ours is None:
            label += f"{value:g}" + ("×" if self.goal_on == "ratio" else "")
        else:
            label += fmt(Sample.of([value], self.ours.unit))
        if x is None:
            return label
        met = x <= value if op == "<=" else x >= value
        return f"{label} {'✓' if met else '✗'}"

    def cells(self) -> list[str]:
        ours = fmt(self.ours) if self.ours else "—"
        ref = fmt(self.reference) if self.reference else "—"
        if self.reference_label:
            ref = f"{ref} ({self.reference_label})" if self.reference else self.reference_label
        ratio = self.ratio
        ratio_text = "—" if ratio is None else f"{ratio:.3g}×"
        if ratio is not None and self.ratio_of == "ref/ours":
            ratio_text += " faster" if ratio >= 1 else " (slower)"
        return [self.what, ours, ref, ratio_text, self.goal_text()]


@dataclass
class BenchResult:
    """What one bench hands to the report: rows, notes, plot series, or why it was skipped."""

    name: str
    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""
    error: str = ""
    seconds: float = 0.0
    # name -> {"x": [...], "series": {label: [Sample, ...]}, ...} for the plots
    series: dict[str, dict] = field(default_factory=dict)

    def markdown(self) -> str:
        lines = [f"## {self.title} (`{self.name}`)", ""]
        if self.skipped:
            lines += [f"Skipped: {self.skipped}", ""]
            return "\n".join(lines)
        if self.error:
            lines += [f"Failed: {self.error}", ""]
        if self.rows:
            lines += ["| what | ours | reference | ratio | goal |", "|---|---|---|---|---|"]
            lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r.cells()) + " |"
                      for r in self.rows]
            lines.append("")
        lines += [f"- {n}" for n in self.notes]
        if self.notes:
            lines.append("")
        lines.append(f"_took {self.seconds:.1f} s_")
        lines.append("")
        return "\n".join(lines)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(module: str) -> str:
    try:
        from importlib.metadata import version
        return version(module)
    except Exception:  # noqa: BLE001 - not installed is an answer here
        return "not installed"


def machine_info() -> dict[str, str]:
    """What the numbers depend on: CPU, cores, Python, the event loop and the compiled parts."""
    from cricket import xdr
    from cricket.rpc import record
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    info = {
        "date (UTC)": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "CPU": _cpu_model(),
        "cores usable": str(cores),
        "kernel": platform.release(),
        "Python": sys.version.split()[0],
        "uvloop": _version("uvloop"),
        "Cython": _version("Cython"),
        "NumPy": _version("numpy"),
        "XDR core": xdr.IMPLEMENTATION,
        "record marking": record.IMPLEMENTATION,
    }
    info["GPU"] = gpu_name() or "none"
    return info


def gpu_name() -> str:
    """The GPU nvidia-smi sees (name, driver), or "" where there is none. Asked in a child
    process: initialising CUDA here would break the benches that fork."""
    import shutil
    import subprocess
    if not shutil.which("nvidia-smi"):
        return ""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return "; ".join(line.strip() for line in r.stdout.splitlines() if line.strip()) if r.returncode == 0 else ""


def render(results: list[BenchResult], *, quick: bool, plots: list[str],
           command: str = "cricket bench") -> str:
    info = machine_info()
    out = ["# cricket microbenchmarks", "",
           f"`{command}`{' (quick: fewer sizes and runs)' if quick else ''}. Every figure is the "
           "median of repeated runs; the range of the runs and their number follow in brackets. "
           "The reference is measured in the same run on the same machine. Ratio = ours / "
           "reference unless the row says \"faster\" (reference / ours for times).", "",
           "| machine | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in info.items()]
    out.append("")
    out += [r.markdown() for r in results]
    if plots:
        out += ["## Plots", ""]
        out += [f"![{Path(p).stem}]({Path(p).name})" for p in plots]
        out.append("")
    return "\n".join(out)
