"""A CUDA graph of small kernels launched as one against the same kernels launched one by one.

    python -m bench.graphs [--quick]

``bench/graph_launch.cu``, built by nvcc with ``-cudart shared``, runs through ``cricket run`` on a
real ``cricket server --backend emu``; each round is KERNELS launches (or one graph launch of them)
and a cudaStreamSynchronize, the median of timed trials, both measured in the same process.
"""
from __future__ import annotations

from . import cuda_program
from .config import Config
from .report import BenchResult, Row
from .stats import Sample

KERNELS = 100


def measure(cfg: Config, progress) -> BenchResult:
    res = BenchResult("graphs", f"emu: {KERNELS} small kernels as one graph launch against one by one")
    kernels = 10 if cfg.tiny else KERNELS
    runs = cuda_program.runs(cfg, progress, res, "graph_launch", str(kernels))
    if runs is None:
        return res
    res.rows.append(Row(f"{kernels} small kernels + stream synchronize: one graph launch",
                        Sample.of([x["graph_us"] for x in runs], "s"),
                        Sample.of([x["one_by_one_us"] for x in runs], "s"), "the same kernels one by one",
                        ("<=", 1.0)))
    res.notes.append("a graph launch is one call to the server, which replays the kernels on the stream; "
                     "launched one by one, each kernel is a call of its own (batched, no reply). On emu the "
                     "kernels' own run time on the CPU dominates both figures; each run is its own process")
    return res


if __name__ == "__main__":
    cuda_program.main(measure, __doc__)
