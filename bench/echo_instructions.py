"""User-space instructions per ECHO / NULL call, each end counted alone by callgrind.

    python bench/echo_instructions.py [--root TREE] [--end client|server|both] [--size 4]

The count of one process is the difference between a run of many calls and a run of few,
divided by the difference in calls, so start-up and imports cancel out. The client end: our
blocking client (``bench.echo.echo_py.echo`` of TREE) against our server, 3,000 minus 500 calls.
The server end: our server (``bench.echo.echo_py:EchoServer`` of TREE) driven by the libtirpc C
client of ``bench/latency.py``, 6,000 minus 1,000 calls; NULL through a plain socket. The C pair is
counted the same way for reference. Used for docs/rpc-echo-codec.md; needs valgrind.
"""
from __future__ import annotations

import argparse
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench import latency, rpc as rpcbench  # noqa: E402

PROG, VERS = 536871425, 1

CLIENT_LOOP = """
import sys
from cricket.rpc import Client
from bench.echo import echo_py
host, port, size, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
payload = bytes(max(size, 0))
with Client((host, port)) as rpc:
    rpc.set_polling(0)
    stub = getattr(echo_py, "echo_stub", None)
    call = stub(rpc).ECHO if stub else (lambda p: echo_py.echo(rpc, p))
    for _ in range(n):
        if size < 0:
            rpc.call({prog}, {vers}, 0)
        else:
            call(payload)
""".format(prog=PROG, vers=VERS)


def _total(out_file: Path) -> int:
    text = out_file.read_text(errors="replace")
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    if m is None:
        raise RuntimeError(f"no total in {out_file}")
    return int(m.group(1))


def _valgrind(out: Path) -> list[str]:
    return ["valgrind", "--tool=callgrind", "-q", f"--callgrind-out-file={out}"]


def _env(root: Path) -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))


def null_calls(address, n: int) -> None:
    """``n`` AUTH_NONE NULL calls, one at a time, from a plain socket."""
    with socket.create_connection(address) as s:
        for xid in range(1, n + 1):
            s.sendall(struct.pack(">IIIIIIIIIII", 0x80000028, xid, 0, 2, PROG, VERS, 0, 0, 0, 0, 0))
            got = b""
            while len(got) < 28:
                got += s.recv(64)


def count_client(root: Path, address, size: int, few=500, many=3000) -> float:
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (few, many):
            out = Path(tmp) / f"cg.{n}"
            subprocess.run(_valgrind(out) + [sys.executable, "-c", CLIENT_LOOP, address[0],
                                             str(address[1]), str(size), str(n)],
                           check=True, env=_env(root), cwd=root)
            totals.append(_total(out))
    return (totals[1] - totals[0]) / (many - few)


def count_server(cmd: list[str], env, drive, few=1000, many=6000) -> float:
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (few, many):
            out = Path(tmp) / f"cg.{n}"
            proc = rpcbench.Proc(_valgrind(out) + cmd, env)
            try:
                drive(proc.address, n)
            finally:
                proc.p.send_signal(2)      # a clean exit writes the profile
                proc.p.wait(120)
            totals.append(_total(out))
    return (totals[1] - totals[0]) / (many - few)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE, help="the tree whose client and server run")
    ap.add_argument("--end", choices=("client", "server", "both"), default="both")
    ap.add_argument("--size", type=int, default=4, help="ECHO payload bytes")
    ap.add_argument("--c", action="store_true", help="also count the libtirpc C client and server")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    py = [sys.executable, "-m", "cricket.rpc", "serve", "--listen", "127.0.0.1:0",
          "bench.echo.echo_py:EchoServer"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="cricket-echo-count-") as tmp:
        c = latency.build_c(Path(tmp))

        def c_echo(address, n):
            subprocess.run([c["client"], address[0], str(address[1]), str(args.size), str(n)],
                           check=True, capture_output=True)

        if args.end in ("client", "both"):
            srv = rpcbench.Proc(py, _env(root))
            try:
                rows.append(("client", "NULL", count_client(root, srv.address, -1)))
                rows.append(("client", f"ECHO {args.size} B", count_client(root, srv.address, args.size)))
            finally:
                srv.stop()
        if args.end in ("server", "both"):
            rows.append(("server", "NULL", count_server(py, _env(root), null_calls)))
            rows.append(("server", f"ECHO {args.size} B", count_server(py, _env(root), c_echo)))
            if args.c:
                rows.append(("C server", f"ECHO {args.size} B", count_server([c["server"], "0"], None, c_echo)))
    print(f"| end | call | instructions per call ({root}) |\n| --- | --- | --- |")
    for end, call, v in rows:
        print(f"| {end} | {call} | {v:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
