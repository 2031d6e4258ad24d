"""A copy between devices of two servers against two single-server copies of the same bytes.

    python -m bench.multiserver [--quick]

``bench/multiserver_copy.cu`` (nvcc -cudart shared) runs through ``cricket run``: ``cudaMemcpyPeer``
of N MiB from device 0 to device 1 against the same bytes moved by hand, ``cudaMemcpy`` device 0 →
host, then host → device 1. On two emu servers (``--server a,b``, one device each) the peer copy
goes through the client as the hand-made one does (docs/multiserver-copies.md says why it does
not go server to server); on one server with two devices it stays inside the server, which shows
what a copy that does not cross the client saves. Both in each run, interleaved; copies stay on
the socket (``CRICKET_SHM=0``), as between hosts.
"""
from __future__ import annotations

import importlib.util
import shutil

from . import cuda_program
from .config import MIB, Config
from .report import BenchResult, Row
from .servers import CricketServer
from .stats import Sample, fmt

ARENA = "memory=256M"
# Copies on the socket, as between hosts: the servers here share the client's host, where copies
# would otherwise take shared memory (cricket.client.shm).
SOCKET_ONLY = {"CRICKET_SHM": "0"}


def multi_server_client_missing() -> str | None:
    """Why ``cricket run --server a,b`` cannot run here, or None."""
    if importlib.util.find_spec("cricket.client.servers") is None:
        return "the multi-server client (cricket.client.servers, branch multi) is not in this build"
    return None


def one_crossing(runs: list[dict[str, float]], mib: int) -> str:
    """What a copy that crosses one socket instead of two would reach (server to server, or a
    client that overlaps the halves of its chunks): the slower half alone, against both halves."""
    def median(key: str) -> float:
        values = sorted(r[key] for r in runs)
        return values[len(values) // 2]
    def rate(us: float) -> str:
        return fmt(Sample.of([mib * MIB / (us * 1e-6)], "B/s"))
    dtoh, htod, staged = median(f"dtoh_{mib}"), median(f"htod_{mib}"), median(f"staged_{mib}")
    return (f"{mib} MiB D→H alone {rate(dtoh)}, H→D alone {rate(htod)}, both in turn {rate(staged)}: one "
            f"crossing would reach about {rate(max(dtoh, htod))} ({staged / max(dtoh, htod):.2g}× the staged "
            "copy; docs/multiserver-copies.md)")


def _rows(res: BenchResult, runs: list[dict[str, float]], sizes: list[int], what: str, reference: str,
          goal) -> None:
    for mib in sizes:
        moved = mib * MIB
        res.rows.append(Row(f"cudaMemcpyPeer {mib} MiB, {what}",
                            Sample.of([moved / (r[f"peer_{mib}"] * 1e-6) for r in runs], "B/s"),
                            Sample.of([moved / (r[f"staged_{mib}"] * 1e-6) for r in runs], "B/s"),
                            reference, goal))


def measure(cfg: Config, progress) -> BenchResult:
    sizes = [1] if cfg.tiny else [1, 16]
    res = BenchResult("servers", "emu: a copy between devices of two servers against two single-server copies")
    if not shutil.which("nvcc"):
        res.skipped = "needs nvcc (CUDA 13) to build bench/multiserver_copy.cu"
        return res
    missing = multi_server_client_missing()
    progress("nvcc builds bench/multiserver_copy.cu")
    exe = cuda_program.program("multiserver_copy", cfg.build_dir("bench_servers"))
    started: list[CricketServer] = []
    one_server: list[dict[str, float]] = []
    two_servers: list[dict[str, float]] = []
    try:
        started.append(CricketServer(f"emu=devices=2,{ARENA}"))
        if missing is None:
            started += [CricketServer(f"emu={ARENA}"), CricketServer(f"emu={ARENA}")]
        args = [str(mib) for mib in sizes]
        for r in range(cfg.repeat):
            if missing is None:
                progress(f"two servers, run {r + 1}/{cfg.repeat}")
                pair = ",".join(s.address for s in started[1:])
                two_servers.append(cuda_program.figures(exe, pair, *args, env=SOCKET_ONLY))
            progress(f"one server with two devices, run {r + 1}/{cfg.repeat}")
            one_server.append(cuda_program.figures(exe, started[0], *args, env=SOCKET_ONLY))
    finally:
        for server in started:
            server.stop()
    if missing is None:
        _rows(res, two_servers, sizes, "device of server a → device of server b (through the client)",
              "D→H from a + H→D to b", (">=", 0.9))
    else:
        res.notes.append(f"two servers: not measured: {missing}")
    _rows(res, one_server, sizes, "two devices of one server (the copy stays in the server)",
          "D→H + H→D through the client", "—")
    for label, runs in (("two servers", two_servers), ("one server", one_server)):
        if runs:
            res.notes.append(f"{label}, on paper: {one_crossing(runs, sizes[-1])}")
    res.notes.append("bandwidth of the bytes moved once (each figure the median of the program's trials, each "
                     "copy timed until device 1 holds it); host memory pageable; TCP loopback with CRICKET_SHM=0 "
                     "(copies on the socket, as between hosts)")
    return res


if __name__ == "__main__":
    cuda_program.main(measure, __doc__)
