"""A CUDA graph of small kernels launched as one against the same kernels launched one by one.

    python -m bench.graphs [--quick]

``bench/graph_launch.cu``, built by nvcc with ``-cudart shared``, runs through ``cricket run`` on a
real ``cricket server --backend emu``; each round is KERNELS launches (or one graph launch of them)
and a cudaStreamSynchronize, the median of timed trials, both measured in the same process.
"""
from __future__ import annotations

import argparse
import shutil
import sys

from . import cuda_program
from .config import Config, from_env
from .report import BenchResult, Row
from .servers import CricketServer
from .stats import Sample

KERNELS = 100


def measure(cfg: Config, progress) -> BenchResult:
    res = BenchResult("graphs", f"emu: {KERNELS} small kernels as one graph launch against one by one")
    if not shutil.which("nvcc"):
        res.skipped = "needs nvcc (CUDA 13) to build bench/graph_launch.cu"
        return res
    kernels = 10 if cfg.tiny else KERNELS
    server = CricketServer("emu")
    try:
        progress("nvcc builds bench/graph_launch.cu")
        exe = cuda_program.program("graph_launch", cfg.build_dir("bench_graphs"))
        runs = []
        for r in range(cfg.repeat):
            progress(f"run {r + 1}/{cfg.repeat}")
            runs.append({k: v * 1e-6 for k, v in cuda_program.figures(exe, server, str(kernels)).items()})
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
