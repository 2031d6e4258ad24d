"""The calls a process answers itself, through the runtime and the driver faces, against another tree.

    python bench/local_calls.py [--iterations N] [--runs R] [--reference-tree DIR ...] [--backend NAME]

``bench/local_calls.cu`` (nvcc ``-cudart shared``, linked with ``libcuda.so.1``) times, in
nanoseconds per call (the median of 5 batches of N calls; the calling thread's CPU time for the
calls answered in the process, so that a busy machine's other work does not count, and wall-clock
time for the round trips), the runtime calls the client answers
without the server (cudaGetDeviceCount, cudaGetDevice, cudaSetDevice to the current device,
cudaGetLastError, cudaPeekAtLastError, cudaDeviceGetAttribute), the registrations nvcc's start-up
code makes (``__cudaRegisterFunction``, ``__cudaRegisterVar``: the median of 5 bursts of 24,000
into a new fatbin, as a PyTorch-sized program makes at import), the driver calls the libcuda.so.1
replacement answers in C (cuDeviceGetCount, cuCtxGetCurrent, cuDeviceGetAttribute), one the
driver face's guard answers in Python (cuCtxGetLimit), and a round trip through each face with
nothing queued (cuCtxSynchronize, cudaDeviceSynchronize).

The reference is the same program run by another source tree, built there with its own ``.venv``
(``--reference-tree``, e.g. a clone at an older commit after ``make build``; given more than once,
each is a reference of its own), against a server of that tree: the trees' runs alternate, R runs
each, and each figure is the median of its runs. Without a reference tree the table shows this
tree's figures alone.

Prints a Markdown table: what, ours, then reference and ratio for each reference tree, goal.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calls import ROOT, run_program, start_server  # noqa: E402

SOURCE = ROOT / "bench" / "local_calls.cu"
HEADER = ROOT / "examples" / "registration.h"

#: (what, key in the program's output, goal of ours / reference)
ROWS = [
    ("cudaGetDeviceCount (answered locally)", "cudaGetDeviceCount", "≤ 1"),
    ("cudaGetDevice (answered locally)", "cudaGetDevice", "≤ 1"),
    ("cudaSetDevice to the current device (answered locally)", "cudaSetDevice_current", "≤ 1"),
    ("cudaGetLastError (answered locally)", "cudaGetLastError", "≤ 1"),
    ("cudaPeekAtLastError (answered locally)", "cudaPeekAtLastError", "≤ 1"),
    ("cudaDeviceGetAttribute (answered locally)", "cudaDeviceGetAttribute", "≤ 1"),
    ("__cudaRegisterFunction (nothing sent; a burst of 24,000)", "__cudaRegisterFunction", "≤ 1"),
    ("__cudaRegisterVar (nothing sent; a burst of 24,000)", "__cudaRegisterVar", "≤ 1"),
    ("cuDeviceGetCount (answered in C)", "cuDeviceGetCount", "—"),
    ("cuCtxGetCurrent (answered in C)", "cuCtxGetCurrent", "—"),
    ("cuDeviceGetAttribute (answered in C)", "cuDeviceGetAttribute", "—"),
    ("cuCtxGetLimit (the driver guard, answered locally)", "cuCtxGetLimit", "≤ 1"),
    ("cuCtxSynchronize (round trip, nothing queued)", "cuCtxSynchronize", "≤ 1"),
    ("cudaDeviceSynchronize (round trip, nothing queued)", "cudaDeviceSynchronize", "≤ 1"),
]


def build(outdir: Path = ROOT / "build" / "bench_local_calls") -> Path:
    """``local_calls.cu`` built by nvcc (``-cudart shared``, linked with the libcuda.so.1
    replacement of this tree; ``cricket run`` of each tree puts its own in front); a build newer
    than the source is kept."""
    from cricket.client import driver_env
    if not driver_env.available():
        raise SystemExit("local_calls.py: the libcuda.so.1 replacement is not built (cricket/_driver); "
                         "run `make build`")
    outdir.mkdir(parents=True, exist_ok=True)
    exe = outdir / "local_calls"
    if exe.exists() and exe.stat().st_mtime > max(SOURCE.stat().st_mtime, HEADER.stat().st_mtime):
        return exe
    r = subprocess.run(["nvcc", "-O2", "-cudart", "shared", "-o", str(exe), str(SOURCE),
                        f"-L{driver_env.DRIVER_DIR}", "-l:libcuda.so.1"], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"local_calls.py: nvcc failed on {SOURCE.name}:\n{r.stderr[-1500:]}")
    return exe


def measure(trees: list[Path], iterations: int, runs: int, backend: str) -> list[dict[str, float]]:
    """Each tree's figures: the median of ``runs`` runs, the trees' runs alternating."""
    exe = build()
    figures: list[list[dict[str, float]]] = [[] for _ in trees]
    with tempfile.TemporaryDirectory(prefix="cricket-bench-local-") as d:
        servers = []
        try:
            for i, tree in enumerate(trees):
                (Path(d) / str(i)).mkdir()
                servers.append(start_server(Path(d) / str(i), backend, tree))
            for _ in range(runs):
                for i, tree in enumerate(trees):
                    figures[i].append(run_program(exe, servers[i][1], iterations, None, tree=tree))
        finally:
            for proc, _ in servers:
                proc.terminate()
                proc.wait(10)
    return [{k: statistics.median(r[k] for r in per_tree) for k in per_tree[0]} for per_tree in figures]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100000, help="calls per timed batch")
    parser.add_argument("--runs", type=int, default=3, help="runs of the program per tree")
    parser.add_argument("--reference-tree", type=Path, action="append", default=[],
                        help="another checkout, built (`make build`); may be repeated")
    parser.add_argument("--backend", default="emu")
    args = parser.parse_args(argv)
    references = [tree.resolve() for tree in args.reference_tree]
    for tree in references:
        if not (tree / ".venv" / "bin" / "python").exists():
            raise SystemExit(f"local_calls.py: {tree} has no .venv; run `make build` there first")
    runs = max(1, args.runs)
    ours, *refs = measure([ROOT, *references], args.iterations, runs, args.backend)
    print(f"backend {args.backend}; ns per call, the median of {runs} runs per tree (runs alternating), "
          f"each the median of 5 batches of {args.iterations} calls (round trips: of "
          f"{max(100, args.iterations // 100)})\n")
    head = ["what", "ours"]
    for i, tree in enumerate(references, 1):
        head += [f"reference {i}: {tree.name}", "ratio"]
    print("| " + " | ".join(head + ["goal"]) + " |")
    print("|" + " --- |" * (len(head) + 1))

    def text(v: float | None) -> str:
        return "—" if v is None else f"{v:.1f} ns"
    for what, key, goal in ROWS:
        mine = ours.get(key)
        row = [what, text(mine)]
        for ref in refs:
            other = ref.get(key)
            row += [text(other), f"{mine / other:.2f}" if mine is not None and other else "—"]
        print("| " + " | ".join(row + [goal if refs else "—"]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
