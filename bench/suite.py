"""The suite behind ``cricket bench``: every bench of ``bench/``, repeated, into one report."""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from .config import Config
from .report import BenchResult, Row, gpu_name
from .stats import Sample, size_label

ROOT = Path(__file__).resolve().parent.parent
Progress = Callable[[str], None]


# ---- XDR codec ------------------------------------------------------------------------------

def bench_xdr(cfg: Config, progress: Progress) -> BenchResult:
    from bench import xdr
    from cricket import xdr as core
    res = BenchResult("xdr", "XDR codec: generated Cython codec vs xdrlib3")
    if core.IMPLEMENTATION != "cython":
        res.skipped = "the Cython XDR core is not built (run `make build`)"
        return res
    if importlib.util.find_spec("Cython") is None:
        res.skipped = ("needs Cython at run time to build the generated codec: "
                       "pip install 'cricket[bench]'")
        return res
    progress("building the Cython codec of a small .x")
    mod = xdr._generate(cfg.build_dir("bench_xdr"), "xdrbench_cy", cython=True)
    quick = cfg.quick
    timer = _tiny_times if cfg.tiny else xdr._times
    progress("timing ours")
    ours = xdr.measure_ours(mod, quick, timer=timer)
    progress("timing xdrlib3")
    ref = xdr.measure_xdrlib3(mod, quick, timer=timer)
    for what, ref_us in ref.items():
        goal = (">=", xdr.GOALS[what]) if what in xdr.GOALS else "—" if what == xdr.WIDE_ROW else "no copy " + (
            "✓" if ours["_zero_copy_pack" if "unpack" not in what else "_zero_copy_unpack"] else "✗")
        res.rows.append(Row(what, Sample.of([t * 1e-6 for t in ours[what]], "s"),
                            Sample.of([t * 1e-6 for t in ref_us], "s"), "xdrlib3", goal, ratio_of="ref/ours"))
    res.notes.append("each figure: µs per operation in each timeit round (best-of-autorange loops)")
    res.notes.append(f"{xdr.WIDE_ROW}: every item needs a new int object (the decoder shares the ints "
                     "below 65536, made once, as CPython shares -5…256); that allocation is the floor, "
                     "about what list(range(65536, 75536)) costs")
    return res


def _tiny_times(fn, quick: bool) -> list[float]:
    """µs per operation in each of 2 rounds of about 20 ms (the tiny set, for tests)."""
    import timeit
    t = timeit.Timer(fn)
    one = t.timeit(1)
    number = max(1, int(0.02 / max(one, 1e-7)))
    return [x / number * 1e6 for x in t.repeat(2, number)]


# ---- ONC RPC NULL calls -----------------------------------------------------------------------

def bench_rpc(cfg: Config, progress: Progress) -> BenchResult:
    from bench import rpc
    res = BenchResult("rpc", "ONC RPC NULL calls: cricket.rpc vs the libtirpc C pair")
    calls = 200 if cfg.tiny else 2000 if cfg.quick else 5000
    with tempfile.TemporaryDirectory(prefix="cricket-bench-rpc-") as tmp:
        progress("building the libtirpc C pair")
        c = rpc.build_c(Path(tmp))
        csrv, psrv = rpc.Proc([c["server"], "0"]), rpc.py_server()
        runs: dict[str, list[float]] = {}
        try:
            everywhere = os.sched_getaffinity(0) if rpc.CPUS else None
            rpc._pin(rpc.CLIENT_CPU)
            try:
                for r in range(cfg.repeat):
                    progress(f"round trips, run {r + 1}/{cfg.repeat}")
                    runs.setdefault("c", []).append(rpc.c_round_trip(c["client"], csrv.address, calls))
                    runs.setdefault("ours", []).append(rpc.py_round_trip(psrv.address, calls))
                    runs.setdefault("polling", []).append(rpc.py_round_trip(psrv.address, calls, poll=True))
                    runs.setdefault("mixed", []).append(rpc.c_round_trip(c["client"], psrv.address, calls))
            finally:
                rpc._pin(everywhere)
            for srv in (csrv, psrv):
                if everywhere is not None:
                    os.sched_setaffinity(srv.p.pid, everywhere)
            pipelined = 4000 if cfg.tiny else 20000 if cfg.quick else 40000
            for r in range(cfg.repeat):
                progress(f"pipelined calls, run {r + 1}/{cfg.repeat}")
                runs.setdefault("pipe", []).append(rpc.py_pipelined(psrv.address, pipelined, window=1000))
            if not cfg.tiny:
                seconds = 1.0 if cfg.quick else 2.0
                progress("8 concurrent clients")
                runs["conc_ours"] = [rpc.py_concurrent(psrv.address, 8, seconds)]
                runs["conc_c"] = [rpc.c_concurrent(c["client"], csrv.address, 8, seconds)]
                _many_clients(cfg, progress, c["client"], csrv, psrv, runs, seconds)
        finally:
            csrv.stop()
            psrv.stop()
    c_rt = Sample.of(runs["c"], "s")
    res.rows += [
        Row("NULL round trip: our client → our server", Sample.of(runs["ours"], "s"), c_rt, "C ↔ C",
            ("<=", 1.25)),
        Row("NULL round trip: our client polling for the reply (its default) → our server",
            Sample.of(runs["polling"], "s"), c_rt, "C ↔ C"),
        Row("NULL round trip: C client → our server", Sample.of(runs["mixed"], "s"), c_rt, "C ↔ C"),
        Row("pipelined NULL calls, one blocking client", Sample.of(runs["pipe"], "/s"),
            Sample.of([100000], "/s"), "goal figure", (">=", 1.0)),
    ]
    if "conc_ours" in runs:
        res.rows.append(Row("NULL calls, 8 client processes → server", Sample.of(runs["conc_ours"], "/s"),
                            Sample.of(runs["conc_c"], "/s"), "8 C clients → C server"))
    for n in MANY_CLIENTS:
        if f"many_c_{n}" not in runs:
            continue
        ref = Sample.of([sum(r) for r in runs[f"many_c_{n}"]], "/s")
        for w in (1, WORKERS):
            res.rows.append(Row(f"NULL calls, {n} C clients → our server, {_processes(w)}",
                                Sample.of([sum(r) for r in runs[f"many_{w}_{n}"]], "/s"), ref,
                                f"{n} C clients → C server", (">=", 1.0) if w == WORKERS else "—"))
        for w in (1, WORKERS):
            res.rows.append(Row(f"NULL calls, {n} C clients → `cricket server --workers {w}`",
                                Sample.of([sum(r) for r in runs[f"many_cricket{w}_{n}"]], "/s"), ref,
                                f"{n} C clients → C server", (">=", 1.0) if w == WORKERS else "—"))
        fair_ref = Sample.of([max(r) / min(r) for r in runs[f"many_c_{n}"]], "×")
        for w in (1, WORKERS):
            res.rows.append(Row(f"fairness, {n} C clients: fastest / slowest client, our server, {_processes(w)}",
                                Sample.of([max(r) / min(r) for r in runs[f"many_{w}_{n}"]], "×"), fair_ref,
                                "C server", ("<=", 1.0) if w == WORKERS else "—"))
    res.notes.append(f"{calls} calls per round-trip run; round trips with server and client on one CPU; "
                     "our client blocks in the read as libtirpc's does, except in the polling row")
    if any(k.startswith("many_") for k in runs):
        res.notes.append(f"many clients: the same libtirpc C client processes against each server (every "
                         f"CPU, interleaved runs); `--workers {WORKERS}` = one worker process per usable "
                         "core (cricket.rpc.server_workers: connections handed out in turn; `cricket server "
                         "--workers`: the same, emu backend, NULL of cricket.x's program); fairness = the fastest client's "
                         "calls/s over the slowest's (1 = equal shares), goal: no worse than the C server")
    return res


MANY_CLIENTS = (8, 32)
WORKERS = max(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 2)


def _processes(workers: int) -> str:
    return "one process" if workers == 1 else f"{workers} worker processes"


def _many_clients(cfg: Config, progress: Progress, client: str, csrv, psrv, runs: dict, seconds: float) -> None:
    """C clients against the C server, our RPC server and `cricket server`, each in one process
    and with one worker per core."""
    from bench import rpc
    started = [rpc.py_server(WORKERS)]
    try:
        started += [rpc.cricket_server(1), rpc.cricket_server(WORKERS)]
        everywhere = os.sched_getaffinity(0) if rpc.CPUS else None
        if everywhere is not None:
            for srv in started:
                for pid in [srv.p.pid, *_children(srv.p.pid)]:
                    os.sched_setaffinity(pid, everywhere)
        servers = {"c": (csrv, ()), "1": (psrv, ()), str(WORKERS): (started[0], ()),
                   "cricket1": (started[1], rpc.CRICKET_PROGRAM),
                   f"cricket{WORKERS}": (started[2], rpc.CRICKET_PROGRAM)}
        for r in range(cfg.repeat):
            for n in MANY_CLIENTS:
                progress(f"{n} C clients against each server, run {r + 1}/{cfg.repeat}")
                for key, (srv, program) in servers.items():
                    runs.setdefault(f"many_{key}_{n}", []).append(rpc.c_client_rates(
                        client, srv.address, n, seconds / 2 if cfg.quick else seconds, program))
    finally:
        for srv in started:
            srv.stop()


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


# ---- latency by size, copies --------------------------------------------------------------------

def bench_latency(cfg: Config, progress: Progress) -> BenchResult:
    from bench import latency
    return latency.measure(cfg, progress)


def bench_copy(cfg: Config, progress: Progress, backend: str = "emu") -> BenchResult:
    from bench import copies
    return copies.measure(cfg, progress, backend=backend)


def bench_tls(cfg: Config, progress: Progress) -> BenchResult:
    from bench import tls
    return tls.measure(cfg, progress)


# ---- emulator ------------------------------------------------------------------------------------

def bench_emu(cfg: Config, progress: Progress) -> BenchResult:
    from bench import emu
    res = BenchResult("emu", "emu backend: PTX interpreter throughput by kernel")
    shrink = 4 if cfg.tiny else 0          # the tiny set: 1/16 of every problem
    progress(f"kernels on {emu.count_label(1 << 20 >> shrink)} elements")
    b = emu.Bench(65536, cfg.repeat, shrink)
    b.run()
    samples, labels = [], []
    for d in b.data:
        if "rates" in d:
            s = Sample.of(d["rates"], "/s")
            res.rows.append(Row(f"{d['what']}: thread-instructions/s", s, None,
                                "", (">=", d["goal_m"] * 1e6), goal_on="ours"))
            res.rows.append(Row(f"{d['what']}: time", Sample.of(d["times"], "s"),
                                Sample.of(d["ref_times"], "s"), "NumPy, same data"))
            samples.append(Sample.of([r / 1e6 for r in d["rates"]], "M/s"))
            labels.append(d["what"])
        else:
            res.rows.append(Row(d["what"], Sample.of(d["times"], "s"), Sample.of(d["ref_times"], "s"),
                                "NumPy on 256 elements", ("<=", d["goal_s"]), goal_on="ours"))
    res.series["emu"] = {"labels": labels, "samples": samples}
    res.notes.append("the goal of a throughput row applies to thread-instructions per second")
    return res


def bench_kernels(cfg: Config, progress: Progress) -> BenchResult:
    from bench import kernels
    return kernels.measure(cfg, progress)


def bench_graphs(cfg: Config, progress: Progress) -> BenchResult:
    from bench import graphs
    return graphs.measure(cfg, progress)


def bench_managed(cfg: Config, progress: Progress) -> BenchResult:
    from bench import managed_memory
    return managed_memory.measure(cfg, progress)


def bench_servers(cfg: Config, progress: Progress) -> BenchResult:
    from bench import multiserver
    return multiserver.measure(cfg, progress)


# ---- fatbin registration --------------------------------------------------------------------------

def _small_library(workdir: Path, one_source: bool = False) -> Path | None:
    """A shared library with device code for sm_75 and sm_90, compressed, built by nvcc (from
    one source file only with ``one_source``)."""
    if not shutil.which("nvcc"):
        return None
    sources = [str(p) for p in sorted((ROOT / "tests" / "server" / "cuda").glob("*.cu"))]
    sources = sources or [str(ROOT / "examples" / "overhead" / "overhead.cu")]
    sources = sources[:1] if one_source else sources
    lib = workdir / "libbenchkernels.so"
    cmd = ["nvcc", "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_75,code=[sm_75,compute_75]",
           "-gencode", "arch=compute_90,code=sm_90", "-Xfatbin", "--compress-all", "-o", str(lib), *sources]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return lib if r.returncode == 0 else None


def bench_fatbin(cfg: Config, progress: Progress) -> BenchResult:
    from bench import fatbin
    res = BenchResult("fatbin", "Fatbin registration: lazy (cricket.fatbin) vs eager decoding")
    with tempfile.TemporaryDirectory(prefix="cricket-bench-fatbin-") as tmp:
        library = None if cfg.quick else fatbin.cached_library()
        if library is None:
            progress("nvcc builds a small library with device code")
            library = _small_library(Path(tmp), one_source=cfg.tiny)
        if library is None:
            res.skipped = "needs nvcc to build a library with device code (or `bench/fatbin.py --download`)"
            return res
        arch = 90
        args = type("Args", (), {"library": library, "arch": arch})()
        index, kernel = fatbin.pick_kernel(str(library), arch)
        runs: dict[str, list[dict]] = {}
        for r in range(cfg.repeat):
            progress(f"{library.name}, run {r + 1}/{cfg.repeat}")
            for mode in ("lazy-file", "lazy-first-launch", "eager-parse", "decode-ours", "decode-zstd"):
                if mode == "eager-parse" and r >= 3:
                    continue        # the slow reference: three runs are enough (about 25 s each on libcublasLt)
                runs.setdefault(mode, []).append(fatbin.run_child(mode, args, index, kernel))
        size_mb = library.stat().st_size / 1e6
    sec = {m: Sample.of([x["seconds"] for x in v], "s") for m, v in runs.items()}
    eager = sec["eager-parse"]
    n = runs["lazy-file"][0]["fatbins"]
    res.rows += [
        Row(f"register {n} fatbins from the file", sec["lazy-file"], eager, "eager decode + parse",
            ("<=", 0.01)),
        Row("register + first launch of one kernel", sec["lazy-first-launch"], eager, "eager decode + parse",
            ("<=", 0.05)),
    ]
    dec = runs["decode-ours"][0]
    if dec.get("size"):
        res.rows.append(Row("decompress every entry (output bytes/s)",
                            Sample.of([x["size"] / x["seconds"] for x in runs["decode-ours"]], "B/s"),
                            Sample.of([x["size"] / x["seconds"] for x in runs["decode-zstd"]], "B/s"),
                            "zstandard alone", (">=", 0.8)))
    res.notes.append(f"library: {library.name}, {size_mb:.1f} MB; each measurement in its own process"
                     + ("" if library.name.startswith("libcublasLt") else
                        "; a small nvcc-built library (run `python bench/fatbin.py --download` once "
                        "for libcublasLt in the full run); the goals are set for a large library, where eager "
                        "decoding costs seconds"))
    return res


# ---- the overhead example ------------------------------------------------------------------------

def _prebuilt(name: str) -> Path | None:
    """An artifact `bench/gpu.sh --prepare` built where nvcc exists (CRICKET_BENCH_PREBUILT)."""
    folder = os.environ.get("CRICKET_BENCH_PREBUILT")
    path = Path(folder) / name if folder else None
    return path if path and path.exists() else None


def _parse_overhead(stdout: str) -> dict[str, float]:
    """``overhead CASE US`` lines → {case: seconds}."""
    return {p[1]: float(p[2]) * 1e-6 for p in (line.split() for line in stdout.splitlines())
            if len(p) == 3 and p[0] == "overhead"}


def _overhead_program(workdir: Path, name: str, flags: list[str]) -> Path:
    exe = _prebuilt(name)
    if exe is None:
        exe = workdir / name
        r = subprocess.run(["nvcc", "-O2", *flags, "-o", str(exe), str(ROOT / "examples" / "overhead" / "overhead.cu")],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"nvcc failed on overhead.cu:\n{r.stderr[-1500:]}")
    return exe


def bench_overhead(cfg: Config, progress: Progress, backend: str = "emu") -> BenchResult:
    sys.path.insert(0, str(ROOT / "examples" / "overhead"))
    import overhead
    from bench.servers import CricketServer
    res = BenchResult("overhead", f"Remoting overhead (examples/overhead), {backend} backend")
    on_gpu = backend == "cuda"
    arch = "sm_90" if on_gpu else "sm_75"
    prebuilt = _prebuilt(f"overhead.{arch}.fatbin")
    if not shutil.which("nvcc") and (prebuilt is None or (on_gpu and _prebuilt("overhead") is None)):
        res.skipped = ("needs nvcc (CUDA 13) to compile examples/overhead/overhead.cu, or the artifacts "
                       "of `bench/gpu.sh --prepare` in $CRICKET_BENCH_PREBUILT")
        return res
    iterations = 200 if cfg.tiny else 2000 if cfg.quick else 10000
    launches = 20 if cfg.tiny else 200 if cfg.quick else 1000
    program_n = 50 if cfg.tiny else 300 if cfg.quick else 2000
    if on_gpu:
        launches, program_n = iterations, iterations * 5
    have_run = _has_module("cricket.client.run_cli")
    gencode = ["-gencode", "arch=compute_90,code=[sm_90,compute_90]"] if on_gpu else []
    py: dict[str, list[float]] = {}
    run: dict[str, list[float]] = {}
    native: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="cricket-bench-overhead-") as tmp:
        fatbin = prebuilt or overhead.build_fatbin(Path(tmp), arch)
        shared = _overhead_program(Path(tmp), "overhead.cricket", ["-cudart", "shared", *gencode]) \
            if have_run else None
        server = CricketServer(backend)
        try:
            for r in range(cfg.repeat):
                progress(f"Python API, run {r + 1}/{cfg.repeat}")
                for k, v in overhead.measure(server.address, fatbin, iterations, launches).items():
                    py.setdefault(k, []).append(v * 1e-6)
                if shared is not None:
                    progress(f"cricket run -- overhead, run {r + 1}/{cfg.repeat}")
                    p = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", server.address, "--",
                                        str(shared), str(program_n)], capture_output=True, text=True,
                                       timeout=600, cwd=ROOT)
                    if p.returncode:
                        raise RuntimeError(f"cricket run -- overhead failed ({p.returncode}):\n"
                                           f"{p.stdout[-800:]}{p.stderr[-1500:]}")
                    for k, v in _parse_overhead(p.stdout).items():
                        run.setdefault(k, []).append(v)
        finally:
            server.stop()
        if on_gpu:
            exe = _overhead_program(Path(tmp), "overhead", gencode)
            for r in range(cfg.repeat):
                progress(f"native CUDA, run {r + 1}/{cfg.repeat}")
                p = subprocess.run([str(exe), str(iterations * 10)], check=True, capture_output=True, text=True)
                for k, v in _parse_overhead(p.stdout).items():
                    native.setdefault(k, []).append(v)
    label = "native CUDA" if on_gpu else "no GPU here: native not measured"
    for case in overhead.CASES:
        ref = Sample.of(native[case], "s") if case in native else None
        if case in run:
            res.rows.append(Row(f"{case}: `cricket run` (C program)", Sample.of(run[case], "s"), ref, label))
        what = f"{case}: Python API" + (" (client cache)" if case == "cudaGetDeviceCount" else "")
        res.rows.append(Row(what, Sample.of(py[case], "s"), ref if case != "null_rpc" else None,
                            label if case != "null_rpc" else "one NULL round trip, for scale"))
    res.notes.append(f"µs per call; C program: {program_n} iterations per case (after 100 warm-up), "
                     f"Python API: {iterations} per call case, {launches} per launch case; the async "
                     "cases include the final synchronize")
    if not have_run:
        res.notes.append("`cricket run` is not in this build: the C program was not run through cricket")
    return res


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


# ---- client calls (the preloaded client's bench) -----------------------------------------------

def bench_calls(cfg: Config, progress: Progress, backend: str = "emu") -> BenchResult:
    res = BenchResult("calls", f"Client calls and copies through the preloaded libcudart (bench/calls.py, "
                               f"{backend} backend, Unix socket)")
    if not (ROOT / "bench" / "calls.py").exists() or not _has_module("cricket.client.run_cli"):
        res.skipped = "bench/calls.py and `cricket run` (the preloaded client) are not in this build yet"
        return res
    if not shutil.which("nvcc"):
        res.skipped = "needs nvcc (CUDA 13) to build examples/empty_kernel.cu"
        return res
    from bench import calls
    iterations = 50 if cfg.tiny else 200 if cfg.quick else 1000
    max_copy = (1 << 20) if cfg.tiny else (16 << 20) if cfg.quick else (64 << 20)
    sizes = []
    size = 4096
    while size <= max_copy:
        sizes.append(size)
        size *= 4
    progress("nvcc builds examples/empty_kernel.cu")
    program = calls._examples_build().build(["empty_kernel"], cfg.build_dir("examples"), jobs=1)["empty_kernel"]
    from cricket.client import driver_env
    paths = {}
    if driver_env.available():
        progress("nvcc builds bench/calls_paths.cu twice (static cudart, -cudart shared)")
        paths = calls.build_paths(cfg.build_dir("bench_calls"))
    ours: dict[str, list[float]] = {}
    by_path: dict[str, dict[str, list[float]]] = {"static": {}, "shared": {}}
    null: list[float] = []
    raw: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="cricket-bench-calls-") as d:
        server, address = calls.start_server(Path(d), backend)
        try:
            for r in range(cfg.repeat):
                progress(f"cricket run -- empty_kernel, run {r + 1}/{cfg.repeat}")
                for k, v in calls.run_program(program, address, iterations, max_copy).items():
                    ours.setdefault(k, []).append(v * 1e-6)
                for name, exe in paths.items():
                    progress(f"cricket run -- calls_paths.{name}, run {r + 1}/{cfg.repeat}")
                    for k, v in calls.run_program(exe, address, iterations, max_copy).items():
                        by_path[name].setdefault(k, []).append(v * 1e-6)
                null.append(calls.null_rpc_us(address, iterations * 5) * 1e-6)
                # the reference in each round, so that a busy spell slows both alike
                progress(f"raw Unix socket, run {r + 1}/{cfg.repeat}")
                for k, v in calls.raw_socket_us(sizes, [20 if s <= 1 << 20 else 3 for s in sizes]).items():
                    raw.setdefault(k, []).append(v * 1e-6)
        finally:
            server.terminate()
            server.wait(10)
    nul = Sample.of(null, "s")
    # (what, key, goal, what the goal is on: the ratio to a NULL RPC or our figure alone)
    rows = [("cudaGetDeviceCount (answered locally)", "cudaGetDeviceCount", ("<=", 0.1), "ratio"),
            ("cudaMalloc + cudaFree", "cudaMalloc+cudaFree", "—", "ratio"),
            ("__cudaRegisterFunction (nothing sent)", "registration", ("<=", 0.1), "ratio"),
            ("empty launch + cudaDeviceSynchronize (goal 60 µs)", "launch_sync", ("<=", 60e-6), "ours"),
            ("asynchronous empty launch, issue to completion", "launch_async_total", "—", "ratio")]
    for what, key, goal, goal_on in rows:
        if key in ours:
            res.rows.append(Row(what, Sample.of(ours[key], "s"), nul, "NULL RPC", goal, goal_on=goal_on))
    if "launch_async_issue" in ours:
        res.rows.append(Row("asynchronous empty launch, issue (goal 5 µs)", Sample.of(ours["launch_async_issue"], "s"),
                            None, "", ("<=", 5e-6), goal_on="ours"))
    series = {}
    for direction, label in (("htod", "cudaMemcpy H→D"), ("dtoh", "cudaMemcpy D→H")):
        mine_all, ref_all = [], []
        for s in sizes:
            key = f"{direction}_{s}"
            if key not in ours:
                continue
            mine = Sample.of([s / t for t in ours[key]], "B/s")
            ref = Sample.of([s / t for t in raw[key]], "B/s")
            mine_all.append(mine)
            ref_all.append(ref)
            res.rows.append(Row(f"{label} {size_label(s)} (pinned)", mine, ref, "raw Unix socket", (">=", 0.8)))
        series[f"cricket run, {label}"] = mine_all
        series[f"raw Unix socket, {'send + 1-byte ack' if direction == 'htod' else 'receive'}"] = ref_all
    if all(len(v) == len(sizes) for v in series.values()):
        res.series["calls_copy"] = {"x": sizes, "series": series, "styles": {
            "cricket run, cudaMemcpy H→D": {"color": "tab:blue"},
            "raw Unix socket, send + 1-byte ack": {"color": "tab:blue", "linestyle": "--"},
            "cricket run, cudaMemcpy D→H": {"color": "tab:orange"},
            "raw Unix socket, receive": {"color": "tab:orange", "linestyle": "--"}}}
    res.notes.append(f"examples/empty_kernel.cu through `cricket run`, {iterations} iterations, copies "
                     f"4 KiB to {size_label(max_copy)} from pinned memory")
    if not paths:
        res.notes.append("the libcuda.so.1 replacement is not built (`make build`): the static-cudart "
                         "rows were not measured")
    for what, key in calls.path_rows(sizes) if paths else ():
        res.rows.append(Row(f"static cudart: {what}", Sample.of(by_path["static"][key], "s"),
                            Sample.of(by_path["shared"][key], "s"), "-cudart shared",
                            ("<=", calls.PATHS_GOAL)))
    res.notes.append("rows \"static cudart: …\": bench/calls_paths.cu built with nvcc's default flags "
                     "(static cudart → the libcuda.so.1 replacement) against the same program built with "
                     "-cudart shared (→ the libcudart shim), same server; time per call or per copy, "
                     "ratio static/shared")
    return res


BENCHES: dict[str, Callable[[Config, Progress], BenchResult]] = {
    "xdr": bench_xdr,
    "rpc": bench_rpc,
    "latency": bench_latency,
    "copy": bench_copy,
    "emu": bench_emu,
    "kernels": bench_kernels,
    "fatbin": bench_fatbin,
    "overhead": bench_overhead,
    "calls": bench_calls,
    "tls": bench_tls,
    "graphs": bench_graphs,
    "managed": bench_managed,
    "servers": bench_servers,
}


TITLES = {
    "xdr": "XDR codec", "rpc": "ONC RPC NULL calls", "latency": "Round-trip latency by payload size",
    "copy": "Copy bandwidth by size", "emu": "emu backend throughput", "fatbin": "Fatbin registration",
    "kernels": "Sessions' kernels side by side (emu)",
    "overhead": "Remoting overhead (examples/overhead)", "calls": "Client calls and copies",
    "tls": "RPC-over-TLS against plain TCP",
    "graphs": "A graph of small kernels against the kernels one by one (emu)",
    "managed": "Managed memory round trip against explicit copies (emu)",
    "servers": "A copy between devices of two servers against two single-server copies (emu)",
}


@functools.lru_cache(maxsize=1)
def cuda_unavailable_reason() -> str | None:
    """Why the cuda backend cannot run here, asked in a child process (initialising CUDA in this
    one would break the benches that fork)."""
    r = subprocess.run([sys.executable, "-c", "from cricket._gpu import gpu_unavailable_reason as r; "
                        "print(r() or '')"], capture_output=True, text=True, timeout=120)
    return r.stdout.strip() or (None if r.returncode == 0 else f"the GPU check failed: {r.stderr[-300:]}")


def run(names: list[str], cfg: Config, progress_stream=sys.stderr, backend: str = "emu") -> list[BenchResult]:
    """Run the named benches in order; a failing bench is reported as such, the rest still run."""
    results = []
    for i, name in enumerate(names, 1):
        head = f"[{i}/{len(names)}] {name}"
        started = time.perf_counter()

        def progress(msg: str, head=head, started=started) -> None:
            line = f"\r{head}: {msg} ({time.perf_counter() - started:.0f} s)"
            progress_stream.write(line[:120].ljust(120) if progress_stream.isatty() else line.lstrip("\r") + "\n")
            progress_stream.flush()
        progress("starting")
        fn = BENCHES[name]
        try:
            if name in ("copy", "overhead", "calls") and backend == "cuda" and cuda_unavailable_reason():
                result = BenchResult(name, TITLES[name],
                                     skipped=f"--backend cuda: {cuda_unavailable_reason()}")
            elif name in ("copy", "overhead", "calls"):
                result = fn(cfg, progress, backend=backend)
            else:
                result = fn(cfg, progress)
        except Exception as exc:  # noqa: BLE001 - one broken bench must not lose the others
            result = BenchResult(name, TITLES[name], error=f"{type(exc).__name__}: {exc}")
            result.notes.append("```\n" + traceback.format_exc()[-1500:] + "```")
        if not result.skipped:
            from bench.breakdown import notes_for
            result.notes += notes_for(name)
        result.seconds = time.perf_counter() - started
        progress("skipped: " + result.skipped if result.skipped else
                 "failed" if result.error else f"done in {result.seconds:.1f} s")
        if progress_stream.isatty():
            progress_stream.write("\n")
        results.append(result)
    return results


def dump_json(results: list[BenchResult], path: Path) -> None:
    """The raw runs behind every figure, for whoever wants to plot them differently."""
    def row(r: Row) -> dict:
        return {"what": r.what, "ours": list(r.ours.values) if r.ours else None,
                "unit": r.ours.unit if r.ours else None,
                "reference": list(r.reference.values) if r.reference else None,
                "reference_label": r.reference_label, "ratio": r.ratio, "goal": r.goal_text()}
    path.write_text(json.dumps([{"name": b.name, "title": b.title, "skipped": b.skipped, "error": b.error,
                                 "seconds": b.seconds, "rows": [row(r) for r in b.rows], "notes": b.notes}
                                for b in results], indent=1))


__all__ = ["BENCHES", "run", "dump_json", "gpu_name"]
