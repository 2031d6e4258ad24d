"""The cuda backend end to end: a `cricket server --backend cuda` process on a real GPU (skips elsewhere)."""
import numpy as np
import pytest

from cricket.client.api import connect

pytestmark = [pytest.mark.gpu, pytest.mark.nvcc]


def test_hello_reports_the_real_gpu(cuda_server):
    with connect(cuda_server.address) as gpu:
        assert gpu.backend == "cuda" and not gpu.emulated
        assert gpu.devices[0].total_memory > 1 << 30
        assert gpu.devices[0].compute_capability >= (7, 0)


def test_vector_add_and_tiled_matmul_on_the_gpu(cuda_server, fatbins):
    with connect(cuda_server.address) as gpu:
        n = 1 << 20
        a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
        da, dc = gpu.to_device(a), gpu.alloc(a.nbytes)
        vadd = gpu.load_module(fatbins["vadd"]).get_function("vadd")
        assert [(p.offset, p.size) for p in vadd.params] == [(0, 8), (8, 8), (16, 8), (24, 4)]
        vadd((n + 255) // 256, 256, da, da, dc, n)
        np.testing.assert_array_equal(dc.to_host(np.float32), 2 * a)
        m = 64
        A = np.random.default_rng(2).standard_normal((m, m)).astype(np.float32)
        dA, dC = gpu.to_device(A), gpu.alloc(A.nbytes)
        gpu.load_module(fatbins["matmul"]).get_function("matmul_tiled")((4, 4), (16, 16), dA, dA, dC, m)
        np.testing.assert_allclose(dC.to_host(np.float32, (m, m)), A @ A, rtol=1e-4, atol=1e-3)


def test_streams_events_globals_and_ptx_on_the_gpu(cuda_server, fatbins):
    from cricket.fatbin import Fatbin
    with connect(cuda_server.address) as gpu:
        module = gpu.load_module(fatbins["misc"])
        counter = module.get_global("counter")
        counter.copy_from_host(np.int32(0).tobytes())
        stream = gpu.create_stream()
        start, end = gpu.create_event(), gpu.create_event()
        start.record(stream)
        module.get_function("bump")(8, 128, 3, stream=stream)
        end.record(stream)
        end.synchronize()
        assert start.elapsed_time(end) >= 0.0
        assert int(counter.to_host(np.int32)[0]) == 8 * 128 * 3
        ptx = Fatbin.from_bytes(fatbins["vadd"].read_bytes()).ptx_sources()[0]
        vadd = gpu.load_module(ptx.encode()).get_function("vadd")      # JIT from PTX
        x = gpu.to_device(np.ones(256, dtype=np.float32))
        vadd(1, 256, x, x, x, 256)
        assert gpu.memcpy_dtoh(x, 8) == np.full(2, 2.0, dtype=np.float32).tobytes()


def test_isolated_sessions_keep_a_kernel_fault_to_themselves(start_server, fatbins):
    from cricket.cudafacts import curesult
    from cricket.client.api import CudaError
    server = start_server("--backend", "cuda=isolate")
    with connect(server.address) as faulty, connect(server.address) as other:
        p = faulty.alloc(16)
        faulty.load_module(fatbins["misc"]).get_function("write_at")(1, 1, p, 1 << 34, 7)
        with pytest.raises(CudaError) as info:
            faulty.synchronize()
        assert info.value.code in (curesult.ILLEGAL_ADDRESS, curesult.LAUNCH_FAILED)
        x = other.to_device(np.arange(256, dtype=np.float32))
        other.load_module(fatbins["vadd"]).get_function("vadd")(1, 256, x, x, x, 256)
        np.testing.assert_array_equal(x.to_host(np.float32), 2 * np.arange(256, dtype=np.float32))
