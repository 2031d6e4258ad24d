"""The cricket remoting protocol: the module our ``rpcgen`` generates from ``cricket.x``.

The build generates ``cricket/protocol/cricket.py`` (and its Cython codec); in a source checkout
where the build has not run yet, the module is generated here on first import.
"""
from __future__ import annotations

import importlib
import logging
from pathlib import Path
from types import ModuleType

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cricket.x"
GENERATED = HERE / "cricket.py"


def _generate() -> None:
    """Run our rpcgen on cricket.x into this folder (source checkouts before a build)."""
    from rpcgen.__main__ import main as rpcgen_main
    log.info("generating %s from %s", GENERATED.name, SOURCE)
    rc = rpcgen_main([str(SOURCE), "-o", str(HERE)])
    if rc:
        raise ImportError(f"rpcgen failed on {SOURCE} (exit status {rc})")


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
    return importlib.import_module(f"{__name__}.cricket")


gen = _load()


def _find_class(predicate) -> type:
    for value in vars(gen).values():
        if isinstance(value, type) and value.__module__ == gen.__name__ and predicate(value):
            return value
    raise ImportError(f"{gen.__name__} lacks an expected class; regenerate it with `make build`")


def _is_skeleton(cls: type) -> bool:
    return isinstance(getattr(cls, "procedures", None), dict) and hasattr(cls, "PROGRAM")


def _is_async(cls: type) -> bool:
    import inspect
    return inspect.iscoroutinefunction(getattr(cls, "CR_HELLO", None))


Skeleton = _find_class(_is_skeleton)
"""Server skeleton base class of CRICKET_PROG version 1."""
SyncClient = _find_class(lambda c: hasattr(c, "CR_HELLO") and not _is_skeleton(c) and not _is_async(c))
"""Blocking client stub: construct with a :class:`cricket.rpc.Client`."""
AsyncClient = _find_class(lambda c: hasattr(c, "CR_HELLO") and not _is_skeleton(c) and _is_async(c))
"""asyncio client stub: construct with a :class:`cricket.rpc.AsyncClient`."""

PROGRAM = gen.CRICKET_PROG
VERSION = gen.CRICKET_V1
MAX_INLINE = gen.CRICKET_MAX_INLINE
NEED_IMAGE = gen.CRICKET_NEED_IMAGE
