"""Shared fixtures: real tools (nvcc, gcc, the system rpcgen) found once, skipped with a reason when absent."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Test files are imported with --import-mode=importlib (pyproject.toml): each under a name of its
# own, so files in different folders may share a name, and sys.path is left alone. The helper
# modules beside the tests (client_runtime_support.py, rpc_calc.py, plugin_backend.py, ...) are
# imported by their plain names, so every test folder that holds one is put on sys.path here.
for _folder in sorted(p for p in Path(__file__).parent.iterdir() if p.is_dir()):
    if any(not f.name.startswith(("test_", "conftest")) for f in _folder.glob("*.py")) \
            and str(_folder) not in sys.path:
        sys.path.append(str(_folder))

# The client applies CUDA_VISIBLE_DEVICES to the server's devices; a CI that hides GPUs with an empty
# value would hide cricket's emu device too.
os.environ.pop("CUDA_VISIBLE_DEVICES", None)


def _has_libtirpc() -> bool:
    if not shutil.which("pkg-config"):
        return False
    return subprocess.run(["pkg-config", "--exists", "libtirpc"]).returncode == 0


HAVE_NVCC = shutil.which("nvcc") is not None
HAVE_CC = all(shutil.which(t) for t in ("gcc", "rpcgen")) and _has_libtirpc()


def pytest_collection_modifyitems(config, items):
    skip_nvcc = pytest.mark.skip(reason="nvcc (CUDA 13) not found on PATH")
    skip_cc = pytest.mark.skip(reason="gcc, the system rpcgen or libtirpc-dev (pkg-config libtirpc) missing")
    for item in items:
        if "nvcc" in item.keywords and not HAVE_NVCC:
            item.add_marker(skip_nvcc)
        if "cc" in item.keywords and not HAVE_CC:
            item.add_marker(skip_cc)
        if "gpu" in item.keywords:
            from cricket._gpu import gpu_unavailable_reason
            reason = gpu_unavailable_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
