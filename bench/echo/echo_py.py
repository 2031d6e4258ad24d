"""Python side of ``echo.x``: the same procedures as ``echo_server.c``, on cricket.rpc, and the
client calls, through the stubs and the skeleton our rpcgen generates from ``echo.x`` (with its
compiled codec, unless ``CRICKET_PUREPYTHON=1``), as an application of cricket.rpc would have them.

The generated package is built once per content of its inputs (``echo.x``, rpcgen, the XDR buffer
library) into the checkout's ``build/`` folder (never a shared temporary folder: whatever is found
there is imported), or ``CRICKET_BENCH_ECHO_DIR``; the bench builds it before it starts the server,
so the server finds it built.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent.parent
ECHO_X = Path(__file__).resolve().parent / "echo.x"
PACKAGE = "cricket_bench_echo"


def _inputs_key(compiled: bool) -> str:
    h = hashlib.sha256(f"{sys.version}|{compiled}".encode())
    for f in [ECHO_X, *sorted((ROOT / "rpcgen").glob("*.py")), ROOT / "cext" / "xdr_buffer.pxd",
              ROOT / "cext" / "xdr_procedure.pxd"]:
        h.update(f.name.encode())
        h.update(f.read_bytes() if f.exists() else b"")
    return h.hexdigest()[:16]


def build_dir() -> Path:
    """Where the generated package lives (built by :func:`generated` when it is not there)."""
    from cricket._select import pure_python_forced
    compiled = not pure_python_forced()
    given = os.environ.get("CRICKET_BENCH_ECHO_DIR")
    if given:
        return Path(given)
    return ROOT / "build" / f"bench-echo-{_inputs_key(compiled)}"


def generated() -> ModuleType:
    """The module rpcgen generates from echo.x (``ECHO_V1_Client``, ``ECHO_V1_Server``)."""
    from cricket._select import pure_python_forced
    root = build_dir()
    if not (root / PACKAGE / "echo.py").exists():
        compiled = not pure_python_forced()
        root.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
        pkg = work / PACKAGE
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        subprocess.run([sys.executable, "-m", "rpcgen", str(ECHO_X), "-o", str(pkg)]
                       + (["--cython"] if compiled else []), check=True, capture_output=True, cwd=ROOT)
        if compiled:
            from rpcgen.build import build_codec
            build_codec(str(work), f"{PACKAGE}._echo_xdr")
        try:
            os.rename(work, root)       # whole or not at all; another process may have won
        except OSError:
            shutil.rmtree(work, ignore_errors=True)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module(f"{PACKAGE}.echo")


_gen = generated()
PROG = _gen.ECHO_V1_Client.PROGRAM
VERS = _gen.ECHO_V1_Client.VERSION


class EchoServer(_gen.ECHO_V1_Server):
    """ECHO hands the received bytes back (a view into the record from 64 KiB, no copy); SINK
    answers their length."""

    def ECHO(self, data):
        return data

    def SINK(self, data) -> int:
        return len(data)


def echo_stub(rpc):
    """The generated ECHO_V1 stub over a blocking :class:`cricket.rpc.Client`."""
    return _gen.ECHO_V1_Client(rpc)


def echo(rpc, payload):
    """One ECHO call on a blocking :class:`cricket.rpc.Client`; returns the echoed bytes."""
    return _gen.ECHO_V1_Client(rpc).ECHO(payload)
