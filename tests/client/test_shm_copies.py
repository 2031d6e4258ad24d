"""The shared-memory bulk path, as clients see it: copies of every size class through the Python API
and through the libcudart shim with shared memory on and off, the region file's lifetime, the
fallback when the server refuses or is not on this host, and a forked child's own region.

Real peers: `cricket server` processes (emu backend) on a Unix socket or TCP, and a CUDA program
built by nvcc and run through `cricket run`.
"""
from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cricket.client import shm
from cricket.client.api import connect
from cricket.client.local_server import LocalServer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHIM = ROOT / "cricket" / "_preload" / "libcricket-cudart.so"
MIB = 1 << 20
# Below the threshold, around it, one part, several parts, more than the default region.
SIZES = [1, 4095, shm.MIN_COPY - 1, shm.MIN_COPY, shm.MIN_COPY + 3, MIB + 5, 5 * MIB + 7, 40 * MIB + 9]


def _pattern(size: int, seed: int) -> bytes:
    return (bytes(range(seed % 251, 256)) + bytes(range(256)) * (size // 256 + 2))[:size]


def _region_files() -> list[str]:
    """Files named like a region in /dev/shm (cricket made them there once; it must no longer)."""
    return [n for n in os.listdir("/dev/shm") if n.startswith(shm.REGION_PREFIX)]


def _mapped_regions(pid: int) -> list[str]:
    """The cricket regions process ``pid`` has mapped (as /proc/PID/maps names them)."""
    with open(f"/proc/{pid}/maps") as f:
        return [line.split()[-2] if line.rstrip().endswith("(deleted)") else line.split()[-1]
                for line in f if shm.REGION_PREFIX in line]


@pytest.fixture(scope="module")
def emu_server():
    with LocalServer(["emu"]) as server:
        yield server


@pytest.mark.parametrize("shared", [True, False], ids=["shm", "socket"])
def test_python_api_copies_every_size_class(emu_server, monkeypatch, shared):
    monkeypatch.setenv("CRICKET_SHM", "1" if shared else "0")
    with connect(emu_server.address) as gpu:
        buf = gpu.alloc(max(SIZES) + 16)
        for i, size in enumerate(SIZES):
            data = _pattern(size, i)
            gpu.memcpy_htod(buf + 3, data)                              # synchronous
            assert gpu.memcpy_dtoh(buf + 3, size) == data, f"sync copy of {size} bytes"
            reverse = data[::-1]
            gpu.memcpy_htod(buf, bytearray(reverse), sync=False)        # asynchronous
            assert gpu.memcpy_dtoh(buf, size) == reverse, f"async copy of {size} bytes"
        if shared:
            assert isinstance(gpu._shm_region, shm.SharedRegion)
        else:
            assert gpu._shm_region is False
        buf.free()


@pytest.mark.parametrize("shared", [True, False], ids=["shm", "socket"])
def test_an_asynchronous_copys_source_may_change_once_the_call_returned(emu_server, monkeypatch, shared):
    # As CUDA stages a pageable source: the bytes sent are those at the call, on every path.
    monkeypatch.setenv("CRICKET_SHM", "1" if shared else "0")
    with connect(emu_server.address) as gpu:
        for i, size in enumerate(SIZES):
            data = bytearray(_pattern(size, i))
            buf = gpu.alloc(size)
            gpu.memcpy_htod(buf, data, sync=False)
            data[:] = bytes(size)                                      # reused at once
            gpu.synchronize()
            assert gpu.memcpy_dtoh(buf, size) == _pattern(size, i), f"async copy of {size} bytes"
            buf.free()


def _copy_blocks_async(gpu, size: int, count: int):
    """``count`` distinct blocks of ``size`` bytes copied one after the other into a new buffer
    with asynchronous copies, then synchronised: (the buffer, the blocks)."""
    blocks = [_pattern(size, i) for i in range(count)]
    buf = gpu.alloc(size * count)
    for i, block in enumerate(blocks):
        gpu.memcpy_htod(buf + size * i, block, sync=False)
    gpu.synchronize()
    return buf, blocks


def test_asynchronous_copies_go_round_the_slots_and_synchronous_ones_reuse_the_last(emu_server,
                                                                                      monkeypatch):
    # Asynchronous copies take the slot freed first (the server is most likely done with it), so a
    # run of them uses every slot instead of waiting for the server to empty the same one each time;
    # a synchronous copy takes the slot freed last.
    monkeypatch.setenv("CRICKET_SHM_SIZE", str(shm.HEADER + 4 * shm.SLOT))    # four slots
    with connect(emu_server.address) as gpu:
        buf, blocks = _copy_blocks_async(gpu, 65536, 12)
        region = gpu._shm_region
        assert len(region._needed) == 4
        assert all(region._needed), f"asynchronous copies used only some slots: {region._needed}"
        assert gpu.memcpy_dtoh(buf, 65536 * len(blocks)) == b"".join(blocks)
        last = region._free[-1]
        gpu.memcpy_htod(buf, blocks[0])
        assert region._free[-1] == last            # taken and given back at the same end
        assert gpu.memcpy_dtoh(buf, 65536) == blocks[0]


def test_asynchronous_copies_reuse_slots_only_after_the_server_took_them(emu_server, monkeypatch):
    # A region of two 4 KiB slots and many asynchronous copies: a slot written again before
    # the server read it would leave a later copy's bytes in an earlier copy's place.
    monkeypatch.setenv("CRICKET_SHM_SIZE", str(shm.HEADER + 2 * 4096))
    monkeypatch.setattr(shm, "MIN_COPY", 4096)
    with connect(emu_server.address) as gpu:
        buf, blocks = _copy_blocks_async(gpu, 4096, 64)
        assert gpu.memcpy_dtoh(buf, 4096 * len(blocks)) == b"".join(blocks)
        region = gpu._shm_region
        assert region.slot == 4096 and len(region._needed) == 2
        # each one the server took through the region (one may have gone by socket had the
        # server stalled for ASYNC_STALL on this busy machine)
        assert 0 < region.published() <= len(blocks)


def test_region_has_no_file_name_and_is_unmapped_when_the_connection_closes(emu_server):
    server_pid = emu_server.process.pid
    with connect(emu_server.address) as gpu:
        buf = gpu.to_device(bytes(MIB))
        region = gpu._shm_region
        assert isinstance(region, shm.SharedRegion)
        assert _region_files() == []                           # a memfd: no name anywhere
        assert len(_mapped_regions(server_pid)) == 1           # ... and mapped by the server
        buf.free()
    deadline = time.monotonic() + 10
    while _mapped_regions(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _mapped_regions(server_pid) == []


def test_no_region_is_left_behind_by_a_client_process_that_exits(emu_server):
    code = ("import os, sys; from cricket.client.api import connect\n"
            "g = connect(sys.argv[1]); b = g.to_device(bytes(1 << 20))\n"
            "assert g._shm_region; print(os.getpid())\n"
            "os._exit(0)\n")                                     # no close, no clean-up
    out = subprocess.run([sys.executable, "-c", code, emu_server.address], capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert _region_files() == []


def test_a_server_with_shared_memory_off_refuses_and_copies_take_the_socket(caplog):
    with LocalServer(["emu"], env={"CRICKET_SHM": "0"}) as server, connect(server.address) as gpu:
        caplog.set_level(logging.WARNING, logger="cricket.client.shm")
        data = _pattern(3 * MIB, 7)
        buf = gpu.to_device(data)
        assert gpu.memcpy_dtoh(buf, len(data)) == data
        gpu.memcpy_htod(buf, data[::-1])                          # no second attempt, no second warning
        assert gpu.memcpy_dtoh(buf, len(data)) == data[::-1]
        assert gpu._shm_region is False
        warnings = [r.getMessage() for r in caplog.records if r.name == "cricket.client.shm"]
        assert len(warnings) == 1 and "shared memory turned off (CRICKET_SHM=0)" in warnings[0]
    assert _region_files() == []


def _non_loopback_address() -> str | None:
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return None
    return next((a for a in out.split() if "." in a and not a.startswith("127.")), None)


def test_a_server_reached_over_a_non_loopback_address_is_treated_as_remote(caplog, tmp_path):
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this host has no IPv4 address besides loopback")
    with _tcp_server(tmp_path, address) as server_address:
        caplog.set_level(logging.WARNING, logger="cricket.client.shm")
        with connect(server_address) as gpu:
            data = _pattern(2 * MIB, 3)
            assert gpu.to_device(data).to_host() == data
            assert gpu._shm_region is False
        assert any("on another host" in r.getMessage() for r in caplog.records)


@contextlib.contextmanager
def _tcp_server(tmp_path: Path, host: str):
    """A `cricket server --listen HOST:0` (emu); yields its HOST:PORT."""
    ready = tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "server", "--listen", f"{host}:0", "--insecure",
                             "--backend", "emu", "--ready-file", str(ready)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield ready.read_text().strip()
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_forked_child_attaches_a_region_of_its_own(emu_server, in_forked_child):
    gpu = connect(emu_server.address)
    try:
        data = _pattern(MIB, 5)
        gpu.to_device(data)
        parent_region = gpu._shm_region
        assert isinstance(parent_region, shm.SharedRegion)

        def child_check() -> bool:                              # never the parent's region
            ok = shm.region(gpu) is None
            with connect(emu_server.address) as child:
                buf = child.to_device(data)
                ok = ok and child.memcpy_dtoh(buf, len(data)) == data
                ok = ok and isinstance(child._shm_region, shm.SharedRegion)
                return ok and child._shm_region is not parent_region

        assert in_forked_child(child_check)
        # the parent's region still works after the child came and went
        buf = gpu.to_device(data[::-1])
        assert gpu.memcpy_dtoh(buf, len(data)) == data[::-1]
    finally:
        gpu.close()


# --- through the libcudart shim -------------------------------------------------------------------

@pytest.fixture(scope="module")
def shm_program(tmp_path_factory) -> Path:
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    if not SHIM.exists():
        pytest.skip("the libcudart shim is not built (make build)")
    exe = tmp_path_factory.mktemp("shm") / "shm_copies"
    r = subprocess.run(["nvcc", "-cudart", "shared", "-o", str(exe), str(HERE / "programs" / "shm_copies.cu")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


@pytest.mark.nvcc
@pytest.mark.parametrize("env", [{}, {"CRICKET_SHM": "0"}, {"CRICKET_SHM_SIZE": "1M"}],
                         ids=["shm", "socket", "small-region"])
def test_cuda_program_copies_every_size_class_through_the_shim(emu_server, shm_program, env):
    r = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", emu_server.address, "--",
                        str(shm_program)], capture_output=True, text=True, timeout=180, cwd=ROOT,
                       env={**os.environ, "CRICKET_LOG": "info", **env})
    assert r.returncode == 0 and "PASS" in r.stdout, r.stdout + r.stderr
    attached = "shared region of" in r.stderr
    assert attached == (env.get("CRICKET_SHM") != "0"), r.stderr
    pinned_shared = "pinned host memory is mapped by the cricket server" in r.stderr
    assert pinned_shared == (env.get("CRICKET_SHM") != "0"), r.stderr
    assert "pinned host memory not shared" not in r.stderr, r.stderr


@pytest.mark.parametrize("shared", [None, False], ids=["shm", "socket"])
def test_device_to_host_copy_into_a_given_buffer(emu_server, shared):
    with connect(emu_server.address, shared_memory=shared) as gpu:
        for size in (100, 3 * MIB + 1):
            data = _pattern(size, 9)
            buf = gpu.to_device(data)
            into = bytearray(size + 8)
            assert gpu.memcpy_dtoh(buf, size, into=into) is into
            assert into[:size] == data and into[size:] == bytes(8)
            with pytest.raises(ValueError, match="writable one of at least"):
                gpu.memcpy_dtoh(buf, size, into=bytearray(size - 1))
        assert (gpu._shm_region is False) == (shared is False)


def test_a_region_sealed_too_little_is_refused_and_copies_take_the_socket(emu_server, monkeypatch, caplog):
    monkeypatch.setattr(shm, "SEALS", fcntl.F_SEAL_SHRINK)      # could still grow, and be resealed
    caplog.set_level(logging.WARNING, logger="cricket.client.shm")
    with connect(emu_server.address) as gpu:
        data = _pattern(2 * MIB, 11)
        assert gpu.to_device(data).to_host() == data
        assert gpu._shm_region is False
    warnings = [r.getMessage() for r in caplog.records if r.name == "cricket.client.shm"]
    assert len(warnings) == 1 and "F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL" in warnings[0]
