"""Asynchronous copies deliver their bytes in stream order: random sequences of kernels, copies
(pinned and pageable, both directions) and synchronisations on 1-8 streams, every byte of every
host buffer checked after every synchronisation (``programs/async_copy_stress.cu``), through
``cricket run`` on a real emu server, with the libcudart shim (``-cudart shared``) and with NVIDIA's
static cudart on the libcuda.so.1 replacement, across shared-memory region sizes (whose slot counts
decide whether a deferred copy fits the region) and with the socket path alone."""
from __future__ import annotations

import os

import pytest

from client_runtime_support import build_program, cricket_run

pytestmark = pytest.mark.nvcc

MAX_BYTES = 16 << 20          # reaches past the 4 MiB slots, so deferred copies hold several


@pytest.fixture(scope="module")
def stress_shared(tmp_path_factory, shim):
    return build_program(tmp_path_factory, "async_copy_stress")


@pytest.fixture(scope="module")
def stress_static(tmp_path_factory):
    from cricket.client import driver_env
    if not driver_env.available():
        pytest.skip(f"the libcuda.so.1 replacement is not built in {driver_env.DRIVER_DIR}; run make build")
    return build_program(tmp_path_factory, "async_copy_stress", "-cudart", "static")


def _run(exe, server, seed: int, steps: int, streams: int, shm: str) -> None:
    env = {"CRICKET_SHM": "0"} if shm == "off" else {"CRICKET_SHM_SIZE": shm}
    res = cricket_run([str(exe), str(seed), str(steps), str(streams), str(MAX_BYTES)],
                      server=server.address, env=env, timeout=300)
    assert res.returncode == 0 and "PASS" in res.stdout, (
        f"seed {seed}, {streams} stream(s), shared memory {shm}:\n{res.stdout}{res.stderr[-3000:]}")


# The region sizes of the report: 8M (two slots: every deferred copy completes at once), 32M (the
# default, seven slots), 64M, and no shared memory (socket and direct receives).
@pytest.mark.parametrize("shm", ["8M", "32M", "64M", "off"])
@pytest.mark.parametrize("seed,streams", [(1, 1), (2, 4), (3, 8)])
def test_async_copies_keep_stream_order_through_the_shim(stress_shared, server, shm, seed, streams):
    _run(stress_shared, server, seed, 40, streams, shm)


@pytest.mark.parametrize("shm", ["32M", "off"])
@pytest.mark.parametrize("seed,streams", [(4, 1), (5, 6)])
def test_async_copies_keep_stream_order_with_static_cudart(stress_static, server, shm, seed, streams):
    _run(stress_static, server, seed, 40, streams, shm)


# Longer sequences; CRICKET_STRESS_SEEDS=N runs N seeds per size (default 2) for a longer soak.
@pytest.mark.slow
@pytest.mark.parametrize("shm", ["8M", "256M", "off"])
@pytest.mark.parametrize("seed", range(10, 10 + int(os.environ.get("CRICKET_STRESS_SEEDS", "2"))))
def test_async_copies_keep_stream_order_long_runs(stress_shared, stress_static, server, shm, seed):
    for exe in (stress_shared, stress_static):
        _run(exe, server, seed, 150, 1 + seed % 8, shm)
