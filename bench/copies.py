"""Copy bandwidth by size through cricket (Python client API → server) against a raw TCP socket.

    python bench/copies.py [--quick] [--backend emu|cuda]

Host-to-device copies (``memcpy_htod``, synchronous) and device-to-host copies (``memcpy_dtoh``
into a buffer) against a cricket server on TCP loopback, on three copy paths: shared memory (the
default for a server on this host, ``cricket.client.shm``), pinned memory the server maps
(``Connection.alloc_host``, ``cricket.client.shm_pinned``) and the socket (``CRICKET_SHM=0``, here
``connect(shared_memory=False)``). The reference is the same bytes sent or received over one plain
TCP connection to a peer process, the ceiling for any copy over the socket. Every figure is timed
for at least a time budget per run (many calls for small sizes, at least three for large ones),
after a warm-up call, from the median time of one call, and the runs of all figures are interleaved so that a busy machine slows
them alike. Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.config import Config, from_env  # noqa: E402
from bench.report import BenchResult, Row  # noqa: E402
from bench.servers import CricketServer, RawSocketPeer  # noqa: E402
from bench.stats import Sample, size_label  # noqa: E402

MIB = 1 << 20
PATHS = (("pinned", "pinned memory the server maps"), ("shm", "shared memory"),
         ("socket", "socket, CRICKET_SHM=0"))
SHM_GOAL_SIZE = 16 * MIB    # shared-memory copies this large: ≥ 0.5× a memcpy of the same bytes


def _rate(fn, size: int, calls: int, seconds: float) -> float:
    """Bytes per second of ``fn``, from the median time of one call over at least ``calls`` calls
    and ``seconds`` seconds (a burst of load from elsewhere moves a median little), after one
    untimed call (first touch of the buffers and, for shared memory, attaching the region)."""
    fn()
    times = []
    end = time.perf_counter() + seconds
    while len(times) < calls or time.perf_counter() < end:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return size / statistics.median(times)


def _native_copies(sizes: list[int], cfg: Config) -> dict[str, dict[int, list[float]]]:
    """Every run of bench/native_cuda.py copies, in a process of its own (CUDA is not initialised
    here, so the benches that fork stay safe)."""
    import json
    import subprocess
    runs: dict[str, dict[int, list[float]]] = {"htod": {s: [] for s in sizes}, "dtoh": {s: [] for s in sizes}}
    for _ in range(cfg.repeat):
        out = subprocess.run([sys.executable, str(ROOT / "bench" / "native_cuda.py"), "copies",
                              *map(str, sizes)], check=True, capture_output=True, text=True).stdout
        for d, by_size in json.loads(out).items():
            for s, rate in by_size.items():
                runs[d][int(s)].append(rate)
    return runs


def measure(cfg: Config, progress=lambda msg: None, backend: str = "emu") -> BenchResult:
    from cricket.client.api import connect
    result = BenchResult("copy", f"Copy bandwidth by size (cricket over TCP loopback, {backend} backend)")
    sizes = cfg.copy_sizes
    seconds = 0.02 if cfg.tiny else 0.1 if cfg.quick else 0.25
    keys = [f"{d}_{p}" for d in ("htod", "dtoh") for p, _ in PATHS] + ["raw_up", "raw_down", "memcpy"]
    runs = {k: {s: [] for s in sizes} for k in keys}
    pinned_mapped = False
    peer = RawSocketPeer()                          # forks: before any client thread exists
    server = CricketServer(backend)
    try:
        with connect(server.address) as shm_conn, connect(server.address, shared_memory=False) as sock_conn:
            conns = {"pinned": shm_conn, "shm": shm_conn, "socket": sock_conn}
            for r in range(cfg.repeat):
                for s in sizes:
                    progress(f"run {r + 1}/{cfg.repeat}, {size_label(s)}")
                    n = cfg.calls_for(s, most=50 if cfg.tiny else 200)
                    data = memoryview(bytearray(b"\1" * s))
                    into = memoryview(bytearray(s))
                    for path, gpu in conns.items():
                        buf = gpu.alloc(s)
                        # pinned: the same bytes in pinned memory (cudaMallocHost's), copied from
                        # and into it; the others from and into ordinary (pageable) memory
                        host = gpu.alloc_host(s) if path == "pinned" else None
                        src, dst = (host, host) if host is not None else (data, into)
                        if host is not None:
                            host.view[:] = data
                            pinned_mapped = host.address is not None
                        try:
                            runs[f"htod_{path}"][s].append(_rate(lambda: gpu.memcpy_htod(buf, src), s, n, seconds))
                            runs[f"dtoh_{path}"][s].append(
                                _rate(lambda: gpu.memcpy_dtoh(buf, s, into=dst), s, n, seconds))
                        finally:
                            buf.free()
                            if host is not None:
                                host.free()
                    runs["raw_up"][s].append(_rate(lambda: peer.upload(data), s, n, seconds))
                    runs["raw_down"][s].append(_rate(lambda: peer.download(into), s, n, seconds))
                    if s >= MIB:
                        runs["memcpy"][s].append(_rate(lambda: into.__setitem__(slice(None), data), s, n, seconds))
            attached = shm_conn._shm_region not in (None, False)
    finally:
        server.stop()
        peer.close()
    if backend == "cuda":
        progress("native CUDA copies (cuda-python)")
        native = _native_copies(sizes, cfg)
        for s in sizes:
            for d, label in (("htod", "host → device"), ("dtoh", "device → host")):
                result.rows.append(Row(f"{label} {size_label(s)} vs native", Sample.of(runs[f"{d}_shm"][s], "B/s"),
                                       Sample.of(native[d][s], "B/s"), "native CUDA, pageable"))
    for d, label, raw in (("htod", "host → device", "raw_up"), ("dtoh", "device → host", "raw_down")):
        for s in sizes:
            goal = (">=", 0.8) if s >= MIB else "—"
            for path, what in PATHS:
                result.rows.append(Row(f"{label} {size_label(s)}, {what}", Sample.of(runs[f"{d}_{path}"][s], "B/s"),
                                       Sample.of(runs[raw][s], "B/s"), "raw socket", goal))
    for d, label in (("htod", "host → device"), ("dtoh", "device → host")):
        for s in sizes:
            if s >= MIB:
                for path, what in (("pinned", "pinned memory the server maps"), ("shm", "shared memory")):
                    result.rows.append(Row(f"{label} {size_label(s)}, {what} vs memcpy",
                                           Sample.of(runs[f"{d}_{path}"][s], "B/s"),
                                           Sample.of(runs["memcpy"][s], "B/s"), "memcpy in this process",
                                           (">=", 0.5) if s >= SHM_GOAL_SIZE else "—"))
    series = {}
    styles = {}
    for d, label, raw, raw_label, colour in (
            ("htod", "host → device", "raw_up", "raw socket, send + 1-byte ack", "tab:blue"),
            ("dtoh", "device → host", "raw_down", "raw socket, receive", "tab:orange")):
        for path, what in PATHS:
            name = f"cricket {label}, {what}"
            series[name] = [Sample.of(runs[f"{d}_{path}"][s], "B/s") for s in sizes]
            styles[name] = {"color": colour, "linestyle": {"pinned": ":", "shm": "-"}.get(path, "-.")}
        series[raw_label] = [Sample.of(runs[raw][s], "B/s") for s in sizes]
        styles[raw_label] = {"color": colour, "linestyle": "--"}
    result.series["copy"] = {"x": sizes, "series": series, "styles": styles}
    if backend == "cuda":
        result.series["copy"]["series"]["native CUDA host → device"] = [
            Sample.of(native["htod"][s], "B/s") for s in sizes]
        result.series["copy"]["series"]["native CUDA device → host"] = [
            Sample.of(native["dtoh"][s], "B/s") for s in sizes]
        result.series["copy"]["styles"]["native CUDA host → device"] = {"color": "tab:blue", "linestyle": ":"}
        result.series["copy"]["styles"]["native CUDA device → host"] = {"color": "tab:orange", "linestyle": ":"}
    result.notes.append("each cricket copy is synchronous; shared memory: parts of the copy through a "
                        "region both processes map (cricket.client.shm), pipelined; socket: 2 MiB "
                        "chunks, pipelined; the raw socket moves the same bytes over one TCP "
                        f"connection to a peer process; each figure ≥ {seconds * 1e3:.0f} ms per run; "
                        "goal ≥ 0.8× of the socket from 1 MiB up; \"vs memcpy\": one copy of the same "
                        "bytes between two buffers of this process (memoryview slice assignment), "
                        "interleaved with the others")
    result.notes.append("pinned memory the server maps (Connection.alloc_host, as cudaMallocHost gives "
                        "with a server on this host, cricket.client.shm_pinned): the server copies between "
                        "its mapping and device memory and the client copies nothing, one memcpy in all. "
                        "Shared memory from ordinary (pageable) memory is two memcpys, application buffer "
                        "→ slot in the client and slot → device memory in the server; pipelined they "
                        "overlap on two free cores, but with one core busy elsewhere they run one after "
                        "the other, so that path stays under 0.5× a memcpy by construction (see "
                        "docs/copies.md for the measurements)")
    if not attached:
        result.notes.append("the shared region was NOT attached (see the log): the shared-memory rows "
                            "measured the socket")
    if not pinned_mapped:
        result.notes.append("pinned memory was NOT mapped by the server (see the log): its rows measured "
                            "the other paths")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and runs")
    ap.add_argument("--backend", default="emu", help="server backend (emu, or cuda on a GPU host)")
    args = ap.parse_args(argv)
    res = measure(from_env(args.quick), lambda m: print(m, file=sys.stderr), args.backend)
    print(res.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
