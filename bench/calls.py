"""Per-call costs of the CUDA runtime through the cricket shim, against references of the same run.

    python bench/calls.py [--iterations N] [--max-copy BYTES] [--backend NAME]

A real server (``cricket server``, emu by default) runs on a Unix socket; ``examples/empty_kernel.cu``
(built with nvcc -cudart shared) runs through ``cricket run`` and times cudaGetDeviceCount,
cudaMalloc+cudaFree, registrations, synchronous and asynchronous empty launches and pinned copies of
4 KiB up to --max-copy (default 16 MiB; the issue's full range is --max-copy 256M), each copy the
median of 3 trials of at least 50 ms, as the raw reference is measured. References,
measured in the same run: the NULL RPC round trip to the same server, and raw Unix-socket throughput
between two processes for each copy size (the bytes and a one-byte answer, as a copy needs; the
median of timed trials, measured between the program's runs). Copies are measured on both paths against the same raw
reference: shared memory (the default, server on this host) and the socket (``CRICKET_SHM=0``),
both with the client's default wait (it polls for a reply for up to 100 µs, yielding the CPU between
polls); copies up to 256 KiB also with a client that sleeps in the read at once (``CRICKET_SPIN_US=0``,
what ``cudaDeviceScheduleBlockingSync`` chooses).

The static-cudart path, in the same run: ``bench/calls_paths.cu`` built by nvcc twice, with the
default flags (NVIDIA's static cudart, reaching cricket's libcuda.so.1 replacement) and with
``-cudart shared`` (reaching the libcudart shim), both through ``cricket run`` on the same server,
each run --runs times, interleaved. Its rows (calls answered in the process, malloc+free, launches, copies) hold the static path as
"ours" and the shared path as the reference: the ratio is static/shared, per call or per copy.

Prints Markdown tables: what, ours, reference, ratio, goal.
"""
from __future__ import annotations

import argparse
import importlib.util
import multiprocessing as mp
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cricket._env import parse_size  # noqa: E402


def _examples_build():
    spec = importlib.util.spec_from_file_location("cricket_examples_build", ROOT / "examples" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module



def tree_python(tree: Path) -> str:
    """The Python that runs cricket from the source tree ``tree``: this one's for this tree, else
    the tree's own ``.venv`` (another checkout, built there, e.g. the reference of a comparison)."""
    return sys.executable if tree == ROOT else str(tree / ".venv" / "bin" / "python")


def start_server(directory: Path, backend: str, tree: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """``cricket server`` of the source tree ``tree`` on a Unix socket in ``directory``."""
    address = str(directory / "server.sock")
    ready = directory / "ready"
    proc = subprocess.Popen([tree_python(tree), "-m", "cricket", "server", "--unix", address,
                             "--backend", backend, "--ready-file", str(ready)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tree)
    deadline = time.monotonic() + 60
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("calls.py: the cricket server did not start")
        time.sleep(0.05)
    return proc, address


def null_rpc_us(address: str, n: int) -> float:
    from cricket.client.api import connect
    with connect(address) as conn:
        for _ in range(50):
            conn.ping()
        t0 = time.perf_counter()
        for _ in range(n):
            conn.ping()
        return (time.perf_counter() - t0) / n * 1e6


_RAW_COMMAND = struct.Struct(">cQ")      # b"U" (receive SIZE bytes, answer one) / b"D" (send SIZE) / b"Q"


def _raw_peer(path: str, largest: int) -> None:
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)
    conn, _ = srv.accept()
    view = memoryview(bytearray(b"\2" * largest))
    head = bytearray(_RAW_COMMAND.size)
    while True:
        _recv_exactly(conn, memoryview(head))
        op, size = _RAW_COMMAND.unpack(head)
        if op == b"U":                          # host -> peer: receive, answer one byte
            _recv_exactly(conn, view[:size])
            conn.sendall(b"k")
        elif op == b"D":                        # peer -> host: the bytes answer the request
            conn.sendall(view[:size])
        else:
            break
    conn.close()


def _recv_exactly(sock: socket.socket, view: memoryview) -> None:
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if not n:
            raise ConnectionError("the raw-socket peer went away")
        got += n


RAW_TRIALS = 5              # timed trials per size and direction; the median is reported
RAW_TRIAL_SECONDS = 0.05    # each trial repeats the transfer for at least this long ...
RAW_MIN_REPS = 3            # ... and at least this many times


def raw_socket_us(sizes: list[int], reps: list[int] | None = None, *, trials: int = RAW_TRIALS,
                  seconds: float = RAW_TRIAL_SECONDS) -> dict[str, float]:
    """Microseconds per transfer of each size over a Unix socket between two processes: the
    median of ``trials`` trials, each repeating the transfer for at least ``seconds`` (and at
    least ``reps[i]`` times when given), after one untimed transfer that warms the buffers.
    The upload sends a 9-byte command and the bytes and waits for a one-byte answer; the download
    sends a command and receives the bytes, as a copy needs."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "raw.sock")
        peer = mp.get_context("fork").Process(target=_raw_peer, args=(path, max(sizes)))
        peer.start()
        s = socket.socket(socket.AF_UNIX)
        deadline = time.monotonic() + 60
        while True:         # the peer binds, then listens: connect once it does both
            try:
                s.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline or not peer.is_alive():
                    raise
                time.sleep(0.01)
        data = memoryview(bytearray(b"\1" * max(sizes)))
        back = memoryview(bytearray(max(sizes)))
        ack = memoryview(bytearray(1))

        def upload(size: int) -> None:
            s.sendall(_RAW_COMMAND.pack(b"U", size))
            s.sendall(data[:size])
            _recv_exactly(s, ack)

        def download(size: int) -> None:
            s.sendall(_RAW_COMMAND.pack(b"D", size))
            _recv_exactly(s, back[:size])

        out = {}
        for i, size in enumerate(sizes):
            least = max(RAW_MIN_REPS, reps[i] if reps else 0)
            for key, move in ((f"htod_{size}", upload), (f"dtoh_{size}", download)):
                move(size)                      # warm: the buffers' pages and the socket
                per_trial = []
                for _ in range(trials):
                    n = 0
                    t0 = time.perf_counter()
                    while n < least or time.perf_counter() - t0 < seconds:
                        move(size)
                        n += 1
                    per_trial.append((time.perf_counter() - t0) / n * 1e6)
                out[key] = statistics.median(per_trial)
        s.sendall(_RAW_COMMAND.pack(b"Q", 0))
        s.close()
        peer.join()
    return out


def run_program(program: Path, address: str, iterations: int, max_copy: int | None,
                env: dict[str, str] | None = None, tree: Path = ROOT) -> dict[str, float]:
    """One run of ``program`` through ``cricket run`` of the source tree ``tree``: its "NAME
    VALUE" lines. ``env`` adds to the environment (e.g. ``CRICKET_SHM=0``)."""
    sizes = [] if max_copy is None else [str(max_copy)]
    res = subprocess.run([tree_python(tree), "-m", "cricket", "run", "--server", address, "--",
                          str(program), str(iterations), *sizes],
                         capture_output=True, text=True, cwd=tree, timeout=1800,
                         env=dict(os.environ, **env) if env else None)
    if res.returncode != 0:
        raise SystemExit(f"calls.py: {program.name} failed ({res.returncode}):\n{res.stdout}{res.stderr}")
    values = {}
    for line in res.stdout.splitlines():
        name, _, value = line.partition(" ")
        values[name] = float(value)
    return values


BLOCKING_MAX_COPY = 256 << 10    # the rows of a client that never polls: copies up to this size
                                 # (where round trips dominate)

PATHS_SOURCE = ROOT / "bench" / "calls_paths.cu"
PATHS_HEADER = ROOT / "examples" / "bench_timing.h"
PATHS_GOAL = 1.5          # the static path costs at most this much more than the shared one


def build_paths(outdir: Path = ROOT / "build" / "bench_calls") -> dict[str, Path]:
    """``calls_paths.cu`` built by nvcc with its default flags (``static``) and with ``-cudart
    shared`` (``shared``); a build newer than the source is kept."""
    outdir.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, flags in (("static", []), ("shared", ["-cudart", "shared"])):
        exe = outdir / f"calls_paths.{name}"
        newest = max(PATHS_SOURCE.stat().st_mtime, PATHS_HEADER.stat().st_mtime)
        if not exe.exists() or exe.stat().st_mtime < newest:
            r = subprocess.run(["nvcc", "-O2", *flags, "-o", str(exe), str(PATHS_SOURCE)],
                               capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError(f"nvcc {' '.join(flags) or '(default flags)'} failed on "
                                   f"{PATHS_SOURCE.name}:\n{r.stderr[-1500:]}")
        out[name] = exe
    return out


def path_rows(sizes: list[int]) -> list[tuple[str, str]]:
    """(what, key) of the static-vs-shared rows, in table order."""
    rows = [("cudaGetDeviceCount (answered locally)", "cudaGetDeviceCount"),
            ("cudaGetDevice (answered locally)", "cudaGetDevice"),
            ("cudaDeviceGetAttribute (answered locally)", "cudaDeviceGetAttribute"),
            ("cudaMalloc + cudaFree", "malloc_free"),
            ("asynchronous empty launch, issue", "launch_async_issue"),
            ("empty launch + cudaDeviceSynchronize", "launch_sync")]
    for direction, label in (("htod", "cudaMemcpy H→D"), ("dtoh", "cudaMemcpy D→H")):
        rows += [(f"{label} {size_name(s)} (pinned), per copy", f"{direction}_{s}") for s in sizes]
    return rows


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over the runs of one program."""
    return {k: statistics.median(r[k] for r in runs if k in r) for k in runs[0]}


def size_name(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--max-copy", type=parse_size, default=16 << 20)
    parser.add_argument("--backend", default="emu")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of the program per copy path; each figure is the median")
    args = parser.parse_args(argv)
    program = _examples_build().build(["empty_kernel"], ROOT / "build" / "examples", jobs=1)["empty_kernel"]
    from cricket.client import driver_env
    if not driver_env.available():
        raise SystemExit("calls.py: the libcuda.so.1 replacement is not built (cricket/_driver); run `make build`")
    paths = build_paths()
    sizes = []
    size = 4096
    while size <= args.max_copy:
        sizes.append(size)
        size *= 4
    with tempfile.TemporaryDirectory(prefix="cricket-bench-") as d:
        server, address = start_server(Path(d), args.backend)
        try:
            # The copy paths: shared memory (the default with a server on this host) and the
            # socket (CRICKET_SHM=0), and the raw socket, runs interleaved so that load changes
            # (and the slow spells of a socket that last seconds) hit all three alike.
            # And the default path with a client that sleeps in the read at once (no polling for
            # replies, CRICKET_SPIN_US=0), for the latency-bound sizes.
            small = min(args.max_copy, BLOCKING_MAX_COPY)
            runs: dict[str, list[dict[str, float]]] = {"shm": [], "socket": [], "blocking": [], "raw": []}
            for _ in range(max(1, args.runs)):
                runs["shm"].append(run_program(program, address, args.iterations, args.max_copy))
                runs["socket"].append(run_program(program, address, args.iterations, args.max_copy,
                                                  env={"CRICKET_SHM": "0"}))
                runs["blocking"].append(run_program(program, address, args.iterations, small,
                                                    env={"CRICKET_SPIN_US": "0"}))
                runs["raw"].append(raw_socket_us(sizes, trials=3))
            ours = _medians(runs["shm"])
            socket_path = _medians(runs["socket"])
            blocking = _medians(runs["blocking"])
            raw = _medians(runs["raw"])
            # The two builds of calls_paths.cu, interleaved as well: each figure the median of the runs.
            builds: dict[str, list[dict[str, float]]] = {"static": [], "shared": []}
            for _ in range(max(1, args.runs)):
                for name in ("static", "shared"):
                    builds[name].append(run_program(paths[name], address, args.iterations, args.max_copy))
            static, shared = _medians(builds["static"]), _medians(builds["shared"])
            null_us = null_rpc_us(address, args.iterations * 5)
        finally:
            server.terminate()
            server.wait(10)

    rows = [("what", "ours", "reference", "ratio", "goal"), ("---",) * 5]

    def us(v: float) -> str:
        return f"{v:.2f} µs"

    rows.append(("cudaGetDeviceCount (answered locally)", us(ours["cudaGetDeviceCount"]),
                 f"NULL RPC {us(null_us)}", f"{ours['cudaGetDeviceCount'] / null_us:.3f}", "≪ 1"))
    rows.append(("cudaMalloc + cudaFree", us(ours["cudaMalloc+cudaFree"]), f"2 NULL RPCs {us(2 * null_us)}",
                 f"{ours['cudaMalloc+cudaFree'] / (2 * null_us):.2f}", "—"))
    rows.append(("__cudaRegisterFunction (nothing sent)", us(ours["registration"]),
                 f"NULL RPC {us(null_us)}", f"{ours['registration'] / null_us:.3f}", "≪ 1"))
    rows.append(("empty launch + cudaDeviceSynchronize", us(ours["launch_sync"]), f"NULL RPC {us(null_us)}",
                 f"{ours['launch_sync'] / null_us:.2f}", "ours ≤ 60 µs"))
    rows.append(("asynchronous empty launch, issue", us(ours["launch_async_issue"]), "goal 5 µs",
                 f"{ours['launch_async_issue'] / 5:.2f}", "≤ 1"))
    rows.append(("asynchronous empty launch, issue to completion", us(ours["launch_async_total"]),
                 f"NULL RPC {us(null_us)}", f"{ours['launch_async_total'] / null_us:.2f}", "—"))
    rows.append(("cudaMemcpy H→D 4 KiB from pageable memory (returns once staged)",
                 us(ours["htod_pageable_4096"]), f"NULL RPC {us(null_us)}",
                 f"{ours['htod_pageable_4096'] / null_us:.2f}", "—"))
    for direction, label in (("htod", "cudaMemcpy H→D"), ("dtoh", "cudaMemcpy D→H")):
        for s in sizes:
            key = f"{direction}_{s}"
            ref = s / raw[key]                              # bytes per µs = MB/s
            paths = [("shared memory", ours, "≥ 0.80"), ("socket, CRICKET_SHM=0", socket_path, "≥ 0.80")]
            if key in blocking:     # what a program that asks to block gets: shown, not a goal
                paths.append(("shared memory, no polling (CRICKET_SPIN_US=0)", blocking, "—"))
            for path, values, goal in paths:
                mine = s / values[key]
                rows.append((f"{label} {size_name(s)} (pinned), {path}", f"{mine:.0f} MB/s",
                             f"raw Unix socket {ref:.0f} MB/s", f"{mine / ref:.2f}", goal))
    runs_n = max(1, args.runs)
    print(f"backend {args.backend}, {args.iterations} iterations, {os.cpu_count()} CPUs; copies: median "
          f"of {runs_n} runs per path, each the median of 3 trials of ≥ 50 ms; raw socket: median of "
          f"{runs_n} runs, each the median of 3 trials of ≥ {RAW_TRIAL_SECONDS * 1e3:.0f} ms, between "
          "the program runs\n")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("\nstatic cudart (nvcc default flags) → libcuda.so.1 replacement, against -cudart shared → "
          f"libcudart shim, same program, same server (µs per call or per copy; median of {runs_n} "
          "interleaved runs of each build)\n")
    print("| what | ours: static cudart | reference: -cudart shared | ratio static/shared | goal |")
    print("| --- | --- | --- | --- | --- |")
    for what, key in path_rows(sizes):
        a, b = static[key], shared[key]
        ratio = a / b if b else float("inf")
        mark = "✓" if ratio <= PATHS_GOAL else "✗"
        print(f"| {what} | {us(a)} | {us(b)} | {ratio:.2f} | ≤ {PATHS_GOAL} {mark} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
