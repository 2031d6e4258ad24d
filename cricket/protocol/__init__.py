"""The cricket remoting protocol: the module our ``rpcgen`` generates from ``cricket.x``.

rpcgen runs at build time only (``setup.py``: ``build_ext`` and ``build_py``, so a wheel
carries ``cricket.py`` and its compiled codec ``_cricket_xdr``). Nothing is generated or
compiled at import:

- in an installed package the generated module is imported as it is; file times are not
  compared (see ``cricket._checkout``);
- in a source checkout a generated module that is missing or older than ``cricket.x``, or a
  compiled codec older than the Cython source generated beside it, is an ``ImportError`` of one
  line that says to run ``make build`` (``setup.py`` brings an unchanged ``cricket.py`` up to
  the time of ``cricket.x``, so a touched ``.x`` needs one build, not an edit).
"""
from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from cricket._checkout import in_source_checkout

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cricket.x"
GENERATED = HERE / "cricket.py"
CODEC_SOURCE = HERE / "_cricket_xdr.pyx"


def stale_build(directory: Path = HERE) -> str | None:
    """Why the generated modules in ``directory`` (a source checkout's) do not match its
    ``cricket.x``, or None when they do."""
    source, generated, pyx = directory / SOURCE.name, directory / GENERATED.name, directory / CODEC_SOURCE.name
    if not generated.exists():
        return f"{generated} is not generated yet"
    if generated.stat().st_mtime < source.stat().st_mtime:
        return f"{generated.name} is older than {source}"
    if pyx.exists():
        for codec in directory.glob(f"{pyx.stem}.*.so"):
            if codec.stat().st_mtime < pyx.stat().st_mtime:
                return f"{codec.name} was built from an older {source.name}"
    return None


def _load() -> ModuleType:
    if in_source_checkout(str(HERE)):
        why = stale_build()
        if why:
            raise ImportError(f"cricket protocol: {why}; run `make build` in the checkout")
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
