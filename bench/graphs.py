"""A CUDA graph of small kernels launched as one against the same kernels launched one by one.

    python -m bench.graphs [--quick]

``bench/graph_launch.cu``, built by nvcc with ``-cudart shared``, runs through ``cricket run`` on a
real ``cricket server --backend emu``; each round is KERNELS launches (or one graph launch of them)
and a cudaStreamSynchronize, the median of timed trials, both measured in the same process.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .config import Config, from_env
from .report import BenchResult, Row
from .servers import CricketServer
from .stats import Sample

ROOT = Path(__file__).resolve().parent.parent
KERNELS = 100


def _program(workdir: Path) -> Path:
    """The program, built by nvcc unless the one in ``workdir`` is newer than its source."""
    exe = workdir / "graph_launch"
    source = ROOT / "bench" / "graph_launch.cu"
    if exe.exists() and exe.stat().st_mtime > source.stat().st_mtime:
        return exe
    workdir.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["nvcc", "-O2", "-cudart", "shared", "-o", str(exe), str(ROOT / "bench" / "graph_launch.cu")],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"nvcc failed on bench/graph_launch.cu:\n{r.stderr[-1500:]}")
    return exe


def _round_seconds(exe: Path, server: CricketServer, kernels: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    r = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", server.address, "--", str(exe),
                        str(kernels)], capture_output=True, text=True, env=env, timeout=600)
    if r.returncode:
        raise RuntimeError(f"graph_launch failed:\n{r.stdout}\n{r.stderr[-1500:]}")
    words = [line.split() for line in r.stdout.splitlines()]
    return {w[0]: float(w[1]) * 1e-6 for w in words if len(w) == 2 and w[0].endswith("_us")}


def measure(cfg: Config, progress) -> BenchResult:
    res = BenchResult("graphs", f"emu: {KERNELS} small kernels as one graph launch against one by one")
    if not shutil.which("nvcc"):
        res.skipped = "needs nvcc (CUDA 13) to build bench/graph_launch.cu"
        return res
    kernels = 10 if cfg.tiny else KERNELS
    server = CricketServer("emu")
    try:
        progress("nvcc builds bench/graph_launch.cu")
        exe = _program(cfg.build_dir("bench_graphs"))
        runs = []
        for r in range(cfg.repeat):
            progress(f"run {r + 1}/{cfg.repeat}")
            runs.append(_round_seconds(exe, server, kernels))
    finally:
        server.stop()
    res.rows.append(Row(f"{kernels} small kernels + stream synchronize: one graph launch",
                        Sample.of([x["graph_us"] for x in runs], "s"),
                        Sample.of([x["one_by_one_us"] for x in runs], "s"), "the same kernels one by one",
                        ("<=", 1.0)))
    res.notes.append("a graph launch is one call to the server, which replays the kernels on the stream; "
                     "launched one by one, each kernel is a call of its own (batched, no reply). On emu the "
                     "kernels' own run time on the CPU dominates both figures; each run is its own process")
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(measure(from_env(quick=args.quick), lambda msg: print(msg, file=sys.stderr)).markdown())


if __name__ == "__main__":
    main()
