"""The cricket remoting protocol: the module our ``rpcgen`` generates from ``cricket.x``.

The build generates ``cricket/protocol/cricket.py`` (and its Cython codec); in a source checkout
where the build has not run yet, the module is generated here on first import.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import logging
from pathlib import Path
from types import ModuleType

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cricket.x"
GENERATED = HERE / "cricket.py"


def _generate() -> None:
    """Run our rpcgen on cricket.x into this folder (source checkouts before a build)."""
    from rpcgen.cli import main as rpcgen_main
    log.info("generating %s from %s", GENERATED.name, SOURCE)
    with contextlib.redirect_stdout(io.StringIO()):
        rc = rpcgen_main([str(SOURCE), "-o", str(HERE), "--cython"])
    if rc:
        raise ImportError(f"rpcgen failed on {SOURCE} (exit status {rc})")
    GENERATED.touch()   # rpcgen leaves an unchanged file alone; it is up to date with cricket.x now


def _check_compiled_codec() -> None:
    """A compiled codec older than the Cython source generated from cricket.x would encode an
    old protocol: refuse it with a clear message."""
    pyx = HERE / "_cricket_xdr.pyx"
    if not pyx.exists():
        return
    for codec in HERE.glob("_cricket_xdr.*.so"):
        if codec.stat().st_mtime < pyx.stat().st_mtime:
            raise ImportError(f"{codec.name} was built from an older cricket.x; rebuild it with "
                              f"`make build` (or pip install again)")


def _load() -> ModuleType:
    stale = not GENERATED.exists() or GENERATED.stat().st_mtime < SOURCE.stat().st_mtime
    if stale:
        try:
            _generate()
            importlib.invalidate_caches()
        except (ImportError, OSError) as exc:
            if not GENERATED.exists():
                raise ImportError(f"the protocol module is not built and could not be generated "
                                  f"({exc}); run `make build`") from exc
            log.warning("cricket.x is newer than its generated module, which could not be "
                        "regenerated (%s); using the old one", exc)
    _check_compiled_codec()
    return importlib.import_module(f"{__name__}.cricket")


gen = _load()


Skeleton = gen.CRICKET_V1_Server
"""Server skeleton base class of CRICKET_PROG version CRICKET_V1."""
SyncClient = gen.CRICKET_V1_Client
"""Blocking client stub: construct with a :class:`cricket.rpc.Client`."""
AsyncClient = gen.CRICKET_V1_AsyncClient
"""asyncio client stub: construct with a :class:`cricket.rpc.AsyncClient`."""

PROGRAM = Skeleton.PROGRAM
VERSION = Skeleton.VERSION
MAX_INLINE = gen.CRICKET_MAX_INLINE
NEED_IMAGE = gen.CRICKET_NEED_IMAGE
PROCEDURES = {proc.name: number for number, proc in Skeleton.procedures.items()}
"""Procedure numbers by name (``"CR_LAUNCH_ASYNC"`` -> its number), for calls built by hand."""
