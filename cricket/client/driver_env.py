"""Where the libcuda.so.1 replacement lives in the package, and the environment that puts it in
front of an application (never of the server that serves it).

``make build`` (setup.py) builds ``cext/driver`` into ``cricket/_driver/``: ``libcricket-cuda.so``
and the link ``libcuda.so.1`` to it. The dynamic loader, ``dlopen("libcuda.so.1")`` of NVIDIA's
cudart and cuda.pathfinder all find the link through ``LD_LIBRARY_PATH``.
"""
from __future__ import annotations

import os
from pathlib import Path

DRIVER_DIR = Path(__file__).resolve().parents[1] / "_driver"
DRIVER_LIB = DRIVER_DIR / "libcricket-cuda.so"


def available(driver_dir: Path = DRIVER_DIR) -> bool:
    """True when the library and its ``libcuda.so.1`` link are built."""
    return (driver_dir / "libcricket-cuda.so").exists() and (driver_dir / "libcuda.so.1").exists()


def _paths(value: str | None) -> list[str]:
    return [p for p in (value or "").split(os.pathsep) if p]


def application_environment(env: dict[str, str], driver_dir: Path = DRIVER_DIR) -> dict[str, str]:
    """``env`` with the driver directory first on ``LD_LIBRARY_PATH`` (once). The caller also sets
    what the client needs (``CRICKET_SERVER``; for native programs ``CRICKET_LIBPYTHON``,
    ``CRICKET_PYTHON``, ``CRICKET_PYTHONPATH``), as it does for the libcudart shim."""
    out = dict(env)
    rest = [p for p in _paths(out.get("LD_LIBRARY_PATH")) if Path(p) != driver_dir]
    out["LD_LIBRARY_PATH"] = os.pathsep.join([str(driver_dir), *rest])
    return out


def server_environment(env: dict[str, str], driver_dir: Path = DRIVER_DIR) -> dict[str, str]:
    """``env`` without the replacement: a server that loaded it would serve itself (its ``cuda``
    backend would reach the GPU through cricket instead of NVIDIA's driver)."""
    out = dict(env)
    lib_path = [p for p in _paths(out.get("LD_LIBRARY_PATH")) if Path(p) != driver_dir]
    preload = [p for p in out.get("LD_PRELOAD", "").replace(" ", ":").split(":")
               if p and Path(p).parent != driver_dir]
    for key, value in (("LD_LIBRARY_PATH", lib_path), ("LD_PRELOAD", preload)):
        if value:
            out[key] = os.pathsep.join(value)
        else:
            out.pop(key, None)
    return out
