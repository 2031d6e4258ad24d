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

from . import cuda_program
from .config import Config
from .report import BenchResult, Row
from .stats import Sample

SHAPES = (("all", ("<=", 1.5), "the same bytes moved, plus a page compare"),
          ("sparse", ("<=", 1.0), "only the changed pages go out"))


def measure(cfg: Config, progress) -> BenchResult:
    mib, rounds = (1, 2) if cfg.tiny else (4, 3) if cfg.quick else (16, 5)
    res = BenchResult("managed", f"emu: managed memory round trip of {mib} MiB against explicit copies")
    runs = cuda_program.runs(cfg, progress, res, "managed_memory", str(mib), str(rounds))
    if runs is None:
        return res
    for shape, goal, why in SHAPES:
        res.rows.append(Row(f"host changes {shape}: managed ({why})",
                            Sample.of([x[f"managed_{shape}"] for x in runs], "s"),
                            Sample.of([x[f"explicit_{shape}"] for x in runs], "s"),
                            "explicit cudaMemcpy both ways", goal))
    res.notes.append("each figure: the time of one round (host change, kernel, host read), the mean of the program's "
                     "timed rounds; managed pages are compared with a snapshot before a launch (NumPy, about "
                     "12 ms per 64 MiB) and the whole range is pulled back after a synchronise")
    return res


if __name__ == "__main__":
    cuda_program.main(measure, __doc__)
