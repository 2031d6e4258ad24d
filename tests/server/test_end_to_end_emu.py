"""End to end: the Python client API against a real `cricket server` process on the emu backend,
running kernels that nvcc compiled at test time."""
import hashlib
import os

import numpy as np
import pytest

from cricket.cudafacts import curesult
from cricket.client.api import CudaError, connect

pytestmark = pytest.mark.nvcc


@pytest.fixture
def gpu(emu_server):
    with connect(emu_server.address) as conn:
        yield conn


def test_hello_reports_the_emulated_device(gpu):
    assert gpu.backend == "emu" and gpu.emulated
    dev = gpu.devices[0]
    assert dev.total_memory > 0
    assert dev.properties["warp_size"] == 32
    assert dev.compute_capability >= (7, 0)


def test_vector_add_from_an_nvcc_fatbin(gpu, fatbins):
    n = 10_000
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    da, db, dc = gpu.to_device(a), gpu.to_device(b), gpu.alloc(a.nbytes)
    vadd = gpu.load_module(fatbins["vadd"]).get_function("vadd")
    vadd((n + 255) // 256, 256, da, db, dc, n)
    np.testing.assert_array_equal(dc.to_host(np.float32), a + b)


def test_tiled_matmul_with_shared_memory_by_its_plain_cplusplus_name(gpu, fatbins):
    n = 40
    rng = np.random.default_rng(2)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    dA, dB, dC = gpu.to_device(A), gpu.to_device(B), gpu.alloc(A.nbytes)
    matmul = gpu.load_module(fatbins["matmul"]).get_function("matmul_tiled")
    tiles = (n + 15) // 16
    matmul((tiles, tiles), (16, 16), dA, dB, dC, n)
    np.testing.assert_allclose(dC.to_host(np.float32, (n, n)), A @ B, rtol=1e-4, atol=1e-4)


def test_second_load_of_an_image_sends_only_its_hash(emu_server, fatbins):
    # A unique image for this test run, so the server cannot have seen it before.
    from cricket.fatbin import Fatbin
    ptx = Fatbin.from_bytes(fatbins["vadd"].read_bytes()).ptx_sources()[0] + f"\n// {os.urandom(8).hex()}\n"
    with connect(emu_server.address) as first, connect(emu_server.address) as second:
        m1 = first.load_module(ptx.encode())
        m2 = second.load_module(ptx.encode())
        assert m1.sent_image and not m2.sent_image
        assert second.session_stats()["calls.module_load"] == 1   # one call: the hash alone
        n = 64
        x = np.arange(n, dtype=np.float32)
        dx, dy = second.to_device(x), second.alloc(x.nbytes)
        m2.get_function("vadd")(1, 64, dx, dx, dy, n)
        np.testing.assert_array_equal(dy.to_host(np.float32), 2 * x)


def test_async_launches_then_a_synchronising_copy(gpu, fatbins):
    n = 4096
    a = np.full(n, 1.5, dtype=np.float32)
    da, dc = gpu.to_device(a), gpu.to_device(np.zeros(n, dtype=np.float32))
    vadd = gpu.load_module(fatbins["vadd"]).get_function("vadd")
    for _ in range(10):
        vadd(n // 256, 256, da, dc, dc, n)      # batched: no reply awaited
    np.testing.assert_array_equal(dc.to_host(np.float32), np.full(n, 15.0, dtype=np.float32))


def test_out_of_bounds_kernel_is_reported_at_the_next_synchronising_call(emu_server, fatbins):
    with connect(emu_server.address) as gpu:
        p = gpu.alloc(16)
        write_at = gpu.load_module(fatbins["misc"]).get_function("write_at")
        write_at(1, 1, p, 1 << 24, 7)           # asynchronous: returns at once
        with pytest.raises(CudaError) as info:
            gpu.synchronize()
        assert info.value.code == curesult.ILLEGAL_ADDRESS
        assert info.value.name == "CUDA_ERROR_ILLEGAL_ADDRESS"
    assert emu_server.alive()
    with connect(emu_server.address) as other:    # the server keeps serving
        buf = other.to_device(b"still here")
        assert buf.to_host() == b"still here"


def test_module_variable_is_read_through_get_global(gpu, fatbins):
    module = gpu.load_module(fatbins["misc"])
    counter = module.get_global("counter")
    assert counter.size == 4
    counter.copy_from_host(np.int32(5).tobytes())
    bump = module.get_function("bump")
    bump(4, 32, 2)
    assert int(counter.to_host(np.int32)[0]) == 5 + 4 * 32 * 2


def test_double_precision_scalar_and_pointer_arguments(gpu, fatbins):
    n = 1000
    x = np.linspace(0, 1, n)
    y = np.ones(n)
    dx, dy = gpu.to_device(x), gpu.to_device(y)
    gpu.load_module(fatbins["misc"]).get_function("daxpy")((n + 127) // 128, 128, n, 2.5, dx, dy)
    np.testing.assert_allclose(dy.to_host(np.float64), 2.5 * x + 1.0)


def test_copies_larger_than_the_inline_limit_are_chunked(gpu):
    data = os.urandom(9 << 20)                   # > 2 × CRICKET_MAX_INLINE
    buf = gpu.to_device(data)
    assert hashlib.sha256(buf.to_host()).digest() == hashlib.sha256(data).digest()
    buf.free()


def test_memset_and_device_to_device_copy(gpu):
    a = gpu.alloc(64)
    a.memset(0x01020304, element_size=4)
    b = gpu.alloc(64)
    gpu.memcpy_dtod(b, a, 64)
    assert b.to_host() == bytes([4, 3, 2, 1]) * 16


def test_streams_and_events(gpu, fatbins):
    n = 2048
    x = np.arange(n, dtype=np.float32)
    dx, dy = gpu.to_device(x), gpu.alloc(x.nbytes)
    vadd = gpu.load_module(fatbins["vadd"]).get_function("vadd")
    stream = gpu.create_stream()
    start, end = gpu.create_event(), gpu.create_event()
    start.record(stream)
    vadd(n // 256, 256, dx, dx, dy, n, stream=stream)
    end.record(stream)
    end.synchronize()
    assert end.query() and stream.query()
    assert start.elapsed_time(end) >= 0.0
    np.testing.assert_array_equal(dy.to_host(np.float32, stream=stream), 2 * x)
    stream.destroy()
    with pytest.raises(CudaError) as info:
        stream.synchronize()
    assert info.value.code == curesult.INVALID_HANDLE


def test_bad_launch_is_refused_with_a_cuda_error(gpu, fatbins):
    vadd = gpu.load_module(fatbins["vadd"]).get_function("vadd")
    assert [(p.offset, p.size) for p in vadd.params] == [(0, 8), (8, 8), (16, 8), (24, 4)]
    with pytest.raises(CudaError) as info:
        vadd.launch(0, 256, [0, 0, 0, 1], sync=True)
    assert info.value.code == curesult.INVALID_VALUE
    with pytest.raises(CudaError) as info:
        gpu.load_module(fatbins["vadd"]).get_function("no_such_kernel")
    assert info.value.code == curesult.NOT_FOUND


def test_memory_info_and_error_strings(gpu):
    free, total = gpu.mem_get_info()
    assert 0 < free <= total
    assert "ILLEGAL_ADDRESS" in gpu.error_string(700)


def test_module_without_ptx_loads_and_its_launch_says_how_to_rebuild(gpu, tmp_path):
    import subprocess
    from pathlib import Path
    cubin = tmp_path / "vadd.cubin"
    src = Path(__file__).parent / "cuda" / "vadd.cu"
    subprocess.run(["nvcc", "-cubin", "-arch=sm_75", "-o", str(cubin), str(src)], check=True)
    vadd = gpu.load_module(cubin).get_function("vadd")
    assert [(p.offset, p.size) for p in vadd.params] == [(0, 8), (8, 8), (16, 8), (24, 4)]
    x = gpu.alloc(1024)
    with pytest.raises(CudaError) as info:
        vadd.launch(1, 256, [x, x, x, 256], sync=True)
    assert info.value.code == curesult.NO_BINARY_FOR_GPU
    assert "PTX" in info.value.message or "ptx" in info.value.message


def test_a_flood_of_asynchronous_launches_is_throttled_and_all_run(gpu, fatbins):
    from cricket.server.program import MAX_QUEUED
    n = 32
    one = gpu.to_device(np.ones(n, dtype=np.float32))
    acc = gpu.to_device(np.zeros(n, dtype=np.float32))
    vadd = gpu.load_module(fatbins["vadd"]).get_function("vadd")
    launches = 3 * MAX_QUEUED
    for _ in range(launches):
        vadd(1, n, one, acc, acc, n)
    np.testing.assert_array_equal(acc.to_host(np.float32), np.full(n, launches, dtype=np.float32))
    stats = gpu.session_stats()
    assert stats["queued"] <= 1 and stats["max_queued"] <= MAX_QUEUED + 2


@pytest.fixture(scope="module")
def host_programs(tmp_path_factory):
    """Host executables nvcc builds: vadd with a main, and a separate-compilation (-rdc) program."""
    import subprocess
    from pathlib import Path
    cuda = Path(__file__).parent / "cuda"
    out = tmp_path_factory.mktemp("host-programs")
    builds = {
        "vadd": ["nvcc", "-arch=sm_75", "-o", str(out / "vadd"), str(cuda / "vadd.cu"),
                 str(cuda / "host" / "host_main.cu")],
        "rdc": ["nvcc", "-rdc=true", "-arch=sm_75", "-o", str(out / "rdc"),
                str(cuda / "rdc" / "rdc_kernel.cu"), str(cuda / "rdc" / "rdc_lib.cu")],
    }
    for name, cmd in builds.items():
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    return {name: out / name for name in builds}


def test_kernel_loaded_from_a_host_executable(gpu, host_programs):
    vadd = gpu.load_module(host_programs["vadd"]).get_function("vadd")
    x = gpu.to_device(np.arange(300, dtype=np.float32))
    y = gpu.alloc(1200)
    vadd(2, 256, x, x, y, 300)
    np.testing.assert_array_equal(y.to_host(np.float32), 2 * np.arange(300, dtype=np.float32))


def test_separate_compilation_program_links_its_translation_units_on_the_server(gpu, host_programs):
    modules = gpu.load_binary(host_programs["rdc"])
    assert len(modules) == 1
    kernel = modules[0].get_function("add_one_twice")
    x = gpu.to_device(np.arange(100, dtype=np.float32))
    kernel(1, 128, x, 100)
    np.testing.assert_array_equal(x.to_host(np.float32), np.arange(100, dtype=np.float32) + 2)


def test_bad_requests_get_the_cuda_error_and_the_session_goes_on(gpu):
    with pytest.raises(CudaError) as info:
        gpu.alloc(1 << 50)
    assert info.value.code == curesult.OUT_OF_MEMORY
    buf = gpu.alloc(16)
    from cricket.protocol import gen
    too_big = gen.cr_dtoh_args(src=buf.device_ptr, size=gen.CRICKET_MAX_INLINE + 1, stream=0)
    res = gpu._stub.CR_MEMCPY_DTOH(too_big)                # more than one inline copy may carry
    assert res.status == curesult.INVALID_VALUE and "split larger copies" in res.message
    with pytest.raises(CudaError) as info:
        gpu.set_device(3)
    assert info.value.code == curesult.INVALID_DEVICE
    with pytest.raises(CudaError) as info:
        gpu.memset(buf, 0, 8, element_size=3)
    assert info.value.code == curesult.INVALID_VALUE
    buf.copy_from_host(b"fine")
    assert buf.to_host()[:4] == b"fine"


def test_device_reset_frees_the_session_and_clears_a_kernel_fault(emu_server, fatbins):
    with connect(emu_server.address) as gpu:
        p = gpu.alloc(16)
        gpu.create_stream()
        write_at = gpu.load_module(fatbins["misc"]).get_function("write_at")
        write_at(1, 1, p, 1 << 24, 7)
        with pytest.raises(CudaError):
            gpu.synchronize()
        with pytest.raises(CudaError) as info:          # the fault sticks, as in CUDA
            gpu.alloc(16)
        assert info.value.code == curesult.ILLEGAL_ADDRESS
        gpu.reset()
        stats = gpu.session_stats()
        assert stats["allocations"] == 0 and stats["modules"] == 0 and stats["streams"] == 0
        assert gpu.to_device(b"after reset").to_host() == b"after reset"
        with pytest.raises(CudaError) as info:
            p.to_host()
        assert info.value.code == curesult.INVALID_VALUE


def test_asyncio_client_runs_kernels_with_many_calls_in_flight(emu_server, fatbins):
    import asyncio
    from cricket.client import aio

    async def main():
        async with await aio.connect(emu_server.address) as conn:
            n = 512
            xs = [np.full(n, i, dtype=np.float32) for i in range(8)]
            ptrs = await asyncio.gather(*(conn.to_device(x) for x in xs))
            module = await conn.load_module(fatbins["vadd"])
            vadd = await conn.get_function(module, "vadd")
            for p in ptrs:
                await conn.launch(vadd, 2, 256, p, p, p, n)      # batched: no reply
            await conn.synchronize()
            results = await asyncio.gather(*(conn.to_host(p, 4 * n, np.float32) for p in ptrs))
            for i, r in enumerate(results):
                np.testing.assert_array_equal(r, np.full(n, 2 * i, dtype=np.float32))
    asyncio.run(main())


def test_asynchronous_memset_copy_and_stream_wait_then_module_unload(gpu, fatbins):
    a, b = gpu.alloc(64), gpu.alloc(64)
    s1, s2 = gpu.create_stream(), gpu.create_stream()
    done = gpu.create_event()
    a.memset(0x11, stream=s1, sync=False)
    done.record(s1)
    s2.wait_event(done)
    gpu.memcpy_dtod(b, a, 64, stream=s2, sync=False)
    assert b.to_host(stream=s2) == b"\x11" * 64
    module = gpu.load_module(fatbins["vadd"])
    vadd = module.get_function("vadd")
    module.unload()
    with pytest.raises(CudaError) as info:
        vadd.launch(1, 1, [a, a, b, 1], sync=True)
    assert info.value.code == curesult.INVALID_HANDLE
    assert gpu.session_stats()["functions"] == 0
