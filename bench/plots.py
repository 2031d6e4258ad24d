"""PNG plots of the suite's series (matplotlib, no display needed)."""
from __future__ import annotations

from pathlib import Path

from .report import BenchResult
from .stats import Sample, size_label


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _errorbars(samples: list[Sample], factor: float) -> tuple[list[float], list[list[float]]]:
    med = [s.median / factor for s in samples]
    err = [[(s.median - s.lo) / factor for s in samples], [(s.hi - s.median) / factor for s in samples]]
    return med, err


def _by_size(path: Path, data: dict, *, title: str, ylabel: str, factor: float) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    x = data["x"]
    for label, samples in data["series"].items():
        med, err = _errorbars(samples, factor)
        style = data.get("styles", {}).get(label, {})
        ax.errorbar(x, med, yerr=err, marker="o", markersize=4, capsize=3, label=label, **style)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels([size_label(s).replace(" ", "\u00a0") for s in x], rotation=45, ha="right")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
    ax.xaxis.set_minor_locator(NullLocator())
    # Log y axis with labelled ticks at 1, 2, 5 × 10^k, so that even a narrow range reads.
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))
    ax.set_xlabel("payload size")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _bars(path: Path, data: dict, *, title: str, xlabel: str) -> Path:
    plt = _pyplot()
    labels = data["labels"]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.7 * len(labels)), dpi=110)
    med, err = _errorbars(data["samples"], data.get("factor", 1.0))
    ax.barh(range(len(labels)), med, xerr=err, capsize=4, color="#4878a8")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    for i, (v, up) in enumerate(zip(med, err[1])):
        ax.text(v + up, i, f"  {v:,.0f}", va="center")
    if data.get("goal"):
        ax.axvline(data["goal"], color="#c44", linestyle="--", label=f"goal {data['goal']:,.0f}")
        ax.legend(loc="lower right")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_xlim(0, max(med + [data.get("goal") or 0]) * 1.25)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def draw(results: list[BenchResult], out_dir: Path) -> list[str]:
    """Every plot the results have data for; returns the PNG paths."""
    made = []
    for r in results:
        if r.skipped:
            continue
        if "latency" in r.series:
            made.append(_by_size(out_dir / "latency_by_size.png", r.series["latency"],
                                 title="ECHO round trip by payload size (TCP loopback, median, range of runs)",
                                 ylabel="round trip (µs)", factor=1e-6))
        if "copy" in r.series:
            made.append(_by_size(out_dir / "copy_bandwidth.png", r.series["copy"],
                                 title="Copy bandwidth by size: cricket vs raw socket (median, range)",
                                 ylabel="bandwidth (MB/s)", factor=1e6))
        if "calls_copy" in r.series:
            made.append(_by_size(out_dir / "copy_bandwidth_preload.png", r.series["calls_copy"],
                                 title="cudaMemcpy through `cricket run` vs raw Unix socket (median, range)",
                                 ylabel="bandwidth (MB/s)", factor=1e6))
        if "emu" in r.series:
            made.append(_bars(out_dir / "emu_throughput.png", r.series["emu"],
                              title="emu backend throughput by kernel (median, range of runs)",
                              xlabel="million thread-instructions per second"))
    return [str(p) for p in made]
