"""Copy bandwidth by size through cricket (Python client API → server) against a raw TCP socket.

    python bench/copies.py [--quick] [--backend emu|cuda]

Host-to-device copies (``memcpy_htod``, synchronous) and device-to-host copies (``memcpy_dtoh``)
against a cricket server on TCP loopback, next to the same bytes sent or received over one plain
TCP connection to a peer process, which is the ceiling for any copy over the socket. Prints a
Markdown table.
"""
from __future__ import annotations

import argparse
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


def _rate(fn, size: int, calls: int) -> float:
    fn()                                            # warm up (first touch of the buffers)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return size * calls / (time.perf_counter() - t0)


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
    runs = {k: {s: [] for s in sizes} for k in ("htod", "dtoh", "raw_up", "raw_down")}
    peer = RawSocketPeer()                          # forks: before any client thread exists
    server = CricketServer(backend)
    try:
        with connect(server.address) as gpu:
            for r in range(cfg.repeat):
                for s in sizes:
                    progress(f"run {r + 1}/{cfg.repeat}, {size_label(s)}")
                    n = cfg.calls_for(s, most=50 if cfg.tiny else 200)
                    data = memoryview(bytes(s))
                    into = memoryview(bytearray(s))
                    buf = gpu.alloc(s)
                    try:
                        runs["htod"][s].append(_rate(lambda: gpu.memcpy_htod(buf, data), s, n))
                        runs["dtoh"][s].append(_rate(lambda: gpu.memcpy_dtoh(buf, s), s, n))
                    finally:
                        buf.free()
                    runs["raw_up"][s].append(_rate(lambda: peer.upload(data), s, n))
                    runs["raw_down"][s].append(_rate(lambda: peer.download(into), s, n))
    finally:
        server.stop()
        peer.close()
    if backend == "cuda":
        progress("native CUDA copies (cuda-python)")
        native = _native_copies(sizes, cfg)
        for s in sizes:
            for d, label in (("htod", "host → device"), ("dtoh", "device → host")):
                result.rows.append(Row(f"{label} {size_label(s)} vs native", Sample.of(runs[d][s], "B/s"),
                                       Sample.of(native[d][s], "B/s"), "native CUDA, pageable"))
    for s in sizes:
        goal = (">=", 0.5) if s >= (1 << 20) else "—"
        result.rows.append(Row(f"host → device {size_label(s)}", Sample.of(runs["htod"][s], "B/s"),
                               Sample.of(runs["raw_up"][s], "B/s"), "raw socket", goal))
    for s in sizes:
        goal = (">=", 0.5) if s >= (1 << 20) else "—"
        result.rows.append(Row(f"device → host {size_label(s)}", Sample.of(runs["dtoh"][s], "B/s"),
                               Sample.of(runs["raw_down"][s], "B/s"), "raw socket", goal))
    result.series["copy"] = {
        "x": sizes,
        "series": {
            "cricket host → device": [Sample.of(runs["htod"][s], "B/s") for s in sizes],
            "cricket device → host": [Sample.of(runs["dtoh"][s], "B/s") for s in sizes],
            "raw socket, send + 1-byte ack": [Sample.of(runs["raw_up"][s], "B/s") for s in sizes],
            "raw socket, receive": [Sample.of(runs["raw_down"][s], "B/s") for s in sizes],
        },
        "styles": {   # each direction in one colour: cricket solid, its raw-socket ceiling dashed
            "cricket host → device": {"color": "tab:blue"},
            "raw socket, send + 1-byte ack": {"color": "tab:blue", "linestyle": "--"},
            "cricket device → host": {"color": "tab:orange"},
            "raw socket, receive": {"color": "tab:orange", "linestyle": "--"},
        },
    }
    if backend == "cuda":
        result.series["copy"]["series"]["native CUDA host → device"] = [
            Sample.of(native["htod"][s], "B/s") for s in sizes]
        result.series["copy"]["series"]["native CUDA device → host"] = [
            Sample.of(native["dtoh"][s], "B/s") for s in sizes]
        result.series["copy"]["styles"]["native CUDA host → device"] = {"color": "tab:blue", "linestyle": ":"}
        result.series["copy"]["styles"]["native CUDA device → host"] = {"color": "tab:orange", "linestyle": ":"}
    result.notes.append("each cricket copy is synchronous (one call per 4 MiB chunk, device → host "
                        "chunks pipelined); the raw socket moves the same bytes over one TCP "
                        "connection to a peer process; goal ≥ 0.5× of the socket from 1 MiB up")
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
