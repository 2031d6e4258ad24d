"""Managed memory round trips against explicit copies, through the cricket shim on a real server.

    python -m bench.managed_memory [--quick]

``bench/managed_memory.cu`` (nvcc -cudart shared) runs through ``cricket run`` on a real
``cricket server --backend emu``: each round the host changes a buffer, a kernel adds one to an
element of each page, the host reads it. Explicit copies move the whole buffer both ways; managed
memory (cricket.client.managed) pushes only the pages the host changed and pulls the whole buffer
back after the synchronisation. Two shapes of host change: every element ("all"), and one element
of every 64th page ("sparse"); both measured in the same process, in each run.
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

SHAPES = (("all", ("<=", 1.5), "the same bytes moved, plus a page compare"),
          ("sparse", ("<=", 1.0), "only the changed pages go out"))


def measure(cfg: Config, progress) -> BenchResult:
    mib, rounds = (1, 2) if cfg.tiny else (4, 3) if cfg.quick else (16, 5)
    res = BenchResult("managed", f"emu: managed memory round trip of {mib} MiB against explicit copies")
    if not shutil.which("nvcc"):
        res.skipped = "needs nvcc (CUDA 13) to build bench/managed_memory.cu"
        return res
    server = CricketServer("emu")
    try:
        progress("nvcc builds bench/managed_memory.cu")
        exe = cuda_program.program("managed_memory", cfg.build_dir("bench_managed"))
        runs = []
        for r in range(cfg.repeat):
            progress(f"run {r + 1}/{cfg.repeat}")
            runs.append(cuda_program.figures(exe, server, str(mib), str(rounds)))
    finally:
        server.stop()
    for shape, goal, why in SHAPES:
        res.rows.append(Row(f"host changes {shape}: managed ({why})",
                            Sample.of([x[f"managed_{shape}"] * 1e-6 for x in runs], "s"),
                            Sample.of([x[f"explicit_{shape}"] * 1e-6 for x in runs], "s"),
                            "explicit cudaMemcpy both ways", goal))
    res.notes.append("each figure: the time of one round (host change, kernel, host read), the mean of the program's "
                     "timed rounds; managed pages are compared with a snapshot before a launch (NumPy, about "
                     "12 ms per 64 MiB) and the whole range is pulled back after a synchronise")
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(measure(from_env(quick=args.quick), lambda msg: print(msg, file=sys.stderr)).markdown())


if __name__ == "__main__":
    main()
