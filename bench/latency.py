"""Round-trip latency by payload size: our client and server against the libtirpc C pair.

    python bench/latency.py [--quick]

ECHO of ``echo/echo.x`` sends a payload and gets it back, 4 B to 16 MiB. The C pair is built here
by the system rpcgen and gcc; ours is cricket.rpc's blocking client and its uvloop server, with the
stub and skeleton our rpcgen generates from the same .x (``echo/echo_py.py``). As in
bench/rpc.py, each server and its timed client share one CPU. Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import rpc as rpcbench  # noqa: E402
from bench.config import Config, from_env  # noqa: E402
from bench.report import BenchResult, Row  # noqa: E402
from bench.stats import Sample, size_label  # noqa: E402

ECHO_DIR = Path(__file__).resolve().parent / "echo"


def build_c(workdir: Path) -> dict[str, str]:
    """rpcgen the .x, compile the C server and the timing client against libtirpc."""
    for name in ("echo.x", "echo_server.c", "echo_client.c"):
        shutil.copy(ECHO_DIR / name, workdir / name)
    for name in ("loopback_svc.c", "loopback_svc.h"):
        shutil.copy(rpcbench.INTEROP / name, workdir / name)
    return rpcbench.build_rpcgen_programs(workdir, "echo.x", {
        "server": ("echo_svc.c", "echo_xdr.c", "echo_server.c", "loopback_svc.c"),
        "client": ("echo_client.c", "echo_xdr.c")}, newstyle=False)


def py_server() -> rpcbench.Proc:
    from bench.echo.echo_py import build_dir, generated
    generated()     # built here once, so that the server finds it
    env = dict(os.environ, CRICKET_BENCH_ECHO_DIR=str(build_dir()),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return rpcbench.Proc([sys.executable, "-m", "cricket.rpc", "serve", "--listen", "127.0.0.1:0",
                          "--max-record", str(64 << 20), "bench.echo.echo_py:EchoServer"], env)


def c_round_trip(client: str, address, size: int, calls: int) -> float:
    out = subprocess.run([client, address[0], str(address[1]), str(size), str(calls)], check=True,
                         capture_output=True, text=True,
                         preexec_fn=lambda: rpcbench._pin(rpcbench.CLIENT_CPU)).stdout.split()
    return float(out[1]) / int(out[0])


def py_round_trip(rpc, size: int, calls: int) -> float:
    from bench.echo.echo_py import echo_stub
    call = echo_stub(rpc).ECHO
    payload = bytes(size)
    for _ in range(3):
        if len(call(payload)) != size:
            raise RuntimeError(f"ECHO returned the wrong size at {size} bytes")
    t0 = time.perf_counter()
    for _ in range(calls):
        call(payload)
    return (time.perf_counter() - t0) / calls


def measure(cfg: Config, progress=lambda msg: None) -> BenchResult:
    from cricket.rpc import Client
    result = BenchResult("latency", "Round-trip latency by payload size (ECHO, TCP loopback)")
    sizes = cfg.payload_sizes
    ours: dict[int, list[float]] = {s: [] for s in sizes}
    ref: dict[int, list[float]] = {s: [] for s in sizes}
    with tempfile.TemporaryDirectory(prefix="cricket-bench-echo-") as tmp:
        c = build_c(Path(tmp))
        csrv, psrv = rpcbench.Proc([c["server"], "0"]), py_server()
        everywhere = os.sched_getaffinity(0) if rpcbench.CPUS else None
        rpcbench._pin(rpcbench.CLIENT_CPU)
        try:
            with Client(psrv.address, max_record_size=64 << 20) as rpc:
                rpc.set_polling(0)      # blocking in the read, as libtirpc's client does
                for r in range(cfg.repeat):
                    for s in sizes:
                        progress(f"run {r + 1}/{cfg.repeat}, {size_label(s)}")
                        n = cfg.calls_for(s)
                        ref[s].append(c_round_trip(c["client"], csrv.address, s, n))
                        ours[s].append(py_round_trip(rpc, s, n))
        finally:
            rpcbench._pin(everywhere)
            csrv.stop()
            psrv.stop()
    for s in sizes:
        goal: tuple[str, float] | str = ("<=", 1.25) if s <= 4096 else ("<=", 1.5)
        result.rows.append(Row(f"ECHO {size_label(s)}", Sample.of(ours[s], "s"), Sample.of(ref[s], "s"),
                               "C ↔ C", goal))
    result.series["latency"] = {
        "x": sizes,
        "series": {"cricket.rpc (Python client, uvloop server)": [Sample.of(ours[s], "s") for s in sizes],
                   "libtirpc C client ↔ C server": [Sample.of(ref[s], "s") for s in sizes]},
        "styles": {"libtirpc C client ↔ C server": {"linestyle": "--"}},
    }
    big = sizes[-1]
    for label, data in (("ours", ours), ("C pair", ref)):
        med = Sample.of(data[big], "s").median
        result.notes.append(f"{label}: {size_label(big)} each way in {med * 1e3:.1f} ms = "
                            f"{2 * big / med / 1e9:.2f} GB/s moved")
    pinned = f"CPU {rpcbench.CPUS[-1]}" if rpcbench.CPUS else "no pinning"
    result.notes.append(f"servers and timed clients share one CPU ({pinned}), for both stacks alike; "
                        "goal ≤ 1.25× up to 4 KiB, ≤ 1.5× above")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and runs")
    args = ap.parse_args(argv)
    res = measure(from_env(args.quick), lambda m: print(m, file=sys.stderr))
    print(res.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
